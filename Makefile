# ocp-capi — build, generate and test.
#
# Every tool is built from the Go module proxy by the modules under hack/tools.
# A tool binary is named after its pinned version (bin/<tool>-<version>) with a
# plain symlink beside it, so it is rebuilt only when the pin in hack/tools
# changes.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BIN := bin
TOOLS := $(ROOT)/hack/tools
export GOTOOLCHAIN := local
export PATH := $(ROOT)/bin:$(PATH)

# Pinned versions, read from the tools modules so that go.mod stays the only
# place a version is written.
modver = $(shell awk '($$1 == "$(2)" && $$2 ~ /^v/) {print $$2; exit} ($$1 == "require" && $$2 == "$(2)") {print $$3; exit}' $(1)/go.mod)
K8S_VERSION        := $(call modver,$(TOOLS)/kubernetes,k8s.io/kubernetes)
ETCD_VERSION       := $(call modver,$(TOOLS)/etcd,go.etcd.io/etcd/server/v3)
KUSTOMIZE_VERSION  := $(call modver,$(TOOLS)/kustomize,sigs.k8s.io/kustomize/kustomize/v5)
CONTROLLER_GEN_VERSION := $(call modver,$(TOOLS),sigs.k8s.io/controller-tools)
HELM_VERSION       := $(call modver,$(TOOLS),helm.sh/helm/v3)
CAPI_VERSION       := $(call modver,$(TOOLS),sigs.k8s.io/cluster-api)
GOLANGCI_LINT_VERSION := $(call modver,$(TOOLS)/golangci-lint,github.com/golangci/golangci-lint/v2)
DEADCODE_VERSION   := $(call modver,$(TOOLS)/deadcode,golang.org/x/tools)

$(foreach v,K8S_VERSION ETCD_VERSION KUSTOMIZE_VERSION CONTROLLER_GEN_VERSION HELM_VERSION CAPI_VERSION GOLANGCI_LINT_VERSION DEADCODE_VERSION,\
	$(if $($(v)),,$(error $(v) could not be read from the go.mod files under hack/tools)))

K8S_MINOR := $(word 2,$(subst ., ,$(K8S_VERSION)))
CAPI_MINOR := $(word 2,$(subst ., ,$(CAPI_VERSION)))

# Version stamps: a build from a module has no git tree to read them from.
K8S_LDFLAGS := -s -w $(foreach p,k8s.io/client-go/pkg/version k8s.io/component-base/version,\
	-X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=$(K8S_MINOR) -X $(p).gitTreeState=clean)
CAPI_LDFLAGS := -s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$(CAPI_VERSION) \
	-X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=$(CAPI_MINOR) \
	-X sigs.k8s.io/cluster-api/version.gitTreeState=clean
GOBUILD_TOOL := CGO_ENABLED=0 go build -trimpath

# The binaries the API server tests need (envtest's layout: kube-apiserver, etcd, kubectl).
TEST_TOOLS := $(BIN)/kube-apiserver $(BIN)/etcd $(BIN)/kubectl $(BIN)/kustomize $(BIN)/helm $(BIN)/clusterctl $(BIN)/capi-manager
# Every tool needed to generate, check, test and package.
ALL_TOOLS := $(TEST_TOOLS) $(BIN)/controller-gen $(BIN)/kustomize $(BIN)/helm $(BIN)/clusterctl $(BIN)/capi-manager \
	$(BIN)/golangci-lint $(BIN)/deadcode

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
MANAGERS := bootstrap-manager controlplane-manager infrastructure-manager addon-manager
# go test's own 10-minute default is a hang guard, not a budget: the real
# OpenStack suite alone runs about 10 minutes under -race on 2 cores
# (docs/testing.md), so the guard is set above it.
GO_TEST_FLAGS ?= -race -count=1 -timeout 30m
# Integration tests start their own API server; the packages run one at a time
# on small machines so that several API servers do not compete for 2 cores.
GO_TEST_PARALLEL ?= 2
MGMT_DIR ?= $(ROOT)/.mgmt
MGMT_KUBECONFIG ?= $(MGMT_DIR)/kubeconfig
UPSTREAM_CRDS ?= $(if $(wildcard $(ROOT)/../shared/upstream-crds),$(abspath $(ROOT)/../shared/upstream-crds),none)
# The Go modules of the tree: the product, and the e2e suites with their
# helpers (a module of their own so that the CAPI test framework, kind and
# ginkgo stay out of the product's go.mod).
E2E_MODULE := test/e2e
GO_MODULES := . $(E2E_MODULE)
# Build tags that select test files, per module: lint and the dead-code check
# see every test.
LINT_TAGS := images
E2E_LINT_TAGS := e2e

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools (built from the Go module proxy)

