# The local management cluster's node size (test/localnode, `mgmt up --size
# node`): Debian packages, the rest of the Kubernetes binaries, CoreDNS, and
# the node's own images. See docs/local-cluster.md.

##@ Local management cluster, node size (needs root)

# What the node size runs besides bin/: kept equal to
# test/localnode.DebianPackages (a test checks it).
NODE_DEB_PACKAGES := containerd runc containernetworking-plugins socat iptables conntrack iproute2 util-linux

COREDNS_VERSION := $(call modver,$(TOOLS)/coredns,github.com/coredns/coredns)
$(if $(COREDNS_VERSION),,$(error COREDNS_VERSION could not be read from hack/tools/coredns/go.mod))

# The node's images, imported into containerd by `mgmt up --size node`. The
# pause image's tag becomes containerd's sandbox_image and CoreDNS's the
# Deployment's image: mgmt reads both from the tarballs.
NODE_IMAGES_DIR ?= $(BIN)/images
PAUSE_IMAGE ?= ocp-capi.local/pause:v1
COREDNS_IMAGE ?= ocp-capi.local/coredns:$(COREDNS_VERSION)

.PHONY: node-deps node-tools node-images node-prereqs
node-deps: ## Install the node size's Debian packages (containerd, runc, CNI plugins, socat, iptables, conntrack) with apt-get; needs root when any is missing.
	@missing=$$(for p in $(NODE_DEB_PACKAGES); do \
		[ "$$(dpkg-query -W -f='$${Status}' $$p 2>/dev/null)" = "install ok installed" ] || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "node-deps: all installed ($(NODE_DEB_PACKAGES))"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "node-deps: needs root to install: $$missing (run: sudo make node-deps)"; exit 1; fi; \
	echo "node-deps: installing $$missing"; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }

node-tools: $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kubectl $(foreach c,$(K8S_NODE_CMDS),$(BIN)/$(c)) ## Build the node size's Kubernetes binaries and etcd (about 5 min cold on 2 cores).

node-images: $(NODE_IMAGES_DIR)/pause.tar $(NODE_IMAGES_DIR)/coredns.tar ## Build the pause and CoreDNS images into $(NODE_IMAGES_DIR) (bin/imgbuild).

# Everything `mgmt up --size node` needs that make can build or install.
node-prereqs: node-deps node-tools node-images

$(BIN)/coredns-$(COREDNS_VERSION): $(TOOLS)/coredns/go.mod
	cd $(TOOLS)/coredns && $(GOBUILD_TOOL) -ldflags "-s -w" -o $(ROOT)/$@ github.com/coredns/coredns

$(BIN)/coredns: $(BIN)/coredns-$(COREDNS_VERSION)
	ln -sfn $(notdir $<) $@

$(BIN)/pause: test/images/pause/main.go
	$(GOBUILD_TOOL) -ldflags "-s -w" -o $(ROOT)/$@ ./test/images/pause

# The recipes depend on the tag too, so changing it rebuilds the tarball.
$(NODE_IMAGES_DIR)/pause.tar: $(BIN)/pause $(BIN)/imgbuild hack/make/node.mk
	@mkdir -p $(dir $@)
	$(BIN)/imgbuild --out $@ --tag $(PAUSE_IMAGE) --entrypoint /pause --file $(BIN)/pause:/pause

$(NODE_IMAGES_DIR)/coredns.tar: $(BIN)/coredns-$(COREDNS_VERSION) $(BIN)/imgbuild hack/make/node.mk
	@mkdir -p $(dir $@)
	$(BIN)/imgbuild --out $@ --tag $(COREDNS_IMAGE) --entrypoint /coredns --file $(BIN)/coredns-$(COREDNS_VERSION):/coredns

# CI runs the node size's test (test/cmd/mgmt), which fails rather than
# skips there when something is missing: give it everything first.
ifneq ($(CI),)
test: node-prereqs
endif
