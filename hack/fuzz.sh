#!/usr/bin/env bash
# Runs every native Go fuzz target (func FuzzXxx(f *testing.F)) of the
# product module in turn, each for FUZZTIME, and prints one line per target:
# package, target, wall time (build included), executions, new interesting
# inputs. Failing inputs are written to the package's testdata/fuzz/<target>/
# by go test (commit them with the fix and its test).
#
#   FUZZTIME       per target (go test -fuzztime), default 10m
#   FUZZ_PARALLEL  fuzzing workers (-parallel), default 1
#   FUZZ           only targets whose name matches this extended regexp
#   FUZZ_SAVE=1    also copy the corpus the run grew (kept by go in
#                  $GOCACHE/fuzz) into testdata/fuzz/<target>/, to commit
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10m}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-1}
FUZZ=${FUZZ:-.}
FUZZ_SAVE=${FUZZ_SAVE:-}

targets=$(git grep --untracked -n -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go' ':!test/e2e' |
  sed -E 's|^(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | grep -E " ($FUZZ)\$" | sort -u || true)
[ -n "$targets" ] || { echo "fuzz: no target matches $FUZZ" >&2; exit 1; }

module=$(go list -m)
cache=$(go env GOCACHE)/fuzz
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
rc=0
while read -r dir name; do
  echo "== ./$dir $name (-fuzztime $FUZZTIME -parallel $FUZZ_PARALLEL)"
  log=$(mktemp)
  start=$(date +%s)
  if go test "./$dir" -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -parallel "$FUZZ_PARALLEL" 2>&1 | tee "$log"; then
    result=ok
  else
    result=FAIL; rc=1
  fi
  secs=$(( $(date +%s) - start ))
  last=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -1 || true)
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  new=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
  printf '%s\t%s\t%s\t%ss\t%s\t%s\n' "$result" "./$dir" "$name" "$secs" "${execs:-?}" "${new:-?}" >>"$summary"
  rm -f "$log"
  if [ -n "$FUZZ_SAVE" ] && [ -d "$cache/$module/$dir/$name" ]; then
    mkdir -p "$dir/testdata/fuzz/$name"
    cp -n "$cache/$module/$dir/$name"/* "$dir/testdata/fuzz/$name/"
  fi
done <<<"$targets"

echo
printf 'result\tpackage\ttarget\twall\texecs\tnew\n'
cat "$summary"
exit $rc