.PHONY: tools test-tools
tools: $(ALL_TOOLS) ## Build every tool into bin/.
test-tools: $(TEST_TOOLS) ## Build the tools the tests use (kube-apiserver, etcd, kubectl, kustomize, helm, clusterctl, the CAPI core manager).

# kube-apiserver and kubectl come from one go build so they share the compile.
$(BIN)/kube-apiserver-$(K8S_VERSION) $(BIN)/kubectl-$(K8S_VERSION) &: $(TOOLS)/kubernetes/go.mod
	@mkdir -p $(BIN)/.k8s-$(K8S_VERSION)
	cd $(TOOLS)/kubernetes && $(GOBUILD_TOOL) -tags=selinux,notest,grpcnotrace -ldflags "$(K8S_LDFLAGS)" \
		-o $(ROOT)/$(BIN)/.k8s-$(K8S_VERSION)/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
	mv $(BIN)/.k8s-$(K8S_VERSION)/kube-apiserver $(BIN)/kube-apiserver-$(K8S_VERSION)
	mv $(BIN)/.k8s-$(K8S_VERSION)/kubectl $(BIN)/kubectl-$(K8S_VERSION)
	rmdir $(BIN)/.k8s-$(K8S_VERSION)

# The rest of a Kubernetes node, for the full local management cluster.
K8S_NODE_CMDS := kube-controller-manager kube-scheduler kubelet kube-proxy
$(foreach c,$(K8S_NODE_CMDS),$(BIN)/$(c)-$(K8S_VERSION)) &: $(TOOLS)/kubernetes/go.mod
	@mkdir -p $(BIN)/.k8s-node-$(K8S_VERSION)
	cd $(TOOLS)/kubernetes && $(GOBUILD_TOOL) -tags=selinux,notest,grpcnotrace -ldflags "$(K8S_LDFLAGS)" \
		-o $(ROOT)/$(BIN)/.k8s-node-$(K8S_VERSION)/ $(foreach c,$(K8S_NODE_CMDS),k8s.io/kubernetes/cmd/$(c))
	$(foreach c,$(K8S_NODE_CMDS),mv $(BIN)/.k8s-node-$(K8S_VERSION)/$(c) $(BIN)/$(c)-$(K8S_VERSION);)
	rmdir $(BIN)/.k8s-node-$(K8S_VERSION)

$(BIN)/etcd-$(ETCD_VERSION): $(TOOLS)/etcd/go.mod
	cd $(TOOLS)/etcd && $(GOBUILD_TOOL) -ldflags "-s -w" -o $(ROOT)/$@ go.etcd.io/etcd/server/v3

$(BIN)/kustomize-$(KUSTOMIZE_VERSION): $(TOOLS)/kustomize/go.mod
	cd $(TOOLS)/kustomize && $(GOBUILD_TOOL) -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$(KUSTOMIZE_VERSION)" \
		-o $(ROOT)/$@ sigs.k8s.io/kustomize/kustomize/v5

$(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION): $(TOOLS)/go.mod
	cd $(TOOLS) && $(GOBUILD_TOOL) -ldflags "-s -w -X sigs.k8s.io/controller-tools/pkg/version.version=$(CONTROLLER_GEN_VERSION)" \
		-o $(ROOT)/$@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(BIN)/helm-$(HELM_VERSION): $(TOOLS)/go.mod
	cd $(TOOLS) && $(GOBUILD_TOOL) -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)" \
		-o $(ROOT)/$@ helm.sh/helm/v3/cmd/helm

$(BIN)/clusterctl-$(CAPI_VERSION): $(TOOLS)/go.mod
	cd $(TOOLS) && $(GOBUILD_TOOL) -ldflags "$(CAPI_LDFLAGS)" -o $(ROOT)/$@ sigs.k8s.io/cluster-api/cmd/clusterctl

$(BIN)/capi-manager-$(CAPI_VERSION): $(TOOLS)/go.mod
	cd $(TOOLS) && $(GOBUILD_TOOL) -ldflags "$(CAPI_LDFLAGS)" -o $(ROOT)/$@ sigs.k8s.io/cluster-api/core

