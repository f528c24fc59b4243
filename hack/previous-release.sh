#!/usr/bin/env bash
# The previous release of our providers, built from a recorded commit of this
# repository's own history, for the upgrade e2e suite (clusterctl init of it,
# then clusterctl upgrade apply to this tree's release; docs/e2e.md).
#
#   hack/previous-release.sh   (make previous-release) write $PREVIOUS_OUT:
#       <provider-label>/$PREVIOUS_VERSION/...   that commit's own `hack/release.sh release`
#       images/<manager>.tar                      its four managers' images, tagged
#                                                 $IMAGE_REGISTRY/<manager>:$PREVIOUS_VERSION
#       COMMIT                                    the commit they were built from
#
# The commit must be in the clone (a plain `git clone` keeps the whole
# history). If it is not: under CI (CI set) the script fails; elsewhere it
# writes the reason to $PREVIOUS_OUT/SKIPPED, which the suite reports as its
# skip reason.
#
# Only the release's files and images come from the old tree; the tools
# (kustomize, helm, imgbuild) are this tree's bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# v0.1.0, the first release of series 0.1: the tree as of "release:
# metadata.yaml lists every release series; the e2e follows VERSION"
# (2026-11-26). The API versions are the same as this tree's; this tree
# adds one CRD (OpenStackFloatingIPPool, v1alpha1).
PREVIOUS_COMMIT=444ea45ece412e5e8023c5cbce7142a09d68e448
PREVIOUS_VERSION=v0.1.0

PREVIOUS_OUT=${PREVIOUS_OUT:-$ROOT/out/previous}
IMAGE_REGISTRY=${IMAGE_REGISTRY:-ocp-capi.local}
export GOTOOLCHAIN=local

die() { echo "previous-release: $*" >&2; exit 1; }

if [ -f "$PREVIOUS_OUT/COMMIT" ] && [ "$(cat "$PREVIOUS_OUT/COMMIT")" = "$PREVIOUS_COMMIT $PREVIOUS_VERSION" ]; then
  echo "previous-release: $PREVIOUS_OUT already holds $PREVIOUS_VERSION from $PREVIOUS_COMMIT"
  exit 0
fi
rm -rf "$PREVIOUS_OUT"
mkdir -p "$PREVIOUS_OUT"

if ! git cat-file -e "$PREVIOUS_COMMIT^{commit}" 2>/dev/null; then
  reason="commit $PREVIOUS_COMMIT (release $PREVIOUS_VERSION) is not in this clone (a shallow clone?): the upgrade suite needs the repository's history"
  [ -z "${CI:-}" ] || die "$reason"
  echo "$reason" > "$PREVIOUS_OUT/SKIPPED"
  echo "previous-release: WARNING: $reason; the upgrade suite will skip" >&2
  exit 0
fi

src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$PREVIOUS_COMMIT" | tar -x -C "$src"

# Its own release script (its charts check is its CI's business).
(cd "$src" && VERSION=$PREVIOUS_VERSION OUT=$PREVIOUS_OUT IMAGE_REGISTRY=$IMAGE_REGISTRY \
  KUSTOMIZE=$ROOT/bin/kustomize HELM=$ROOT/bin/helm RELEASE_SKIP_CHARTS_CHECK=1 CERT_MANAGER_LOCAL=0 \
  hack/release.sh release > "$PREVIOUS_OUT/release.log" 2>&1) || { cat "$PREVIOUS_OUT/release.log" >&2; die "hack/release.sh of $PREVIOUS_COMMIT failed"; }

# Its managers' images, made as `make images` makes this tree's: a static
# binary stamped with the version, one layer, /manager, UID 65532.
mkdir -p "$PREVIOUS_OUT/images" "$src/.bin"
for d in "$src"/cmd/*/; do
  m=$(basename "$d")
  (cd "$src" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath \
    -ldflags "-s -w -X github.com/ocp-capi/ocp-capi/internal/manager.Version=$PREVIOUS_VERSION" -o ".bin/$m" "./cmd/$m") ||
    die "building cmd/$m of $PREVIOUS_COMMIT failed"
  "$ROOT/bin/imgbuild" --out "$PREVIOUS_OUT/images/$m.tar" --tag "$IMAGE_REGISTRY/$m:$PREVIOUS_VERSION" --entrypoint /manager \
    --user 65532:65532 --file "$src/.bin/$m:/manager:0755" --label org.opencontainers.image.version="$PREVIOUS_VERSION"
done
echo "$PREVIOUS_COMMIT $PREVIOUS_VERSION" > "$PREVIOUS_OUT/COMMIT"
echo "previous-release: wrote $PREVIOUS_VERSION from $PREVIOUS_COMMIT into $PREVIOUS_OUT"
