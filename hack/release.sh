#!/usr/bin/env bash
# Release artifacts, built from this tree only (no registry, no network
# beyond the Go module proxy for CAPI core's kustomize tree).
#
#   hack/release.sh [release]   (make release) write $OUT as a clusterctl local repository:
#       $OUT/<provider-label>/<VERSION>/{<type>-components.yaml,metadata.yaml}
#       $OUT/infrastructure-openstack/<VERSION>/{cluster-template-*.yaml,clusterclass-*.yaml}  (from templates/)
#       $OUT/cluster-api/<CAPI version>/{core-components.yaml,metadata.yaml}  (CAPI core, from the module cache)
#       $OUT/addon-openshift/<VERSION>/build-rbac.yaml  (apply after clusterctl init; see docs/install.md)
#       $OUT/cert-manager/<version>/cert-manager.yaml  (cert-manager for clusterctl, from hack/tools/cert-manager)
#       $OUT/clusterctl.yaml  (clusterctl --config: the providers above, cert-manager and image settings)
#       ($OUT/images, written by make images, is kept.)
#       $OUT/charts/*.tgz + index.yaml  (the Helm charts, packaged for VERSION)
#   hack/release.sh charts      (make charts) rewrite the CRD lists of the kustomize trees from
#       the generated CRDs and regenerate charts/ from the kustomize output.
#   hack/release.sh check       fail if `charts` would change anything (run by release).
#
# Every provider's metadata.yaml lists the release series recorded in the
# root metadata.yaml, plus VERSION's series when it is a new one.
#
# Variables: VERSION (v0.2.0), IMAGE_REGISTRY (ocp-capi.local), IMAGE_TAG ($VERSION),
# OUT (out), CERT_MANAGER_URL / CERT_MANAGER_VERSION (unset: the local cert-manager rendered by
# hack/tools/cert-manager/render.sh, or clusterctl's default download if that fails or
# CERT_MANAGER_LOCAL=0).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# The version the tree's kustomizations and charts/ are written for.
DEFAULT_VERSION=v0.2.0
DEFAULT_REGISTRY=ocp-capi.local

VERSION=${VERSION:-$DEFAULT_VERSION}
IMAGE_REGISTRY=${IMAGE_REGISTRY:-$DEFAULT_REGISTRY}
IMAGE_TAG=${IMAGE_TAG:-$VERSION}
OUT=${OUT:-$ROOT/out}
KUSTOMIZE=${KUSTOMIZE:-$ROOT/bin/kustomize}
HELM=${HELM:-$ROOT/bin/helm}
export GOTOOLCHAIN=local

# The providers: key|kustomize dir|clusterctl type|clusterctl name|provider label|components file|
# chart|variable prefix|namespace|image name|umbrella alias|in the umbrella by default|description
PROVIDERS="
infrastructure|internal/openstack/config|InfrastructureProvider|openstack|infrastructure-openstack|infrastructure-components.yaml|ocp-capi-infrastructure-openstack|OCP_CAPI_INFRASTRUCTURE_|ocp-capi-infrastructure-system|infrastructure-manager|infrastructure|enabled|Cluster API infrastructure provider for OpenStack (OpenStackCluster, OpenStackMachine, OpenStackServer)
bootstrap|bootstrap/config|BootstrapProvider|openshift-agent|bootstrap-openshift-agent|bootstrap-components.yaml|ocp-capi-bootstrap|OCP_CAPI_BOOTSTRAP_|ocp-capi-bootstrap-system|bootstrap-manager|bootstrap|enabled|Cluster API bootstrap provider for OpenShift through the Assisted Installer (OpenshiftAssistedConfig)
controlplane|controlplane/config|ControlPlaneProvider|openshift-agent|control-plane-openshift-agent|control-plane-components.yaml|ocp-capi-controlplane|OCP_CAPI_CONTROLPLANE_|ocp-capi-controlplane-system|controlplane-manager|controlplane|enabled|Cluster API control-plane provider for OpenShift through the Assisted Installer
addon|internal/addon/config|AddonProvider|openshift|addon-openshift|addon-components.yaml|ocp-capi-addon|OCP_CAPI_ADDON_|ocp-capi-addon-system|addon-manager|addon|disabled|OpenShift add-on: MAPI to CAPI MachineSet sync and the MachineConfigPool BuildController
"
# Extra kustomize trees of a provider, released beside its components and
# rendered by its chart (the add-on's RoleBindings in the build and CAPI namespaces).
extra_dirs() { case $1 in addon) echo internal/addon/config/build-rbac ;; esac; }
# Strings of a provider's objects that become chart values.
chart_literals() { case $1 in addon) echo "--literal openshift-machine-config-operator=buildNamespace --literal openshift-cluster-api=capiNamespace" ;; esac; }

