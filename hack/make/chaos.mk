##@ Chaos

# Bounded storm scenarios against the local OpenStack (docs/reliability.md,
# Storms). Each stops by itself; all traffic stays on this machine. Today:
# the fault storm at the OpenStack proxy (TestFaultStorm in
# test/integration/openstack). The full log goes to CHAOS_ARTIFACTS; the
# summary table is printed.

CHAOS_ARTIFACTS ?= $(ROOT)/_artifacts/chaos
CHAOS_TIMEOUT ?= 60m

.PHONY: chaos
chaos: test-tools ## Storm scenarios against the local OpenStack (starts it), printing a summary table; today the fault storm (10% 429/503/dropped connections). OCP_CAPI_TEST_SEED replays one. docs/reliability.md.
	bash hack/openstack/up.sh
	@mkdir -p $(CHAOS_ARTIFACTS); rc=0; \
	KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) OCP_CAPI_OPENSTACK_CLOUDS=/etc/openstack/clouds.yaml \
		OCP_CAPI_CHAOS=1 go test -count=1 -v -timeout $(CHAOS_TIMEOUT) -run '^TestFaultStorm$$' ./test/integration/openstack/ \
		> $(CHAOS_ARTIFACTS)/fault-storm.log 2>&1 || rc=$$?; \
	sed -n '/^FAULT STORM SUMMARY/,/^extra calls/p' $(CHAOS_ARTIFACTS)/fault-storm.log; \
	if [ $$rc -ne 0 ]; then grep -E -e '--- FAIL|_test.go:[0-9]+:' $(CHAOS_ARTIFACTS)/fault-storm.log | tail -40; \
		echo "chaos: the fault storm failed (rc $$rc); full log: $(CHAOS_ARTIFACTS)/fault-storm.log"; \
	else echo "chaos: full log: $(CHAOS_ARTIFACTS)/fault-storm.log"; fi; \
	exit $$rc
