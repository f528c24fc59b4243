# End-to-end suites (test/e2e, on sigs.k8s.io/cluster-api/test/framework; a Go
# module of its own, so its go commands run with `go -C test/e2e`) and the
# quickstart. Both need root: the local management cluster's node size and
# the local OpenStack install Debian packages and make network namespaces.
# See docs/e2e.md.

##@ End-to-end tests and quickstart (need root)

# The e2e suites use their own management clusters (instances of `mgmt up
# --size node`, index 0..255), so that a cluster started with `make mgmt-up`
# (instance 0) is left alone: E2E_MGMT_INSTANCE is the one the providers are
# installed on (clusterctl init) for most suites, E2E_MGMT2_INSTANCE the Helm
# suite's (helm install, no clusterctl inventory), E2E_MGMT3_INSTANCE the
# target of the move suite's `clusterctl move` (clusterctl init by that
# suite), E2E_MGMT4_INSTANCE the upgrade suite's (the previous release,
# then clusterctl upgrade apply). Ginkgo orders the suites at random, so the
# Helm, move and upgrade suites get one each. (14 is taken by the quickstart
# measurements in docs/e2e.md.)
E2E_MGMT_INSTANCE ?= 12
E2E_MGMT2_INSTANCE ?= 13
E2E_MGMT3_INSTANCE ?= 15
E2E_MGMT4_INSTANCE ?= 16
e2e_mgmt_dir = $(if $(filter 0,$(1)),$(ROOT)/.mgmt,$(ROOT)/.mgmt-$(1))
E2E_MGMT_DIR := $(call e2e_mgmt_dir,$(E2E_MGMT_INSTANCE))
E2E_MGMT2_DIR := $(call e2e_mgmt_dir,$(E2E_MGMT2_INSTANCE))
E2E_MGMT3_DIR := $(call e2e_mgmt_dir,$(E2E_MGMT3_INSTANCE))
E2E_MGMT4_DIR := $(call e2e_mgmt_dir,$(E2E_MGMT4_INSTANCE))
# Host ports every e2e node forwards into its network namespace: the local
# OpenStack's APIs, the API server that plays the workload cluster (pods
# reach it through the Service workload-api.default), and one
# assisted-service simulator's HTTPS server per management cluster (all run
# in the test process). The same list for every node: after `clusterctl
# move`, the target's pods reach the same workload API server.
E2E_WORKLOAD_API_PORT ?= 16443
E2E_ASSISTED_PORT ?= 16444
E2E_ASSISTED_PORT_2 ?= 16445
E2E_ASSISTED_PORT_3 ?= 16446
E2E_ASSISTED_PORT_4 ?= 16448
# The BuildController suite's registry (hack/osbuild/registry.sh, started by
# the suite): builds in pods push to it at the node IP.
E2E_REGISTRY_PORT ?= 16447
# The migration suite's counting proxy in front of the local OpenStack
# (test/openstackproxy): one listener per OpenStack port, at that port plus
# 20000 (proxyPortOffset in test/e2e/migration_test.go).
E2E_OPENSTACK_PROXY_PORTS := 25000,28774,28776,28778,29292,29696,29876
# The opt-in scale suite (make test-e2e-scale): one workload API server per
# cluster made at once, each behind its own Service (workload-api-<port>).
E2E_SCALE_WORKLOAD_PORTS ?= 16460,16461,16462,16463,16464
# How many 1 + 1 clusters the scale suite makes at once; 0 skips it.
E2E_SCALE_CLUSTERS ?= 0
E2E_FORWARD_PORTS := 5000,8774,8776,8778,9292,9696,9876,$(E2E_WORKLOAD_API_PORT),$(E2E_ASSISTED_PORT),$(E2E_ASSISTED_PORT_2),$(E2E_ASSISTED_PORT_3),$(E2E_ASSISTED_PORT_4),$(E2E_REGISTRY_PORT),$(E2E_OPENSTACK_PROXY_PORTS),$(E2E_SCALE_WORKLOAD_PORTS)
E2E_ARTIFACTS ?= $(ROOT)/_artifacts/e2e
E2E_RELEASE_DIR ?= $(ROOT)/out
# E2E_RELEASE=0 uses E2E_RELEASE_DIR as it is (no make release / make images).
E2E_RELEASE ?= 1
# The version of our providers the suites install: the one make release and
# make images build (VERSION when given, else hack/release.sh's default).
E2E_RELEASE_VERSION ?= $(IMAGE_VERSION)
# The previous release, which the upgrade suite installs and upgrades from
# (make previous-release; hack/previous-release.sh records its commit).
E2E_PREVIOUS_DIR ?= $(E2E_RELEASE_DIR)/previous
# Ginkgo focus/skip regular expressions, e.g. E2E_FOCUS='Quick start'.
E2E_FOCUS ?=
E2E_SKIP ?=
E2E_TIMEOUT ?= 90m
# E2E_KEEP=1 leaves the e2e management clusters running after the suites.
E2E_KEEP ?=
E2E_GO_TEST_FLAGS ?= -count=1 -v