die() { echo "release: $*" >&2; exit 1; }

need_tools() {
  local t
  for t in "$KUSTOMIZE" "$HELM" "$@"; do
    [ -x "$t" ] || die "$t not found: run 'make tools'"
  done
}

semver_re='^v([0-9]+)\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.-]+)?$'
[[ $VERSION =~ $semver_re ]] || die "VERSION=$VERSION is not a semantic version vX.Y.Z (clusterctl's local repository needs one)"
MAJOR=${BASH_REMATCH[1]} MINOR=${BASH_REMATCH[2]}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- inputs -----------------------------------------------------------------

# crd_list DIR: the resources lines a provider's crd/kustomization.yaml must have.
crd_list() {
  local d=$1/crd/bases f
  [ -d "$d" ] || return 0
  for f in $(cd "$d" && ls -- *.yaml 2>/dev/null | LC_ALL=C sort); do echo "- bases/$f"; done
}

# listed_crds DIR: the resources lines it has.
listed_crds() { grep -E '^- bases/' "$1/crd/kustomization.yaml" || true; }

write_crd_kustomization() {
  local dir=$1 f=$1/crd/kustomization.yaml list
  [ -f "$f" ] || return 0
  list=$(crd_list "$dir")
  {
    sed -n '/^resources:/q;p' "$f"
    if [ -z "$list" ]; then echo "resources: []"; else echo "resources:"; echo "$list"; fi
  } > "$tmp/crd.yaml"
  cp "$tmp/crd.yaml" "$f"
}

# check_inputs: the kustomize trees include everything hack/generate.sh made.
check_inputs() {
  local key dir rest
  while IFS='|' read -r key dir rest; do
    [ -n "$key" ] || continue
    if [ -f "$dir/crd/kustomization.yaml" ] && [ "$(crd_list "$dir")" != "$(listed_crds "$dir")" ]; then
      die "$dir/crd/kustomization.yaml does not list exactly the CRDs in $dir/crd/bases: run 'make charts' (hack/release.sh charts)"
    fi
    if [ -f "$dir/webhook/manifests.yaml" ] && ! grep -qE '^- \.\./webhook$' "$dir/default/kustomization.yaml"; then
      die "$dir/webhook/manifests.yaml exists but $dir/default/kustomization.yaml does not include the ../webhook component: add it (see internal/openstack/config/default)"
    fi
  done <<< "$PROVIDERS"
}

# build_tree DIR IMAGE REGISTRY TAG OUTFILE: kustomize DIR with the manager
# image set to REGISTRY/IMAGE:TAG, through an overlay (kustomize wants
# relative paths).
build_tree() {
  local dir=$1 image=$2 registry=$3 tag=$4 out=$5 overlay
  overlay=$(mktemp -d "$tmp/overlay.XXXX")
  cat > "$overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath -m --relative-to="$overlay" "$ROOT/$dir")
images:
- name: $DEFAULT_REGISTRY/$image
  newName: $registry/$image
  newTag: $tag
EOF
  "$KUSTOMIZE" build "$overlay" > "$out"
}