# imgbuild has no upstream version; its module's go.sum pins what it builds from.
$(BIN)/imgbuild: $(TOOLS)/imgbuild/go.mod $(TOOLS)/imgbuild/main.go
	cd $(TOOLS)/imgbuild && $(GOBUILD_TOOL) -ldflags "-s -w" -o $(ROOT)/$@ .

$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION): $(TOOLS)/golangci-lint/go.mod
	cd $(TOOLS)/golangci-lint && $(GOBUILD_TOOL) -ldflags "-s -w -X main.version=$(GOLANGCI_LINT_VERSION)" \
		-o $(ROOT)/$@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# deadcode prints no version of its own; the binary's name carries the
# golang.org/x/tools release it was built from.
$(BIN)/deadcode-$(DEADCODE_VERSION): $(TOOLS)/deadcode/go.mod
	cd $(TOOLS)/deadcode && $(GOBUILD_TOOL) -ldflags "-s -w" -o $(ROOT)/$@ golang.org/x/tools/cmd/deadcode

# bin/<tool> -> bin/<tool>-<version>. The link is remade whenever the
# versioned binary is newer, so switching pins back and forth needs no rebuild.
$(BIN)/kube-apiserver: $(BIN)/kube-apiserver-$(K8S_VERSION)
$(BIN)/kubectl: $(BIN)/kubectl-$(K8S_VERSION)
$(BIN)/etcd: $(BIN)/etcd-$(ETCD_VERSION)
$(BIN)/kustomize: $(BIN)/kustomize-$(KUSTOMIZE_VERSION)
$(BIN)/controller-gen: $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
$(BIN)/helm: $(BIN)/helm-$(HELM_VERSION)
$(BIN)/clusterctl: $(BIN)/clusterctl-$(CAPI_VERSION)
$(BIN)/capi-manager: $(BIN)/capi-manager-$(CAPI_VERSION)
$(BIN)/golangci-lint: $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
$(BIN)/deadcode: $(BIN)/deadcode-$(DEADCODE_VERSION)
$(foreach c,$(K8S_NODE_CMDS),$(eval $(BIN)/$(c): $(BIN)/$(c)-$(K8S_VERSION)))
$(BIN)/kube-apiserver $(BIN)/kubectl $(BIN)/etcd $(BIN)/kustomize $(BIN)/controller-gen $(BIN)/helm \
$(BIN)/clusterctl $(BIN)/capi-manager $(BIN)/golangci-lint $(BIN)/deadcode $(foreach c,$(K8S_NODE_CMDS),$(BIN)/$(c)):
	ln -sfn $(notdir $<) $@

