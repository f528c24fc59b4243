##@ Fuzzing

# Native Go fuzzing of the pure parsers and conversions (hack/fuzz.sh).

FUZZTIME ?= 10m
FUZZ_PARALLEL ?= 1
FUZZ ?= .
FUZZ_SAVE ?=

.PHONY: fuzz
fuzz: ## Run every Go fuzz target in turn, FUZZTIME each (default 10m); FUZZ=regexp picks targets, FUZZ_PARALLEL workers (1), FUZZ_SAVE=1 copies the grown corpus to testdata/fuzz. docs/reliability.md.
	FUZZTIME=$(FUZZTIME) FUZZ_PARALLEL=$(FUZZ_PARALLEL) FUZZ='$(FUZZ)' FUZZ_SAVE=$(FUZZ_SAVE) hack/fuzz.sh
