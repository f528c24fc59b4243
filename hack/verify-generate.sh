#!/usr/bin/env bash
# Fails when a generated file is stale or was edited by hand. It runs the
# generators in a scratch copy of the work tree, so it neither depends on git
# state nor rewrites the developer's files, then diffs the two trees.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Copy everything but build outputs, VCS data and local cluster/e2e state
# (live etcd files there change while tar reads them).
excl=(.git bin out '.mgmt*' .quickstart _artifacts)
tar -C "$root" "${excl[@]/#/--exclude=./}" -cf - . | tar -C "$scratch" -xf -
CONTROLLER_GEN="$root/bin/controller-gen" "$scratch/hack/generate.sh"

if ! diff -r -q "$root" "$scratch" "${excl[@]/#/-x}" >/dev/null; then
  echo "Generated files are stale or were edited by hand. Run 'make generate' and commit the result." >&2
  diff -r -u "$root" "$scratch" "${excl[@]/#/-x}" | sed "s#$scratch#<generated>#g" | head -200 >&2
  exit 1
fi
echo "Generated files are up to date."
