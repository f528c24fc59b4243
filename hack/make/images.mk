# Images for the local cluster, without a registry: every image a pod of
# `clusterctl init --config out/clusterctl.yaml` (or of our Helm charts) needs,
# written as a docker-archive tarball into out/images, which
# `ctr -n k8s.io images import` loads into containerd. Pods find them by tag
# (imagePullPolicy IfNotPresent), so the tags are exactly the references the
# release manifests and chart defaults name:
#
#   our four managers   $(IMAGE_REGISTRY)/<manager>:$(IMAGE_TAG)   (as hack/release.sh names them)
#   CAPI core           $(IMAGE_REGISTRY)/cluster-api-controller:<CAPI version>
#   cert-manager        quay.io/jetstack/cert-manager-<cmd>:<version>  (the chart's defaults)
#
# Each image is one layer holding a static binary (and cert-manager's
# licence), built by bin/imgbuild; it is rebuilt only when its binary, its tag
# or its layout changed, and unchanged inputs give the same digest.

##@ Images (docker-archive tarballs for the local cluster; no registry)

IMAGES_DIR ?= out/images

# The release's image names: the defaults are read from hack/release.sh, so
# that `make release` and `make images` agree without repeating them. The
# Makefile's own VERSION (git describe) stamps `make build`; it counts here
# only when given on the command line or in the environment, as for release.
RELEASE_DEFAULT_VERSION := $(shell sed -n 's/^DEFAULT_VERSION=//p' hack/release.sh)
RELEASE_DEFAULT_REGISTRY := $(shell sed -n 's/^DEFAULT_REGISTRY=//p' hack/release.sh)
IMAGE_VERSION := $(if $(filter environment command line,$(origin VERSION)),$(VERSION),$(RELEASE_DEFAULT_VERSION))
IMAGE_REGISTRY ?= $(RELEASE_DEFAULT_REGISTRY)
IMAGE_TAG ?= $(IMAGE_VERSION)
$(if $(and $(IMAGE_VERSION),$(IMAGE_REGISTRY)),,$(error DEFAULT_VERSION/DEFAULT_REGISTRY could not be read from hack/release.sh))

# cert-manager: the newest release the module proxy serves whole
# (hack/tools/cert-manager). CM_ rather than CERT_MANAGER_: release.sh reads
# CERT_MANAGER_VERSION from the environment for another purpose.
CM_TOOLS := $(TOOLS)/cert-manager
CM_VERSION := $(call modver,$(CM_TOOLS),github.com/cert-manager/cert-manager)
$(if $(CM_VERSION),,$(error the cert-manager version could not be read from $(CM_TOOLS)/go.mod))
CM_CMDS := controller cainjector webhook acmesolver
CM_PKG := github.com/cert-manager/cert-manager
# The upstream images' layout: /app/cmd/<cmd>/<cmd>, user 1000.
CM_USER := 1000

