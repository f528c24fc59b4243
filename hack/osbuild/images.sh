#!/bin/bash
# Builds the two images of on-cluster OS image builds as docker-archive
# tarballs, from files of Debian packages installed on this machine, with
# buildah itself (daemonless, root, vfs storage in a scratch directory):
#
#   $OUT/builder.tar  the Job backend's builder: /usr/bin/buildah and the
#                     shared libraries it links (found with ldd), newuidmap
#                     and newgidmap (file capabilities), bash, cat, cp and mkdir
#                     for the build script, /etc/containers (policy.json,
#                     registries.conf, storage.conf with the vfs driver) and
#                     the user "build" (1000:1000). Tag $BUILDER_TAG.
#   $OUT/base.tar     a small base "OS" image: busybox-static and its applets,
#                     /etc/os-release. Tag $BASE_TAG. The e2e pushes it to the
#                     local registry as the base image layered pools build on.
#
# Usage: hack/osbuild/images.sh OUT_DIR   (root; packages: hack/make/osbuild.mk)
set -euo pipefail

out=${1:?usage: images.sh OUT_DIR}
BUILDER_TAG=${BUILDER_TAG:-ocp-capi.local/os-builder:v1}
BASE_TAG=${BASE_TAG:-ocp-capi.local/os-base:v1}
mkdir -p "$out"
work=$(mktemp -d /var/tmp/osbuild-images.XXXXXX)
cleanup() {
	buildah "${store[@]}" rm --all >/dev/null 2>&1 || true
	umount -R "$work/storage" 2>/dev/null || true
	rm -rf "$work"
}
store=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
trap cleanup EXIT

# copy_with_libs ROOTFS BINARY...: each binary at its path, and every shared
# library ldd names at the path ldd gives (the file the link resolves to,
# under the link's name).
copy_with_libs() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		install -D -m 0755 "$(readlink -f "$f")" "$root$f"
		for lib in $(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
			[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
		done
	done
}

# image ROOTFS TAG TARBALL USER ENTRYPOINT [ENV...]
image() {
	local root=$1 tag=$2 tarball=$3 user=$4 entrypoint=$5 c e
	shift 5
	tar --numeric-owner --sort=name --mtime=@0 --xattrs --xattrs-include=security.capability -C "$root" -cf "$work/layer.tar" .
	c=$(buildah "${store[@]}" from scratch)
	buildah "${store[@]}" add "$c" "$work/layer.tar" / >/dev/null
	local cfg=(--user "$user" --workingdir / --os linux --arch amd64 --label "org.opencontainers.image.source=ocp-capi hack/osbuild/images.sh")
	[ -n "$entrypoint" ] && cfg+=(--entrypoint "[\"$entrypoint\"]")
	for e in "$@"; do cfg+=(--env "$e"); done
	buildah "${store[@]}" config "${cfg[@]}" "$c"
	buildah "${store[@]}" commit --quiet --format docker --timestamp 0 --rm "$c" "$tag" >/dev/null
	rm -f "$tarball"
	buildah "${store[@]}" push --quiet "$tag" "docker-archive:$tarball:$tag"
	echo "built $tarball ($tag, $(stat -c %s "$tarball") bytes)"
}

# --- builder ------------------------------------------------------------------
b=$work/builder
copy_with_libs "$b" /usr/bin/buildah /bin/bash /bin/cat /bin/cp /bin/mkdir /usr/bin/newuidmap /usr/bin/newgidmap
# newuidmap/newgidmap (package uidmap) map the subordinate IDs of
# /etc/subuid into buildah's user namespace. File capabilities, not
# set-user-ID root: the helper must keep the build user's UID, which owns the
# new user namespace, because a pod has no CAP_SYS_ADMIN; CAP_SETUID and
# CAP_SETGID are in the runtime's default set, so the pod adds none.
setcap cap_setuid+ep "$b/usr/bin/newuidmap"
setcap cap_setgid+ep "$b/usr/bin/newgidmap"
mkdir -p "$b/etc/containers" "$b/usr/share/containers" "$b/tmp" "$b/var/tmp" "$b/home/build" "$b/dev" "$b/proc" "$b/sys"
chmod 1777 "$b/tmp" "$b/var/tmp"
cp /etc/containers/policy.json "$b/etc/containers/policy.json"
cp /usr/share/containers/containers.conf "$b/usr/share/containers/containers.conf"
# Fully qualified names only: no short-name resolution or prompts.
cat > "$b/etc/containers/registries.conf" <<'CONF'
unqualified-search-registries = []
short-name-mode = "disabled"
CONF
# vfs: no overlay or fuse-overlayfs, so no /dev/fuse and no mount rights.
# Explicit roots: a pod has no XDG_RUNTIME_DIR, without which buildah finds
# no run root and refuses to start. The graph root is the pod's emptyDir.
cat > "$b/etc/containers/storage.conf" <<'CONF'
[storage]
driver = "vfs"
runroot = "/tmp/containers-run"
graphroot = "/home/build/.local/share/containers/storage"
CONF
printf 'root:x:0:0:root:/root:/bin/bash\nbuild:x:1000:1000:build:/home/build:/bin/bash\n' > "$b/etc/passwd"
printf 'root:x:0:\nbuild:x:1000:\n' > "$b/etc/group"
# One subordinate range for the build user: buildah maps the image's users
# into it when it runs unprivileged in a user namespace.
echo 'build:100000:65536' > "$b/etc/subuid"
echo 'build:100000:65536' > "$b/etc/subgid"
chown 1000:1000 "$b/home/build"
image "$b" "$BUILDER_TAG" "$out/builder.tar" 1000:1000 "" \
	PATH=/usr/bin:/bin HOME=/home/build BUILDAH_ISOLATION=chroot STORAGE_DRIVER=vfs

# --- base OS image ---------------------------------------------------------------
r=$work/base
install -D -m 0755 /bin/busybox "$r/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
done
mkdir -p "$r/etc" "$r/tmp" "$r/usr/lib" "$r/var/tmp"
chmod 1777 "$r/tmp" "$r/var/tmp"
printf 'NAME="ocp-capi test OS"\nID=ocp-capi-test\nVERSION_ID=1\n' > "$r/usr/lib/os-release"
ln -s ../usr/lib/os-release "$r/etc/os-release"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$r/etc/passwd"
printf 'root:x:0:\n' > "$r/etc/group"
image "$r" "$BASE_TAG" "$out/base.tar" 0:0 "" PATH=/usr/bin:/bin