.PHONY: previous-release
previous-release: $(BIN)/kustomize $(BIN)/helm $(BIN)/imgbuild ## Build the previous release (a recorded commit's release files and manager images) into E2E_PREVIOUS_DIR, for the upgrade e2e suite.
	PREVIOUS_OUT=$(abspath $(E2E_PREVIOUS_DIR)) IMAGE_REGISTRY=$(IMAGE_REGISTRY) hack/previous-release.sh

.PHONY: test-e2e test-e2e-scale e2e-mgmt-up e2e-mgmt-down e2e-prereqs
e2e-prereqs: test-tools node-prereqs $(BIN)/mgmt $(BIN)/clusterctl $(BIN)/imgbuild $(if $(filter 1,$(E2E_RELEASE)),release images) previous-release

e2e-mgmt-up: e2e-prereqs ## Start the e2e management clusters (E2E_MGMT_INSTANCE, E2E_MGMT2_INSTANCE, E2E_MGMT3_INSTANCE, E2E_MGMT4_INSTANCE) with the forwards the suites need.
	$(MAKE) --no-print-directory mgmt-up MGMT_SIZE=node MGMT_INSTANCE=$(E2E_MGMT_INSTANCE) MGMT_DIR=$(E2E_MGMT_DIR) \
		MGMT_KUBECONFIG=$(E2E_MGMT_DIR)/kubeconfig MGMT_ARGS='--forward-host-ports $(E2E_FORWARD_PORTS)'
	$(MAKE) --no-print-directory mgmt-up MGMT_SIZE=node MGMT_INSTANCE=$(E2E_MGMT2_INSTANCE) MGMT_DIR=$(E2E_MGMT2_DIR) \
		MGMT_KUBECONFIG=$(E2E_MGMT2_DIR)/kubeconfig MGMT_ARGS='--forward-host-ports $(E2E_FORWARD_PORTS)'
	$(MAKE) --no-print-directory mgmt-up MGMT_SIZE=node MGMT_INSTANCE=$(E2E_MGMT3_INSTANCE) MGMT_DIR=$(E2E_MGMT3_DIR) \
		MGMT_KUBECONFIG=$(E2E_MGMT3_DIR)/kubeconfig MGMT_ARGS='--forward-host-ports $(E2E_FORWARD_PORTS)'
	$(MAKE) --no-print-directory mgmt-up MGMT_SIZE=node MGMT_INSTANCE=$(E2E_MGMT4_INSTANCE) MGMT_DIR=$(E2E_MGMT4_DIR) \
		MGMT_KUBECONFIG=$(E2E_MGMT4_DIR)/kubeconfig MGMT_ARGS='--forward-host-ports $(E2E_FORWARD_PORTS)'

