##@ Benchmarks

# Scale figures for docs/reliability.md (Scale). Not part of make test:
# each takes minutes and reports figures, not verdicts on time or memory
# (bench-audit's verdicts are on counts: writes and OpenStack calls).

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


.PHONY: bench-audit
bench-audit: test-tools ## Steady-state audits: the OpenStack provider against the local OpenStack (starts it; a cluster with 3 control-plane machines and a bastion), then the bootstrap and control-plane providers (3+2 Machines, the simulator), then the add-on (a MAPI MachineSet and Machine in sync) and its BuildController (a pool whose MachineOSConfig's build succeeded); over two sync periods of settled objects, API writes (the audit log) and OpenStack calls (the proxy); fails on any write or on calls over the documented figures. docs/reliability.md, Steady-state audit.
	bash hack/openstack/up.sh
	@mkdir -p $(BENCH_ARTIFACTS); rc=0; \
	KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) OCP_CAPI_OPENSTACK_CLOUDS=/etc/openstack/clouds.yaml \
		OCP_CAPI_AUDIT=1 go test -p 1 -count=1 -v -timeout 30m -run '^(TestSteadyStateAudit|TestBuildSteadyStateAudit)$$' ./test/integration/openstack/ ./controlplane/controllers/ ./internal/addon/controllers/ \
		> $(BENCH_ARTIFACTS)/audit.log 2>&1 || rc=$$?; \
	sed -n '/^STEADY-STATE AUDIT$$/,/^$$/p' $(BENCH_ARTIFACTS)/audit.log; grep -E -e '--- (PASS|FAIL)|_test.go:[0-9]+:.*(Expected|Error|FAIL)' $(BENCH_ARTIFACTS)/audit.log; \
	echo "bench-audit: full log: $(BENCH_ARTIFACTS)/audit.log"; exit $$rc