# Our managers: whatever cmd/* exists (all four are released).
IMAGE_MANAGERS := $(patsubst cmd/%/main.go,%,$(wildcard cmd/*/main.go))
IMAGE_BIN := $(BIN)/image
MANAGER_IMAGE_LDFLAGS := -s -w -X github.com/ocp-capi/ocp-capi/internal/manager.Version=$(IMAGE_TAG)

# --- binaries ------------------------------------------------------------------

.PHONY: cert-manager-tools
cert-manager-tools: $(foreach c,$(CM_CMDS),$(BIN)/cert-manager-$(c)) ## Build cert-manager's controller, cainjector, webhook and acmesolver into bin/.

# One go build for the four commands: they share nearly all their packages.
# The commit comes from the proxy's .info file of the release (empty if the
# proxy does not record it).
$(foreach c,$(CM_CMDS),$(BIN)/cert-manager-$(c)-$(CM_VERSION)) &: $(CM_TOOLS)/go.mod
	@mkdir -p $(BIN)/.cert-manager-$(CM_VERSION)
	cd $(CM_TOOLS) && info=$$(go mod download -json $(CM_PKG) | sed -n 's/^[[:space:]]*"Info": "\(.*\)",$$/\1/p') && \
		commit=$$(sed -n 's/.*"Hash":"\([0-9a-f]*\)".*/\1/p' "$$info") && \
		$(GOBUILD_TOOL) -ldflags "-s -w -X $(CM_PKG)/pkg/util.AppVersion=$(CM_VERSION) -X $(CM_PKG)/pkg/util.AppGitCommit=$$commit" \
			-o $(ROOT)/$(BIN)/.cert-manager-$(CM_VERSION)/ $(foreach c,$(CM_CMDS),$(CM_PKG)/cmd/$(c))
	$(foreach c,$(CM_CMDS),mv $(BIN)/.cert-manager-$(CM_VERSION)/$(c) $(BIN)/cert-manager-$(c)-$(CM_VERSION);)
	rmdir $(BIN)/.cert-manager-$(CM_VERSION)

$(foreach c,$(CM_CMDS),$(eval $(BIN)/cert-manager-$(c): $(BIN)/cert-manager-$(c)-$(CM_VERSION)))
$(foreach c,$(CM_CMDS),$(BIN)/cert-manager-$(c)):
	ln -sfn $(notdir $<) $@

# The managers as they run in a pod: static (no libc in the image), stamped
# with the image tag. go build runs every time (it is quick when nothing
# changed, but always touches its output), so it writes to .build/ and the
# binary the image is made from is replaced only when its bytes differ.
$(addprefix $(IMAGE_BIN)/,$(IMAGE_MANAGERS)): $(IMAGE_BIN)/%: FORCE
	@mkdir -p $(IMAGE_BIN)/.build
	@CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "$(MANAGER_IMAGE_LDFLAGS)" \
		-o $(IMAGE_BIN)/.build/$* ./cmd/$* || { echo "images: building cmd/$* failed (image $*)" >&2; exit 1; }
	@cmp -s $(IMAGE_BIN)/.build/$* $@ || { cp $(IMAGE_BIN)/.build/$* $@.tmp && mv $@.tmp $@ && echo "built $@"; }

# --- images --------------------------------------------------------------------

# IMAGE_<name>: binary|tag|entrypoint|user|extra --file arguments
$(foreach m,$(IMAGE_MANAGERS),$(eval IMAGE_$(m) := $(IMAGE_BIN)/$(m)|$(IMAGE_REGISTRY)/$(m):$(IMAGE_TAG)|/manager|65532:65532|))
IMAGE_cluster-api-controller := $(BIN)/capi-manager-$(CAPI_VERSION)|$(IMAGE_REGISTRY)/cluster-api-controller:$(CAPI_VERSION)|/manager|65532:65532|
$(foreach c,$(CM_CMDS),$(eval IMAGE_cert-manager-$(c) := $(BIN)/cert-manager-$(c)-$(CM_VERSION)|quay.io/jetstack/cert-manager-$(c):$(CM_VERSION)|/app/cmd/$(c)/$(c)|$(CM_USER)|licence))

IMAGE_NAMES := $(IMAGE_MANAGERS) cluster-api-controller $(addprefix cert-manager-,$(CM_CMDS))
image_field = $(word $(2),$(subst |, ,$(IMAGE_$(1))))
IMAGE_TARS := $(foreach n,$(IMAGE_NAMES),$(IMAGES_DIR)/$(n).tar)

.PHONY: images images-list
images: $(IMAGES_DIR)/images.txt ## Build every image the release needs into out/images/<name>.tar (+ images.txt). IMAGE_REGISTRY, IMAGE_TAG, VERSION as for release.

images-list: ## Print the image references `make images` builds.
	@$(foreach n,$(IMAGE_NAMES),echo "$(call image_field,$(n),2)";)

# A tarball depends on its description, kept in a file that is rewritten only
# when it changes, so a new tag or layout rebuilds the image and nothing else.
$(IMAGES_DIR)/.%.spec: FORCE
	@mkdir -p $(@D)
	@echo '$(IMAGE_$*)' | cmp -s - $@ || echo '$(IMAGE_$*)' > $@

$(foreach n,$(IMAGE_NAMES),$(eval $(IMAGES_DIR)/$(n).tar: $(call image_field,$(n),1) $(IMAGES_DIR)/.$(n).spec $(BIN)/imgbuild))

$(IMAGE_TARS): $(IMAGES_DIR)/%.tar:
	@set -e; extra=(); \
	if [ "$(call image_field,$*,5)" = licence ]; then \
		dir=$$(cd $(CM_TOOLS) && go list -m -f '{{.Dir}}' $(CM_PKG)); \
		extra=(--file "$$dir/LICENSE:/licenses/LICENSE:0644"); \
	fi; \
	$(BIN)/imgbuild --out $@ --tag "$(call image_field,$*,2)" --entrypoint "$(call image_field,$*,3)" \
		--user "$(call image_field,$*,4)" --file "$<:$(call image_field,$*,3):0755" "$${extra[@]}" \
		--label org.opencontainers.image.version="$(lastword $(subst :, ,$(call image_field,$*,2)))"

# images.txt: tag, image ID and tarball size of every image. The ID is the
# digest of the image's config, which stays the same through `ctr images
# import` (crictl shows it); the manifest digest does not, because containerd
# writes its own manifest for a docker archive.
$(IMAGES_DIR)/images.txt: $(IMAGE_TARS)
	@{ echo "# tag image-id size-bytes   (make images; load with: ctr -n k8s.io images import <name>.tar)"; \
	  for n in $(IMAGE_NAMES); do \
	    m=$$(tar -xOf $(IMAGES_DIR)/$$n.tar manifest.json); \
	    echo "$$(echo "$$m" | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p') $$(echo "$$m" | sed -n 's/.*"Config":"\([^"]*\)".*/\1/p') $$(stat -c %s $(IMAGES_DIR)/$$n.tar)"; \
	  done; } > $@.tmp
	@mv $@.tmp $@
	@cat $@

.PHONY: test-images
test-images: release images ## Check out/images against the release: every referenced image built, with its tag, platform, user and entrypoint.
	go test -tags images $(GO_TEST_FLAGS) ./test/images/
