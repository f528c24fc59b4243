##@ Benchmarks

# Scale figures for docs/reliability.md (Scale). Not part of make test:
# each takes minutes and reports figures, not verdicts on time or memory.

BENCH_ARTIFACTS ?= $(ROOT)/_artifacts/bench
BENCH_SCALE_OBJECTS ?= 10000

.PHONY: bench-scale
bench-scale: test-tools ## Each manager's resident memory (VmRSS, VmHWM) with BENCH_SCALE_OBJECTS (10,000) objects of each kind it watches, and Secrets and ConfigMaps; docs/reliability.md, Scale.
	@mkdir -p $(BENCH_ARTIFACTS); rc=0; \
	KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) OCP_CAPI_SCALE=$(BENCH_SCALE_OBJECTS) \
		go test -count=1 -v -timeout 90m -run '^TestScaleMemory$$' ./test/managers/ \
		> $(BENCH_ARTIFACTS)/scale.log 2>&1 || rc=$$?; \
	grep -E 'created [0-9]+ objects|SCALE |--- (PASS|FAIL)' $(BENCH_ARTIFACTS)/scale.log; \
	echo "bench-scale: full log: $(BENCH_ARTIFACTS)/scale.log"; exit $$rc