# gen_charts VERSION REGISTRY TAG DEST: the charts for that release into DEST.
gen_charts() {
  local version=$1 registry=$2 tag=$3 dest=$4
  local key dir type name label file chart prefix ns image alias enabled desc deps=() inputs srcs x
  go build -o "$tmp/chartgen" ./hack/chartgen
  while IFS='|' read -r key dir type name label file chart prefix ns image alias enabled desc; do
    [ -n "$key" ] || continue
    inputs=("$tmp/$key.chart-input.yaml") srcs=(--source "$dir/default")
    build_tree "$dir/default" "$image" "$registry" "$tag" "${inputs[0]}"
    for x in $(extra_dirs "$key"); do
      build_tree "$x" "$image" "$registry" "$tag" "$tmp/$key.$(basename "$x").yaml"
      inputs+=("$tmp/$key.$(basename "$x").yaml") srcs+=(--source "$x")
    done
    # shellcheck disable=SC2046
    "$tmp/chartgen" provider --out "$dest/$chart" --name "$chart" --description "$desc" --version "$version" \
      --provider-label "$label" --var-prefix "$prefix" --namespace "$ns" $(chart_literals "$key") "${srcs[@]}" "${inputs[@]}"
    if [ "$enabled" = enabled ]; then deps+=(--dependency "$chart=$alias"); else deps+=(--dependency "$chart=$alias=disabled"); fi
  done <<< "$PROVIDERS"
  "$tmp/chartgen" umbrella --out "$dest/ocp-capi" --name ocp-capi --version "$version" \
    --description "Cluster API providers and add-on for OpenShift (ocp-capi): a chosen set of the provider charts" "${deps[@]}"
}

# --- subcommands --------------------------------------------------------------

