#!/usr/bin/env bash
# Fails when a generated file is stale or was edited by hand. It runs the
# generators in a scratch copy of the work tree, so it neither depends on git
# state nor rewrites the developer's files, then diffs the two trees.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Copy everything but build outputs and VCS data.
tar -C "$root" --exclude=./.git --exclude=./bin --exclude=./out --exclude=./.mgmt -cf - . | tar -C "$scratch" -xf -
CONTROLLER_GEN="$root/bin/controller-gen" "$scratch/hack/generate.sh"

if ! diff -r -q "$root" "$scratch" -x .git -x bin -x out -x .mgmt >/dev/null; then
  echo "Generated files are stale or were edited by hand. Run 'make generate' and commit the result." >&2
  diff -r -u "$root" "$scratch" -x .git -x bin -x out -x .mgmt | sed "s#$scratch#<generated>#g" | head -200 >&2
  exit 1
fi
echo "Generated files are up to date."
