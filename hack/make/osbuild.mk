# On-cluster OS image builds (docs/addon/build-controller.md, "A real build"):
# the Debian packages the builder image is assembled from and the local
# registry runs on, the builder and base images, and the local registry.

##@ OS image builds (need root)

# buildah, uidmap and libcap2-bin (setcap) go into the builder image;
# busybox-static into the base OS image; docker-registry (the distribution
# v2 registry), openssl and apache2-utils (htpasswd) run the local registry;
# skopeo pushes the base image into it.
OSBUILD_DEB_PACKAGES := buildah uidmap libcap2-bin busybox-static docker-registry openssl apache2-utils skopeo curl
OSBUILD_IMAGES_DIR ?= out/images/osbuild
OSBUILD_REGISTRY_DIR ?= $(ROOT)/.registry
OSBUILD_REGISTRY_PORT ?= 16447

.PHONY: osbuild-deps osbuild-images registry-up registry-down
osbuild-deps: ## Install the Debian packages of the builder and base images and of the local registry (root).
	@missing=$$(for p in $(OSBUILD_DEB_PACKAGES); do \
		[ "$$(dpkg-query -W -f='$${Status}' $$p 2>/dev/null)" = "install ok installed" ] || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "osbuild-deps: all installed ($(OSBUILD_DEB_PACKAGES))"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "osbuild-deps: needs root to install: $$missing (run: sudo make osbuild-deps)"; exit 1; fi; \
	echo "osbuild-deps: installing $$missing"; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }

osbuild-images: $(OSBUILD_IMAGES_DIR)/builder.tar ## Build the buildah builder image and the base OS image into out/images/osbuild (root; hack/osbuild/images.sh).

# Rebuilt when the script or an installed package changes.
$(OSBUILD_IMAGES_DIR)/builder.tar $(OSBUILD_IMAGES_DIR)/base.tar &: hack/osbuild/images.sh $(wildcard /var/lib/dpkg/status) | osbuild-deps
	bash hack/osbuild/images.sh $(OSBUILD_IMAGES_DIR)

registry-up: osbuild-deps ## Start the local registry (TLS, basic auth) on 127.0.0.1:$(OSBUILD_REGISTRY_PORT), state in .registry.
	bash hack/osbuild/registry.sh up $(OSBUILD_REGISTRY_DIR) $(OSBUILD_REGISTRY_PORT) $(REGISTRY_NAMES)

registry-down: ## Stop the local registry and remove .registry.
	bash hack/osbuild/registry.sh down $(OSBUILD_REGISTRY_DIR)

# The e2e's BuildController suite builds for real with these images.
e2e-prereqs: osbuild-images
