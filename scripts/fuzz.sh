#!/usr/bin/env bash
# fuzz.sh [DURATION] — run every Go fuzz target in every module for DURATION
# (default 10s) each. New failing inputs land in testdata/fuzz as regression seeds.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
time=${1:-10s}
status=0
for mod in "$top"/*/go.mod; do
  dir=$(dirname "$mod")
  cd "$dir"
  # Each package with fuzz targets, then each target in it.
  for pkg in $(go list ./... 2>/dev/null); do
    pdir=$(go list -f '{{.Dir}}' "$pkg")
    targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$pdir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
    for t in $targets; do
      echo "== fuzz $pkg $t ($time)"
      if ! go test -run '^$' -fuzz "^$t\$" -fuzztime "$time" "$pkg"; then
        status=1
      fi
    done
  done
done
exit $status
