#!/usr/bin/env bash
# bench.sh [BENCHTIME] — run every module's Go benchmarks in one go and write
# bench/report.md: per PM, its hook path cold and cached beside its ecosystem's
# tool, the SDK's null PM and a bare Go binary, as ratios of figures measured
# in this same run; growth curves (benchmarks run at several sizes: deps=N,
# members=N, entries=N) as tables and as SVG plots in bench/plots/; the
# harness's throughput; peak resident memory.
#
# BENCHTIME (default 1s) is go test's -benchtime for every benchmark. A slow
# benchmark (one operation longer than BENCHTIME: cargo metadata, npm ls, pip
# list, the interleaved cargo hook-path rounds) runs its operation once, so the
# whole run stays within minutes; use 3s or 5s for steadier figures.
# BENCH_MODULES="sdk pm-npm" limits the run to those modules.
# The raw output is kept in bench/out/raw.txt (not committed). The report is
# written even when a benchmark fails; the exit status is then 1.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
benchtime=${1:-1s}
procs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
out="$top/bench/out"
mkdir -p "$out"
raw="$out/raw.txt"
: > "$raw"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/symposium-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
failed=()
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
started=$(date +%s)
times=()

for mod in "$top"/*/go.mod; do
  dir=$(dirname "$mod")
  if [ -n "${BENCH_MODULES:-}" ] && [[ " $BENCH_MODULES " != *" $(basename "$dir") "* ]]; then
    continue
  fi
  name=$(basename "$dir")
  echo "== bench $name (-benchtime $benchtime)" >&2
  mstart=$(date +%s)
  # -timeout: the default 10m is per package; the slowest PM benchmark
  # packages build large workspaces and run the real tools.
  (cd "$dir" && go test -run '^$' -bench . -benchtime "$benchtime" -benchmem -cpu "$procs" -timeout 30m ./... 2>&1) \
    | tee -a "$raw" | grep -E '^(Benchmark.*[0-9] ns/op|FAIL|--- FAIL|panic:)' >&2
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    status=1
    failed+=("$name")
  fi
  times+=("$name $(( $(date +%s) - mstart ))s")
  echo "== bench $name: ${times[-1]#* }" >&2
done

# Peak resident memory over one hook path of each binary, on the example workspace.
echo "== peak RSS probe" >&2
(
  cd "$top" &&
  go build -o "$tmp/bin/" $(for d in */cmd; do printf './%s/... ' "$d"; done) &&
  go build -o "$tmp/floors/nullpm" ./sdk/benchkit/internal/nullpm &&
  go build -o "$tmp/floors/barego" ./sdk/benchkit/internal/barego &&
  cd sdk && go run ./internal/cmd/benchreport rss -bin "$tmp/bin" -floors "$tmp/floors" -root "$top"
) >> "$raw" || { status=1; failed+=("rss probe"); }

endload=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
machine="$(uname -s | tr '[:upper:]' '[:lower:]')/$(uname -m), $procs CPUs, load average $load at start and $endload at the end"
duration="$(( $(date +%s) - started ))s in all ($(IFS=,; echo "${times[*]}" | sed 's/,/, /g'))"
(cd "$top/sdk" && go run ./internal/cmd/benchreport report -procs "$procs" -benchtime "$benchtime" \
  -machine "$machine" -go "$(go env GOVERSION)" -plots "$top/bench/plots" -duration "$duration") < "$raw" > "$top/bench/report.md.tmp" \
  && mv "$top/bench/report.md.tmp" "$top/bench/report.md" || { rm -f "$top/bench/report.md.tmp"; exit 1; }
echo "wrote bench/report.md and bench/plots/ in $duration (raw output: bench/out/raw.txt)" >&2
if [ $status -ne 0 ]; then
  echo "bench: failed: ${failed[*]} (see bench/out/raw.txt)" >&2
fi
exit $status