e2e-mgmt-down: $(BIN)/mgmt ## Stop the e2e management clusters and remove their state.
	$(BIN)/mgmt down --state-dir $(E2E_MGMT_DIR)
	$(BIN)/mgmt down --state-dir $(E2E_MGMT2_DIR)
	$(BIN)/mgmt down --state-dir $(E2E_MGMT3_DIR)
	$(BIN)/mgmt down --state-dir $(E2E_MGMT4_DIR)

test-e2e: e2e-prereqs ## Run the e2e suites: local OpenStack, four node management clusters, release, then go test -tags e2e in test/e2e (E2E_FOCUS, E2E_KEEP=1).
	bash hack/openstack/up.sh
	$(MAKE) --no-print-directory e2e-mgmt-up E2E_RELEASE=0
	@rc=0; KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) \
		E2E_WORKLOAD_API_PORT=$(E2E_WORKLOAD_API_PORT) E2E_ASSISTED_PORT=$(E2E_ASSISTED_PORT) E2E_ASSISTED_PORT_2=$(E2E_ASSISTED_PORT_2) E2E_ASSISTED_PORT_3=$(E2E_ASSISTED_PORT_3) E2E_ASSISTED_PORT_4=$(E2E_ASSISTED_PORT_4) \
		E2E_REGISTRY_PORT=$(E2E_REGISTRY_PORT) E2E_SCALE_WORKLOAD_PORTS=$(E2E_SCALE_WORKLOAD_PORTS) \
		go -C $(E2E_MODULE) test -tags e2e $(E2E_GO_TEST_FLAGS) -timeout $(E2E_TIMEOUT) . -args \
		-e2e.release-dir=$(abspath $(E2E_RELEASE_DIR)) -e2e.release-version=$(E2E_RELEASE_VERSION) -e2e.artifacts-folder=$(E2E_ARTIFACTS) \
		-e2e.mgmt-kubeconfig=$(E2E_MGMT_DIR)/kubeconfig -e2e.mgmt2-kubeconfig=$(E2E_MGMT2_DIR)/kubeconfig \
		-e2e.mgmt3-kubeconfig=$(E2E_MGMT3_DIR)/kubeconfig -e2e.mgmt4-kubeconfig=$(E2E_MGMT4_DIR)/kubeconfig \
		-e2e.previous-release-dir=$(abspath $(E2E_PREVIOUS_DIR)) \
		-e2e.clouds-yaml=/etc/openstack/clouds.yaml -e2e.scale-clusters=$(E2E_SCALE_CLUSTERS) \
		$(if $(E2E_FOCUS),'-ginkgo.focus=$(E2E_FOCUS)') $(if $(E2E_SKIP),'-ginkgo.skip=$(E2E_SKIP)') \
		-ginkgo.v -ginkgo.timeout=$(E2E_TIMEOUT) || rc=$$?; \
	if [ -z "$(E2E_KEEP)" ]; then $(MAKE) --no-print-directory e2e-mgmt-down; \
	else echo "test-e2e: E2E_KEEP set: management clusters left running ($(E2E_MGMT_DIR), $(E2E_MGMT2_DIR), $(E2E_MGMT3_DIR), $(E2E_MGMT4_DIR)); make e2e-mgmt-down stops them"; fi; \
	exit $$rc

# Not part of test-e2e (nor CI): the scale suite alone, 5 clusters at once.
test-e2e-scale: ## Run the opt-in scale e2e suite alone: 5 clusters of 1 control plane + 1 worker made and deleted at once, OpenStack calls per machine (docs/e2e.md).
	$(MAKE) --no-print-directory test-e2e E2E_FOCUS='Scale, openstack-agent' E2E_SCALE_CLUSTERS=5

.PHONY: quickstart
quickstart: ## The quickstart (root): tools, local management cluster and OpenStack, clusterctl init, a 3+2 openstack-agent cluster, printed with clusterctl describe until Available.
	bash hack/quickstart.sh
