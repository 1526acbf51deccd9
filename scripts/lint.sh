#!/usr/bin/env bash
# lint.sh — staticcheck in every module, then deadcode over the whole
# workspace; fails when either reports anything. The tools are installed at
# pinned versions into bin/tools (go install pkg@version), so every machine
# runs the same checks; they are rebuilt only when the version changes.
#
# deadcode runs once over every module's packages together, with -test: a
# function of the SDK that only a PM uses (pmserver options, pmtest checks)
# is reachable from that PM's main, which running deadcode module by module
# would not see, and tests count as roots so test helpers are checked too.
# Example functions without an "// Output:" comment are compiled but never
# run by go test, so deadcode counts them as unreachable; they are
# documentation and are left out of the report.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

STATICCHECK_VERSION=v0.8.2 # honnef.co/go/tools
DEADCODE_VERSION=v0.52.0   # golang.org/x/tools

tools=$top/bin/tools
mkdir -p "$tools"
install() { # install NAME PKG VERSION
  local stamp="$tools/.$1.version"
  if [ -x "$tools/$1" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$3" ]; then return; fi
  echo "== go install $2@$3"
  GOBIN=$tools GOWORK=off GOFLAGS= go install "$2@$3"
  echo "$3" >"$stamp"
}
install staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION"
install deadcode golang.org/x/tools/cmd/deadcode "$DEADCODE_VERSION"

status=0
mods=()
for m in */go.mod; do
  d=$(dirname "$m")
  mods+=("./$d/...")
  echo "== staticcheck $d"
  (cd "$d" && "$tools/staticcheck" ./...) || status=1
done

echo "== deadcode -test ${mods[*]}"
if ! raw=$("$tools/deadcode" -test "${mods[@]}"); then
  echo "deadcode failed" >&2
  status=1
fi
out=$(printf '%s\n' "$raw" | grep -v -e ': unreachable func: Example' -e '^$' || true)
if [ -n "$out" ]; then
  echo "$out"
  status=1
fi
exit $status
