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
# BENCH_MODULES="sdk pm-npm" measures only those modules; the report then
# also holds the other modules' figures kept from their last run on this
# machine (bench/out/<module>.txt), each module's time and load named in the
# report's header. Each module's raw output is kept in bench/out/<module>.txt
# (not committed) and all of them together in bench/out/raw.txt. The report is
# written even when a benchmark fails; the exit status is then 1.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
benchtime=${1:-1s}
procs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
out="$top/bench/out"
mkdir -p "$out"
raw="$out/raw.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/symposium-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
failed=()
loadavg() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"; }
started=$(date +%s)

for mod in "$top"/*/go.mod; do
  dir=$(dirname "$mod")
  if [ -n "${BENCH_MODULES:-}" ] && [[ " $BENCH_MODULES " != *" $(basename "$dir") "* ]]; then
    continue
  fi
  name=$(basename "$dir")
  echo "== bench $name (-benchtime $benchtime)" >&2
  mstart=$(date +%s)
  mload=$(loadavg)
  # -timeout: the default 10m is per package; the slowest PM benchmark
  # packages build large workspaces and run the real tools.
  (cd "$dir" && go test -run '^$' -bench . -benchtime "$benchtime" -benchmem -cpu "$procs" -timeout 30m ./... 2>&1) \
    | tee "$tmp/$name.txt" | grep -E '^(Benchmark.*[0-9] ns/op|FAIL|--- FAIL|panic:)' >&2
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    status=1
    failed+=("$name")
  fi
  secs=$(( $(date +%s) - mstart ))
  mv "$tmp/$name.txt" "$out/$name.txt"
  echo "$name $secs s from $(date -u -d "@$mstart" '+%Y-%m-%d %H:%M UTC'), load $mload to $(loadavg)" > "$out/$name.stamp"
  echo "== bench $name: ${secs}s" >&2
done

# The report holds every module measured in this run or kept from an earlier one.
: > "$raw"
times=()
for mod in "$top"/*/go.mod; do
  name=$(basename "$(dirname "$mod")")
  if [ -f "$out/$name.txt" ] && [ -f "$out/$name.stamp" ]; then
    cat "$out/$name.txt" >> "$raw"
    read -r _ secs _ rest < "$out/$name.stamp"
    times+=("$name ${secs}s ($rest)")
  fi
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

machine="$(uname -s | tr '[:upper:]' '[:lower:]')/$(uname -m), $procs CPUs"
duration="$(IFS=';'; echo "${times[*]}" | sed 's/;/; /g')"
(cd "$top/sdk" && go run ./internal/cmd/benchreport report -procs "$procs" -benchtime "$benchtime" \
  -machine "$machine" -go "$(go env GOVERSION)" -plots "$top/bench/plots" -duration "$duration") < "$raw" > "$top/bench/report.md.tmp" \
  && mv "$top/bench/report.md.tmp" "$top/bench/report.md" || { rm -f "$top/bench/report.md.tmp"; exit 1; }
echo "wrote bench/report.md and bench/plots/ in $(( $(date +%s) - started ))s (raw output: bench/out/raw.txt)" >&2
if [ $status -ne 0 ]; then
  echo "bench: failed: ${failed[*]} (see bench/out/raw.txt)" >&2
fi
exit $status
