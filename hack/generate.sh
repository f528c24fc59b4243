#!/usr/bin/env bash
# Runs every code generator of the project. `make generate` calls it in the
# work tree; hack/verify-generate.sh calls it in a scratch copy and diffs.
set -euo pipefail
cd "$(dirname "$0")/.."
CG=${CONTROLLER_GEN:-$PWD/bin/controller-gen}
HEADER=hack/boilerplate.go.txt

# has_go DIR: true when DIR holds at least one Go package.
has_go() { [ -d "$1" ] && [ -n "$(find "$1" -name '*.go' -print -quit)" ]; }

# Deepcopy for our APIs and for the consumed (mirrored) APIs.
obj_paths=()
for d in api internal/consumed; do has_go "$d" && obj_paths+=("paths=./$d/...") || true; done
[ ${#obj_paths[@]} -eq 0 ] || "$CG" object:headerFile="$HEADER" "${obj_paths[@]}"

# crds API_DIR OUT_DIR: CRDs of one API tree into one directory, replacing
# whatever was there so that a removed kind leaves no stale file.
crds() {
  local api=$1 out=$2
  has_go "$api" || return 0
  rm -rf "$out" && mkdir -p "$out"
  "$CG" crd:allowDangerousTypes=false paths="./$api/..." output:crd:artifacts:config="$out"
}

# rbac NAME OUT_DIR PATH...: one ClusterRole from the markers under PATHs.
# internal/manager holds the markers every manager needs (leases, events).
rbac() {
  local name=$1 out=$2; shift 2
  local p=(paths=./internal/manager/...)
  for d in "$@"; do has_go "$d" && p+=("paths=./$d/...") || true; done
  mkdir -p "$out"
  "$CG" rbac:roleName="$name" "${p[@]}" output:rbac:artifacts:config="$out"
}

# webhook OUT_DIR PATH...: webhook configurations from markers, if any.
webhook() {
  local out=$1; shift
  local p=()
  for d in "$@"; do has_go "$d" && p+=("paths=./$d/...") || true; done
  rm -f "$out/manifests.yaml"
  [ ${#p[@]} -eq 0 ] && return 0
  mkdir -p "$out"
  "$CG" webhook "${p[@]}" output:webhook:artifacts:config="$out"
  # controller-gen writes nothing when there are no markers; keep the tree clean.
  rmdir "$out" 2>/dev/null || true
}

# Our served APIs, one CRD directory per provider.
crds api/infrastructure internal/openstack/config/crd/bases
crds api/bootstrap bootstrap/config/crd/bases
crds api/controlplane controlplane/config/crd/bases

# Consumed APIs: CRDs for the test environment only, never released.
crds internal/consumed test/crds/consumed

rbac infrastructure-manager-role internal/openstack/config/rbac internal/openstack
rbac bootstrap-manager-role bootstrap/config/rbac bootstrap/controllers
rbac controlplane-manager-role controlplane/config/rbac controlplane/controllers
rbac addon-manager-role internal/addon/config/rbac internal/addon

webhook internal/openstack/config/webhook internal/openstack/webhooks
webhook bootstrap/config/webhook bootstrap/webhooks
webhook controlplane/config/webhook controlplane/webhooks
