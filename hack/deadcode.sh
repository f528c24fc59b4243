#!/usr/bin/env bash
# Fails when the tree holds a function that no command, test or e2e suite
# reaches. `deadcode -test` counts what only tests call as used; generated
# code is not reported.
#
# The product's module and the e2e suites' module (test/e2e) are analysed as
# one program, through a workspace made for this run, so that a test helper
# of the product that only the e2e suites call counts as used and the e2e
# module's own dead code is found too. Every build tag that selects test
# files is set, so that no tagged test is left out of the callers.
#
# A function that must stay although nothing calls it goes into
# hack/deadcode-allow.txt, one "<package path>.<function> # reason" a line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
deadcode=${DEADCODE:-$root/bin/deadcode}
allow=$root/hack/deadcode-allow.txt
tags=e2e,images

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && go work init "$root" "$root/test/e2e")

GOWORK=$work/go.work "$deadcode" -test -tags "$tags" \
  -f '{{range .Funcs}}{{$.Path}}.{{.Name}} {{.Position.File}}:{{.Position.Line}}{{"\n"}}{{end}}' \
  ./... ./test/e2e/... >"$work/found"

allowed() {
  [ -f "$allow" ] || return 0
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$allow"
}
allowed >"$work/allowed"
# The findings whose function is not allowed, with paths relative to the root;
# and the allowed functions that are no longer found (a stale line).
awk 'FILENAME == ARGV[1] { ok[$1] = 1; next } !($1 in ok)' "$work/allowed" "$work/found" |
  sed "s# $root/# #" >"$work/dead"
awk 'FILENAME == ARGV[1] { found[$1] = 1; next } !($1 in found)' "$work/found" "$work/allowed" >"$work/stale"

rc=0
if [ -s "$work/dead" ]; then
  echo "Unreachable functions (delete them, or list them in hack/deadcode-allow.txt with the reason they stay):" >&2
  awk '{print "  " $2 ": " $1}' "$work/dead" >&2
  rc=1
fi
if [ -s "$work/stale" ]; then
  echo "hack/deadcode-allow.txt lists functions that are used now or gone; remove these lines:" >&2
  sed 's/^/  /' "$work/stale" >&2
  rc=1
fi
[ $rc -ne 0 ] || echo "deadcode: no unreachable functions."
exit $rc
