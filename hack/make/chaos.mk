##@ Chaos

# Bounded storm scenarios against the local OpenStack (docs/reliability.md,
# Storms). Each stops by itself; all traffic stays on this machine. Each
# scenario appends its row to CHAOS_RESULTS (test/chaos); the target prints
# one table of them (hack/chaostable), which fails the run when a scenario
# failed or wrote no row. The full log goes to CHAOS_ARTIFACTS.

CHAOS_ARTIFACTS ?= $(ROOT)/_artifacts/chaos
CHAOS_RESULTS = $(CHAOS_ARTIFACTS)/results.jsonl
CHAOS_TIMEOUT ?= 90m
CHAOS_SCENARIOS = fault storm,kill storm,kill storm (bootstrap and control plane),API-server faults
CHAOS_TESTS = ^(TestFaultStorm|TestKillStorm|TestKillStormBootstrapControlPlane|TestAPIServerFaults)$$
# The packages of the scenarios, run one after the other: the OpenStack
# provider's, and the managers' (the kill storm of the bootstrap and
# control-plane managers, which needs no OpenStack). One scenario alone:
# set all three, e.g.
#   make chaos CHAOS_SCENARIOS='kill storm (bootstrap and control plane)' \
#     CHAOS_TESTS='^TestKillStormBootstrapControlPlane$$' CHAOS_PACKAGES=./test/managers/
CHAOS_PACKAGES = ./test/integration/openstack/ ./test/managers/

.PHONY: chaos
chaos: test-tools ## Storm scenarios against the local OpenStack (starts it): fault storm (10% 429/503/dropped), kill storms (100+ SIGKILLs of the infrastructure manager; 100+ of the bootstrap and control-plane managers), API-server faults; prints one summary table. OCP_CAPI_TEST_SEED replays one. docs/reliability.md.
	bash hack/openstack/up.sh
	@mkdir -p $(CHAOS_ARTIFACTS); rm -f $(CHAOS_RESULTS); rc=0; \
	KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) OCP_CAPI_OPENSTACK_CLOUDS=/etc/openstack/clouds.yaml \
		OCP_CAPI_CHAOS=1 OCP_CAPI_CHAOS_RESULTS=$(CHAOS_RESULTS) \
		go test -p 1 -count=1 -v -timeout $(CHAOS_TIMEOUT) -run '$(CHAOS_TESTS)' $(CHAOS_PACKAGES) \
		> $(CHAOS_ARTIFACTS)/chaos.log 2>&1 || rc=$$?; \
	if [ $$rc -ne 0 ]; then grep -E -e '--- FAIL|_test.go:[0-9]+:.*(Expected|Error|FAIL|left|duplicate)' $(CHAOS_ARTIFACTS)/chaos.log | tail -40; fi; \
	echo; echo "CHAOS SUMMARY (full log: $(CHAOS_ARTIFACTS)/chaos.log)"; \
	go run ./hack/chaostable -results $(CHAOS_RESULTS) -expect '$(CHAOS_SCENARIOS)' || rc=1; \
	exit $$rc
