#!/usr/bin/env bash
# gomod.sh DIR ARGS... — run `go ARGS...` (get, mod tidy) in module DIR outside the
# workspace, with temporary replace directives pointing every sibling module of this
# repository at its directory, then drop them again. Released modules need no replace;
# this only lets `go get`/`go mod tidy` resolve the unpublished siblings during development.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
cd "$top/$dir"
mods=()
for m in "$top"/*/go.mod; do
  d=$(dirname "$m"); n=$(basename "$d")
  [ "$n" = "$(basename "$PWD")" ] && continue
  mods+=("github.com/symposium-dev/symposium-pm/$n=../$n")
done
# Inside the workspace, siblings resolve through go.work with no require line (a
# require on an unpublished version makes the go command look it up on the proxy), so
# the sibling requires that `go get`/`go mod tidy` add are dropped again as well.
cleanup() {
  for r in "${mods[@]}"; do
    go mod edit -dropreplace="${r%%=*}" -droprequire="${r%%=*}"
  done
}
trap cleanup EXIT
for r in "${mods[@]}"; do go mod edit -replace="$r"; done
GOWORK=off GOFLAGS=-mod=mod go "$@"
