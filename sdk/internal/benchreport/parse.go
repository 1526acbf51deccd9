// Package benchreport turns the output of `go test -bench` over every
// module of this repository into one Markdown report: per PM, its hook path
// (cold and cached) side by side with its ecosystem's own tool, the SDK's
// null PM and a Go binary that only starts, as ratios of measurements taken
// in the same run; throughput and memory figures beside them.
//
// Benchmarks are matched by name, not position: within one benchmark (a
// package and a top-level Benchmark function) the sub-benchmark named
// "nullpm" is the null PM, "barego" the bare Go binary, one named after a
// tool ("npm-ls", "pip-list", "metadata", "git-ls-files") the ecosystem's
// tool, names with "in-process" or "inprocess" are measured without a
// process start, names with "cold" or "no-index" are cold hook paths and
// the remaining ones cached hook paths. A benchmark that reports several
// variants as metrics ("cached-ms", "nullpm-ms", ...) from one sub-benchmark
// is read the same way.
package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Result is one benchmark result line.
type Result struct {
	// Pkg is the import path of the benchmark's package.
	Pkg string
	// Name is the benchmark's name without the "Benchmark" prefix and the
	// GOMAXPROCS suffix, sub-benchmarks separated by slashes.
	Name string
	// N is the number of iterations run.
	N int
	// Units lists the metric units in the order printed; Values holds
	// each unit's value ("ns/op", "B/op", "allocs/op", custom units).
	Units  []string
	Values map[string]float64
}

// Value returns the value of unit and whether it was reported.
func (r Result) Value(unit string) (float64, bool) {
	v, ok := r.Values[unit]
	return v, ok
}

// Parse reads `go test -bench` output. procs is the GOMAXPROCS the
// benchmarks ran with: a name suffix "-procs" is removed (none when procs
// is 1). Lines that are not results or "pkg:" headers are ignored.
func Parse(r io.Reader, procs int) ([]Result, error) {
	var out []Result
	pkg := ""
	suffix := ""
	if procs > 1 {
		suffix = "-" + strconv.Itoa(procs)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's name alone (its output follows) or a log line
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if suffix != "" {
			name = strings.TrimSuffix(name, suffix)
		}
		res := Result{Pkg: pkg, Name: name, N: n, Values: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q of %s: %w", line, f[i], f[0], err)
			}
			unit := f[i+1]
			if _, dup := res.Values[unit]; !dup {
				res.Units = append(res.Units, unit)
			}
			res.Values[unit] = v
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
