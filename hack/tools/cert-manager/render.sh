#!/usr/bin/env bash
# Renders cert-manager's static manifest (what upstream publishes as
# cert-manager.yaml) from the Helm chart and CRDs in the module this
# directory pins, for clusterctl's `cert-manager:` setting:
#
#   hack/tools/cert-manager/render.sh DIR    writes DIR/<version>/cert-manager.yaml, prints its path
#
# clusterctl reads cert-manager like a provider of a local repository, so the
# file must sit at {basepath}/cert-manager/{version}/cert-manager.yaml: DIR
# should end in /cert-manager. This follows upstream's make/manifests.mk: the
# module's chart is a template (Chart.template.yaml with placeholder versions,
# CRDs outside the chart), so a release chart is assembled in a scratch copy
# and rendered with `helm template` as upstream does for the static manifest
# (creator=static, no startupapicheck Job: it would need the cert-manager-ctl
# image, and clusterctl waits for the API by itself). CRDs are included
# (installCRDs=true), and images keep the chart's defaults
# (quay.io/jetstack/cert-manager-<cmd>:<version>, pull policy IfNotPresent),
# which `make images` builds locally.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
HELM=${HELM:-$root/bin/helm}
export GOTOOLCHAIN=local

die() { echo "cert-manager render: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: $0 DIR (writes DIR/<version>/cert-manager.yaml)"
[ -x "$HELM" ] || die "$HELM not found: run 'make tools'"
dest_base=$1

pkg=github.com/cert-manager/cert-manager
# The module zip holds the chart and CRDs; a no-op when the cache has it.
(cd "$here" && go mod download "$pkg") || die "cannot download $pkg (the version $here/go.mod pins) from the module proxy"
read -r dir version < <(cd "$here" && go list -m -f '{{.Dir}} {{.Version}}' "$pkg")
[ -f "$dir/deploy/charts/cert-manager/Chart.template.yaml" ] || die "$pkg $version has no deploy/charts/cert-manager/Chart.template.yaml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$dir/deploy/charts/cert-manager
chart=$tmp/cert-manager
mkdir -p "$chart/templates"
# Only what upstream packages: the module's chart directory also holds
# BUILD.bazel files, which helm would render as templates.
cp "$src"/templates/*.yaml "$src/templates/_helpers.tpl" "$src/templates/NOTES.txt" "$chart/templates/"
cp "$src/values.yaml" "$chart/"
sed -e "s/^version: .*/version: $version/" -e "s/^appVersion: .*/appVersion: $version/" \
  -e 's/{{IS_PRERELEASE}}/false/g' "$src/Chart.template.yaml" > "$chart/Chart.yaml"
grep -q "^appVersion: $version\$" "$chart/Chart.yaml" || die "could not set appVersion in the chart's Chart.yaml"
# The CRDs, in upstream's order, behind installCRDs as in the released chart.
{
  echo '{{- if .Values.installCRDs }}'
  first=1
  for c in certificaterequests certificates challenges clusterissuers issuers orders; do
    [ -f "$dir/deploy/crds/crd-$c.yaml" ] || die "missing deploy/crds/crd-$c.yaml in $pkg $version"
    [ $first = 1 ] || echo '---'
    first=0
    cat "$dir/deploy/crds/crd-$c.yaml"
  done
  echo '{{- end }}'
} > "$chart/templates/crds.yaml"
chmod -R u+w "$tmp"

dest=$dest_base/$version
mkdir -p "$dest"
{
  echo "# cert-manager $version, rendered by hack/tools/cert-manager/render.sh from the chart and CRDs"
  echo "# of $pkg@$version (the module proxy's copy). Images: make images."
  cat "$dir/deploy/manifests/namespace.yaml"
  "$HELM" template cert-manager "$chart" --namespace cert-manager \
    --set creator=static --set startupapicheck.enabled=false --set installCRDs=true \
    --set image.pullPolicy=IfNotPresent --set webhook.image.pullPolicy=IfNotPresent \
    --set cainjector.image.pullPolicy=IfNotPresent
} > "$tmp/cert-manager.yaml"
mv "$tmp/cert-manager.yaml" "$dest/cert-manager.yaml"
chmod 0644 "$dest/cert-manager.yaml"
echo "$dest/cert-manager.yaml"
