# The local management cluster (test/cmd/mgmt), in two sizes: MGMT_SIZE=apiserver
# (default: etcd + kube-apiserver with all CRDs) or MGMT_SIZE=node (a real
# single-node cluster where pods run; needs root). See docs/local-cluster.md.

##@ Local management cluster

MGMT_SIZE ?= apiserver
# MGMT_INSTANCE=n runs another node-size instance beside the first (own
# subnets, API port 6443+n, state dir .mgmt-n).
MGMT_INSTANCE ?= 0
# Extra flags for `mgmt up`, e.g. MGMT_ARGS='--forward-host-ports 5000,8774 --crds consumed'.
MGMT_ARGS ?=
ifeq ($(origin MGMT_DIR),file)
ifneq ($(MGMT_INSTANCE),0)
MGMT_DIR := $(ROOT)/.mgmt-$(MGMT_INSTANCE)
endif
endif

.PHONY: mgmt-up mgmt-down mgmt-status
mgmt-up: test-tools $(BIN)/mgmt $(if $(filter node,$(MGMT_SIZE)),node-prereqs) ## Start the local management cluster (MGMT_SIZE=apiserver|node); kubeconfig at $(MGMT_KUBECONFIG).
	$(BIN)/mgmt up --size $(MGMT_SIZE) --state-dir $(MGMT_DIR) --kubeconfig $(MGMT_KUBECONFIG) --bin-dir $(BIN) --upstream-crds $(UPSTREAM_CRDS) \
		$(if $(filter node,$(MGMT_SIZE)),--instance $(MGMT_INSTANCE)) $(MGMT_ARGS)

mgmt-down: $(BIN)/mgmt ## Stop the local management cluster and remove its state (ARGS=--keep-data keeps it for a warm start).
	$(BIN)/mgmt down --state-dir $(MGMT_DIR) $(ARGS)

mgmt-status: $(BIN)/mgmt ## Print whether the local management cluster runs.
	$(BIN)/mgmt status --state-dir $(MGMT_DIR)
