# The live install test (test/install): on its own node-size cluster, it
# installs out/ with `clusterctl init` and with `helm install`, checks that
# every controller runs as a pod and every webhook is served, and that
# `clusterctl delete` and `helm uninstall` leave nothing of ours. It needs
# root, the node size's prerequisites, `make release` and `make images`;
# see docs/install.md.

##@ Install test (needs root)

.PHONY: test-install
test-install: test-tools node-prereqs release images ## Install the release with clusterctl and with Helm on a node-size cluster of its own, then uninstall (about 3 min).
	OCP_CAPI_UPSTREAM_CRDS=$(UPSTREAM_CRDS) go test -count=1 -v -timeout 20m ./test/install/

# CI runs it within `make test`, where it fails rather than skips when
# something is missing: build the release and its images first (node.mk adds
# node-prereqs).
ifneq ($(CI),)
test: release images
endif