# Larger features keep their targets in their own files (local cluster, images, e2e).
include $(sort $(wildcard hack/make/*.mk))

##@ Code generation

# Deepcopy for every API package; CRDs split by the provider that serves them;
# the consumed APIs' CRDs go to the test environment only.
.PHONY: generate
generate: $(BIN)/controller-gen ## Generate deepcopy, CRDs, RBAC and webhook manifests.
	hack/generate.sh

.PHONY: verify-generate
verify-generate: $(BIN)/controller-gen ## Fail if any generated file is stale (runs generate in a scratch copy).
	hack/verify-generate.sh

##@ Release

.PHONY: release charts
release: $(BIN)/kustomize $(BIN)/helm ## Write out/: clusterctl local repository (CAPI core + our providers) and packaged charts. VERSION, IMAGE_REGISTRY, IMAGE_TAG, CERT_MANAGER_URL.
	hack/release.sh release

charts: $(BIN)/kustomize $(BIN)/helm ## Regenerate charts/ and the kustomize CRD lists (after make generate or a kustomize change).
	hack/release.sh charts

##@ Build

.PHONY: build
build: $(addprefix $(BIN)/,$(MANAGERS)) ## Build the four managers into bin/.

.PHONY: $(addprefix $(BIN)/,$(MANAGERS))
$(addprefix $(BIN)/,$(MANAGERS)):
	go build -trimpath -ldflags "-X github.com/ocp-capi/ocp-capi/internal/manager.Version=$(VERSION)" -o $(ROOT)/$@ ./cmd/$(notdir $@)

$(BIN)/mgmt: FORCE
	go build -o $(ROOT)/$@ ./test/cmd/mgmt

.PHONY: FORCE
FORCE:

##@ Test

# The OpenStack provider's suite needs the local OpenStack (root, Debian
# packages). CI starts it; elsewhere the suite runs when /etc/openstack/clouds.yaml
# exists (make openstack-up) and says loudly that it was skipped otherwise.
OPENSTACK_TESTS ?= $(if $(CI),1,)

GO_TEST_ENV = KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) \
	OCP_CAPI_OPENSTACK_CLOUDS=$(or $(OCP_CAPI_OPENSTACK_CLOUDS),$(wildcard /etc/openstack/clouds.yaml))

.PHONY: test
test: verify-generate verify-tidy lint deadcode test-tools ## Verify generated code, lint, tidy go.mod files and no dead code, then run unit and integration tests (-race); CI also starts the local OpenStack.
ifeq ($(OPENSTACK_TESTS),1)
	bash hack/openstack/up.sh
endif
	@# -json + testsummary: one line per test that ran, every skip with its
	@# reason, full output of failures.
	@# The e2e module's packages without the e2e tag (the helpers' unit
	@# tests) run too; both modules run even when the first fails.
	{ rc=0; $(GO_TEST_ENV) go test -json $(GO_TEST_FLAGS) -p $(GO_TEST_PARALLEL) ./... || rc=$$?; \
		$(GO_TEST_ENV) go -C $(E2E_MODULE) test -json $(GO_TEST_FLAGS) -p $(GO_TEST_PARALLEL) ./... || rc=$$?; \
		exit $$rc; } | go run ./hack/testsummary
ifneq ($(CI),)
	@# CI also runs every e2e suite (about 8.5 min here; docs/e2e.md): the
	@# release and images were built above for the install test.
	$(MAKE) --no-print-directory test-e2e E2E_RELEASE=0
endif

.PHONY: lint
lint: $(BIN)/golangci-lint ## go vet, gofmt and golangci-lint (built from the proxy) over both modules.
	go vet -tags $(LINT_TAGS) ./...
	go -C $(E2E_MODULE) vet -tags $(E2E_LINT_TAGS) ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@# --allow-serial-runners: wait for another golangci-lint on this
	@# machine instead of failing.
	$(BIN)/golangci-lint run --allow-serial-runners --build-tags $(LINT_TAGS) ./...
	cd $(E2E_MODULE) && $(ROOT)/$(BIN)/golangci-lint run --allow-serial-runners --config $(ROOT)/.golangci.yml \
		--build-tags $(E2E_LINT_TAGS) ./...

.PHONY: verify-tidy
verify-tidy: ## Fail if go.mod or go.sum of a module (the product, test/e2e) is not what go mod tidy writes.
	@for m in $(GO_MODULES); do \
		go -C $$m mod tidy -diff || { echo "$$m: go.mod/go.sum are not tidy: run 'go mod tidy' in $$m" >&2; exit 1; }; \
	done

.PHONY: deadcode
deadcode: $(BIN)/deadcode ## Fail if a function that no command, test or e2e suite reaches is left (generated code aside).
	hack/deadcode.sh

##@ Local OpenStack (Debian packages on loopback; needs root)

.PHONY: openstack-up openstack-down openstack-smoke test-openstack
openstack-up: ## Install (first time) and start the local OpenStack; writes /etc/openstack/clouds.yaml.
	bash hack/openstack/up.sh
openstack-down: ## Stop the local OpenStack (add ARGS=--purge to wipe its state).
	bash hack/openstack/down.sh $(ARGS)
openstack-smoke: ## Exercise the local OpenStack with the openstack CLI (~5 min).
	bash hack/openstack/smoke.sh
test-openstack: test-tools ## The OpenStack provider's suite against the local OpenStack (starts it first).
	bash hack/openstack/up.sh
	KUBEBUILDER_ASSETS=$(ROOT)/$(BIN) OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) OCP_CAPI_OPENSTACK_CLOUDS=/etc/openstack/clouds.yaml \
		go test $(GO_TEST_FLAGS) ./test/openstackproxy/ ./test/integration/openstack/

.PHONY: clean
clean: ## Remove build outputs (keeps the versioned tools).
	rm -f $(addprefix $(BIN)/,$(MANAGERS)) $(BIN)/mgmt
	rm -rf out