cmd_charts() {
  need_tools
  local key dir rest
  while IFS='|' read -r key dir rest; do
    [ -n "$key" ] || continue
    write_crd_kustomization "$dir"
  done <<< "$PROVIDERS"
  check_inputs
  mkdir -p charts
  gen_charts "$DEFAULT_VERSION" "$DEFAULT_REGISTRY" "$DEFAULT_VERSION" "$tmp/charts"
  local c
  for c in "$tmp"/charts/*; do
    rm -rf "charts/$(basename "$c")"
    cp -a "$c" charts/
  done
  echo "Regenerated charts/ ($(cd "$tmp/charts" && echo *)) for $DEFAULT_VERSION."
}

cmd_check() {
  need_tools
  check_metadata
  check_inputs
  gen_charts "$DEFAULT_VERSION" "$DEFAULT_REGISTRY" "$DEFAULT_VERSION" "$tmp/charts"
  local c
  for c in "$tmp"/charts/*; do
    if ! diff -r --no-dereference "$c" "charts/$(basename "$c")" > "$tmp/diff" 2>&1; then
      head -40 "$tmp/diff" >&2
      die "charts/$(basename "$c") is out of date with the kustomize trees: run 'make charts' (hack/release.sh charts)"
    fi
  done
  echo "charts/ and the CRD lists are up to date."
}

cmd_release() {
  need_tools
  check_metadata
  # test/packaging checks charts/ on its own (with a readable diff).
  [ "${RELEASE_SKIP_CHARTS_CHECK:-}" = 1 ] || cmd_check
  local capi_version capi_dir
  # The version go.mod pins; a no-op when the module cache has it.
  go mod download sigs.k8s.io/cluster-api || die "cannot download sigs.k8s.io/cluster-api (its core/config tree is CAPI core's release)"
  read -r capi_dir capi_version < <(go list -m -f '{{.Dir}} {{.Version}}' sigs.k8s.io/cluster-api)
  [ -d "$capi_dir/core/config/default" ] || die "sigs.k8s.io/cluster-api $capi_version is not in the module cache: run 'go mod download sigs.k8s.io/cluster-api'"

  # Everything but the images (make images), which take minutes to build and
  # do not depend on the release's files, and the previous release
  # (make previous-release), which the upgrade e2e suite installs.
  mkdir -p "$OUT"
  find "$OUT" -mindepth 1 -maxdepth 1 ! -name images ! -name previous -exec rm -rf {} +
  local key dir type name label file chart prefix ns image alias enabled desc dest x providers=""
  while IFS='|' read -r key dir type name label file chart prefix ns image alias enabled desc; do
    [ -n "$key" ] || continue
    dest=$OUT/$label/$VERSION
    mkdir -p "$dest"
    build_tree "$dir/default" "$image" "$IMAGE_REGISTRY" "$IMAGE_TAG" "$dest/$file"
    for x in $(extra_dirs "$key"); do
      build_tree "$x" "$image" "$IMAGE_REGISTRY" "$IMAGE_TAG" "$dest/$(basename "$x").yaml"
    done
    write_metadata "$dest/metadata.yaml"
    providers+="- name: $name
  type: $type
  url: file://$dest/$file
"
  done <<< "$PROVIDERS"

  # Cluster templates and ClusterClasses (templates/): clusterctl
  # reads them beside the infrastructure provider's components
  # (clusterctl generate cluster NAME --infrastructure openstack --flavor F).
  local tpl
  for tpl in templates/cluster-template*.yaml templates/clusterclass-*.yaml; do
    if [ -e "$tpl" ]; then cp "$tpl" "$OUT/infrastructure-openstack/$VERSION/"; fi
  done

  # CAPI core, from the module cache: its own kustomize tree, with the image
  # renamed to a local one (built from bin/capi-manager; entrypoint /manager).
  dest=$OUT/cluster-api/$capi_version
  mkdir -p "$dest" "$tmp/capi"
  cat > "$tmp/capi/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath -m --relative-to="$tmp/capi" "$capi_dir/core/config/default")
images:
- name: gcr.io/k8s-staging-cluster-api/cluster-api-controller
  newName: $IMAGE_REGISTRY/cluster-api-controller
  newTag: $capi_version
patches:
- target:
    kind: Deployment
    name: capi-controller-manager
  patch: |-
    - op: replace
      path: /spec/template/spec/containers/0/imagePullPolicy
      value: IfNotPresent
EOF
  "$KUSTOMIZE" build "$tmp/capi" > "$dest/core-components.yaml"
  cp "$capi_dir/metadata.yaml" "$dest/metadata.yaml"
  chmod 0644 "$dest/metadata.yaml"
  providers="- name: cluster-api
  type: CoreProvider
  url: file://$dest/core-components.yaml
$providers"

  local_cert_manager
  write_clusterctl_config "$providers" "$capi_version"

  gen_charts "$VERSION" "$IMAGE_REGISTRY" "$IMAGE_TAG" "$tmp/release-charts"
  mkdir -p "$OUT/charts"
  local c
  for c in "$tmp"/release-charts/*; do
    "$HELM" lint --strict "$c" > "$tmp/lint" 2>&1 || { cat "$tmp/lint" >&2; die "helm lint $(basename "$c") failed"; }
    "$HELM" package "$c" --destination "$OUT/charts" > /dev/null 2>&1
  done
  "$HELM" repo index "$OUT/charts"

  echo "Wrote $OUT for $VERSION (images $IMAGE_REGISTRY/<manager>:$IMAGE_TAG, CAPI core $capi_version):"
  (cd "$OUT" && find . -path ./images -prune -o -type f -print | LC_ALL=C sort | sed 's#^\./#  #')
}

# The Cluster API contract this tree implements: that of a new series.
CONTRACT=v1beta2

# recorded_series: "major minor contract" of each series metadata.yaml lists.
recorded_series() {
  awk '
    /^releaseSeries:/ { in_list = 1; next }
    in_list && /^- major:/ { if (major != "") print major, minor, contract; major = $3; minor = ""; contract = ""; next }
    in_list && /^  minor:/ { minor = $2; next }
    in_list && /^  contract:/ { contract = $2; next }
    in_list && /^[^ -]/ { in_list = 0 }
    END { if (major != "") print major, minor, contract }
  ' metadata.yaml
}

# check_metadata: metadata.yaml lists each series once, with a contract.
check_metadata() {
  local major minor contract seen=" "
  [ -f metadata.yaml ] || die "metadata.yaml (the release series made so far) is missing"
  while read -r major minor contract; do
    [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ && $contract =~ ^v1(alpha|beta)?[0-9]*$ ]] ||
      die "metadata.yaml: a release series needs a numeric major and minor and a contract (got '$major' '$minor' '$contract')"
    case $seen in *" $major.$minor "*) die "metadata.yaml lists series v$major.$minor twice" ;; esac
    seen+="$major.$minor "
  done < <(recorded_series)
  [ "$seen" != " " ] || die "metadata.yaml lists no release series"
}

# write_metadata FILE: metadata.yaml's series, plus VERSION's if it is a new
# one (its first release), with this tree's contract.
write_metadata() {
  local major minor contract found=""
  {
    echo "# clusterctl's release metadata of $VERSION: every release series of this"
    echo "# provider and the Cluster API contract each implements (from metadata.yaml)."
    echo "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3"
    echo "kind: Metadata"
    echo "releaseSeries:"
    while read -r major minor contract; do
      [ "$major.$minor" != "$MAJOR.$MINOR" ] || found=1
      printf -- '- major: %s\n  minor: %s\n  contract: %s\n' "$major" "$minor" "$contract"
    done < <(recorded_series)
    [ -n "$found" ] || printf -- '- major: %s\n  minor: %s\n  contract: %s\n' "$MAJOR" "$MINOR" "$CONTRACT"
  } > "$1"
}

# local_cert_manager: unless CERT_MANAGER_URL names one, render cert-manager
# from hack/tools/cert-manager into $OUT/cert-manager/<version>/ (clusterctl's
# local repository layout) and point clusterctl at it; its images are built by
# `make images`. If that cannot be done, say so and leave clusterctl's default.
local_cert_manager() {
  [ -z "${CERT_MANAGER_URL:-}" ] || return 0
  if [ "${CERT_MANAGER_LOCAL:-1}" = 0 ]; then
    echo "release: CERT_MANAGER_LOCAL=0: clusterctl.yaml keeps clusterctl's default cert-manager (downloaded from GitHub)" >&2
    return 0
  fi
  local want f
  want=$(awk '$1 == "require" && $2 == "github.com/cert-manager/cert-manager" {print $3}' hack/tools/cert-manager/go.mod 2>/dev/null || true)
  if [ -n "${CERT_MANAGER_VERSION:-}" ] && [ "$CERT_MANAGER_VERSION" != "$want" ]; then
    die "CERT_MANAGER_VERSION=$CERT_MANAGER_VERSION, but hack/tools/cert-manager builds ${want:-nothing}: set CERT_MANAGER_URL to that version's cert-manager.yaml, or unset CERT_MANAGER_VERSION"
  fi
  if [ -n "$want" ] && f=$(HELM=$HELM hack/tools/cert-manager/render.sh "$OUT/cert-manager" 2> "$tmp/cert-manager.err"); then
    CERT_MANAGER_URL=file://$f CERT_MANAGER_VERSION=$want
    CERT_MANAGER_NOTE="# cert-manager $want, rendered from hack/tools/cert-manager (its images: make images)."
  else
    cat "$tmp/cert-manager.err" >&2 2>/dev/null || true
    echo "release: WARNING: the local cert-manager (hack/tools/cert-manager) could not be rendered; clusterctl.yaml keeps clusterctl's default cert-manager (downloaded from GitHub)" >&2
  fi
}

write_clusterctl_config() {
  local providers=$1 capi_version=$2 certmanager
  if [ -n "${CERT_MANAGER_URL:-}" ]; then
    certmanager="${CERT_MANAGER_NOTE:-# cert-manager for clusterctl init.}
cert-manager:
  url: \"$CERT_MANAGER_URL\"
  version: \"${CERT_MANAGER_VERSION:-v1.9.2}\""
  else
    certmanager="# cert-manager: a local copy, laid out as {basepath}/cert-manager/{version}/cert-manager.yaml
# (make release CERT_MANAGER_URL=file://... CERT_MANAGER_VERSION=v1.9.2 writes it here).
# cert-manager:
#   url: \"file:///path/to/cert-manager/v1.9.2/cert-manager.yaml\"
#   version: \"v1.9.2\""
  fi
  cat > "$OUT/clusterctl.yaml" <<EOF
# clusterctl configuration for the local repository in this directory,
# written by hack/release.sh for $VERSION. Use it with --config:
#
#   clusterctl init --config $OUT/clusterctl.yaml \\
#     --core cluster-api:$capi_version --bootstrap openshift-agent:$VERSION \\
#     --control-plane openshift-agent:$VERSION --infrastructure openstack:$VERSION \\
#     --addon openshift:$VERSION
#
# then, for the add-on's BuildController, apply addon-openshift/$VERSION/build-rbac.yaml
# (docs/install.md).
providers:
$providers
$certmanager

# Images: the components name $IMAGE_REGISTRY/<manager>:$IMAGE_TAG (pull policy
# IfNotPresent). To take them from elsewhere without a new release:
# images:
#   all:
#     repository: registry.example.com/ocp-capi
#   cert-manager:
#     repository: registry.example.com/cert-manager

# No network lookups of newer clusterctl releases.
CLUSTERCTL_DISABLE_VERSIONCHECK: "true"
EOF
}

case ${1:-release} in
  release) cmd_release ;;
  charts) cmd_charts ;;
  check) cmd_check ;;
  *) die "unknown subcommand $1: want release, charts or check" ;;
esac
