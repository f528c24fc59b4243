#!/bin/bash
# Runs in the build Job's pod (image: --builder-image). It builds the layered
# OS image with buildah (daemonless, unprivileged, vfs storage, chroot
# isolation), pushes it, and writes the pushed image's digest as the
# container's termination message, where the BuildController reads it. The
# pod needs no access to the API server, so its service account token is not
# mounted.
#
# Environment: TAG (registry/org/repo:tag to push), CONTEXT (the build
# context, holding machineconfig/Containerfile and
# machineconfig/machineconfig.json.gz), PULL_AUTH and PUSH_AUTH (the
# .dockerconfigjson files of the pull and push secrets).
set -euo pipefail

# A ConfigMap volume holds symbolic links into a hidden directory: copy the
# files themselves into a build context of plain files.
mkdir -p /tmp/context/machineconfig
cp -L "$CONTEXT"/machineconfig/Containerfile "$CONTEXT"/machineconfig/machineconfig.json.gz /tmp/context/machineconfig/

buildah bud --storage-driver vfs --isolation chroot \
	--authfile "$PULL_AUTH" \
	--file /tmp/context/machineconfig/Containerfile \
	--tag "$TAG" \
	/tmp/context

buildah push --storage-driver vfs \
	--authfile "$PUSH_AUTH" \
	--digestfile /tmp/digest \
	"$TAG" "docker://$TAG"

# The termination message is at most 4 KiB; a digest is 71 bytes.
cat /tmp/digest > /dev/termination-log
