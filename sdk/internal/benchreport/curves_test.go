package benchreport

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

const curveRun = `pkg: github.com/symposium-dev/symposium-pm/pm-npm/npmpm
BenchmarkWholeHook/deps=100/nullpm-2     	      10	   4000000 ns/op
BenchmarkWholeHook/deps=100/cached-2     	      10	   4400000 ns/op
BenchmarkWholeHook/deps=100/cold-2       	      10	   8000000 ns/op
BenchmarkWholeHook/deps=2000/nullpm-2    	      10	   4000000 ns/op
BenchmarkWholeHook/deps=2000/cached-2    	      10	   4800000 ns/op
BenchmarkWholeHook/deps=2000/cold-2      	      10	  40000000 ns/op
BenchmarkWholeHook/deps=400/nullpm-2     	      10	   4000000 ns/op
BenchmarkWholeHook/deps=400/cached-2     	      10	   4600000 ns/op
BenchmarkParse/one-size=5-2              	      10	   1000 ns/op
`

func TestCurves(t *testing.T) {
	results, err := Parse(strings.NewReader(curveRun), 2)
	if err != nil {
		t.Fatal(err)
	}
	curves := Curves(Groups(results))
	if len(curves) != 1 {
		t.Fatalf("%d curves, want 1 (a benchmark at one size is no curve)", len(curves))
	}
	c := curves[0]
	if c.Key != "deps" || len(c.Sizes) != 3 || c.Sizes[0] != 100 || c.Sizes[1] != 400 || c.Sizes[2] != 2000 {
		t.Fatalf("curve %s over %v", c.Key, c.Sizes)
	}
	if c.Slug() != "npm-WholeHook-deps" {
		t.Errorf("slug %q", c.Slug())
	}
	names := map[string]int{}
	for i, s := range c.Series {
		names[s.Name] = i
	}
	if c.Null < 0 || c.Series[c.Null].Name != "nullpm" {
		t.Fatalf("null series %d of %v", c.Null, names)
	}
	if r := c.Ratio(names["cached"], 2); r < 1.19 || r > 1.21 {
		t.Errorf("cached at 2,000 deps = %.3f× null PM, want 1.2", r)
	}
	if r := c.Ratio(names["cold"], 1); r != 0 {
		t.Errorf("cold at 400 deps was not measured, ratio %v", r)
	}
	var table strings.Builder
	if err := c.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| deps | `cold` | `cold` × null PM | `cached` | `cached` × null PM | `nullpm` |", "| 2,000 | 40 ms | 10.00× | 4.80 ms | 1.20× | 4 ms |", "| 400 | — | — | 4.60 ms | 1.15× | 4 ms |"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var svg strings.Builder
	if err := c.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, one polyline per series, a legend naming each.
	d := xml.NewDecoder(strings.NewReader(svg.String()))
	lines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plot is not well-formed XML: %v\n%s", err, svg.String())
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 3 {
		t.Errorf("%d polylines, want 3", lines)
	}
	for _, name := range []string{">nullpm<", ">cached<", ">cold<", "× null PM (log scale)", ">2,000<"} {
		if !strings.Contains(svg.String(), name) {
			t.Errorf("plot lacks %q", name)
		}
	}
	var report strings.Builder
	if err := Write(&report, Info{Plots: "plots"}, Groups(results)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report.String(), "![npm WholeHook by deps](plots/npm-WholeHook-deps.svg)") {
		t.Errorf("report does not link the plot:\n%s", report.String())
	}
}

// A whole-hook run at three sizes with its load and peak memory, and a
// refresh benchmark measured beside git fetch + checkout (sub-benchmarks,
// no null PM).
const glanceRun = `pkg: github.com/symposium-dev/symposium-pm/pm-npm/npmpm
BenchmarkWholeHook/deps=100-2 	1	1000 ns/op	4.0 nullpm-ms	4.4 cached-ms	8.0 cold-ms	9000 cold-peak-RSS-KiB	0.5 load1
BenchmarkWholeHook/deps=400-2 	1	1000 ns/op	4.0 nullpm-ms	4.6 cached-ms	12.0 cold-ms	10000 cold-peak-RSS-KiB	0.7 load1
BenchmarkWholeHook/deps=2000-2 	1	1000 ns/op	4.0 nullpm-ms	5.0 cached-ms	40.0 cold-ms	20480 cold-peak-RSS-KiB	1.5 load1
BenchmarkWholeHook/deps=100/in-process-2 	1	100000 ns/op
BenchmarkWholeHook/deps=2000/in-process-2 	1	200000 ns/op
BenchmarkHookPath/locked=1000-2 	1	1000 ns/op	4.0 nullpm-ms	5.0 cold-ms	500 npm-ls-ms
BenchmarkHookPath/locked=10000-2 	1	1000 ns/op	4.0 nullpm-ms	50.0 cold-ms	5000 npm-ls-ms
pkg: github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache
BenchmarkRefreshOneChange/entries=1000/gitcache-2 	1	16000000 ns/op
BenchmarkRefreshOneChange/entries=1000/git-fetch-checkout-2 	1	1000000 ns/op
BenchmarkRefreshOneChange/entries=10000/gitcache-2 	1	84000000 ns/op
BenchmarkRefreshOneChange/entries=10000/git-fetch-checkout-2 	1	2000000 ns/op
`

// TestGlance checks the summary states the whole hook's ratio to the null
// PM at each size with the load, the comparison with the ecosystem tool at
// each size, and that git fetch + checkout is read as gitregistry's tool.
func TestGlance(t *testing.T) {
	results, err := Parse(strings.NewReader(glanceRun), 2)
	if err != nil {
		t.Fatal(err)
	}
	curves := Curves(Groups(results))
	if len(curves) != 3 {
		t.Fatalf("%d curves, want 3", len(curves))
	}
	refresh := curves[2]
	if refresh.Tool < 0 || refresh.Series[refresh.Tool].Name != "git-fetch-checkout" {
		t.Fatalf("git fetch + checkout is not the refresh curve's tool: %+v", refresh.Series)
	}
	var report strings.Builder
	if err := Write(&report, Info{CPUs: "2 CPUs"}, Groups(results)); err != nil {
		t.Fatal(err)
	}
	out := report.String()
	for _, want := range []string{
		"| npm | `WholeHook` | `cached` | deps | 1.10× at 100, 1.15× at 400, 1.25× at 2,000 | — | — | 0.5–1.5 |",
		"| npm | `WholeHook` | `cold` | deps | 2.00× at 100, 3.00× at 400, 10.00× at 2,000 | — | 20 MiB at 2,000 | 0.5–1.5 |",
		"| npm | `HookPath` | `cold` | locked | 1.25× at 1,000, 12.50× at 10,000 | `npm-ls`: 100× faster at 1,000, 100× faster at 10,000 | — | — |",
		"| gitregistry | `RefreshOneChange` | `gitcache` | entries | — | `git-fetch-checkout`: 16.00× slower at 1,000, 42.00× slower at 10,000 | — | — |",
		// The curve tables: ratios, the tool, peak memory and load per size.
		"| 2,000 | 40 ms | 10.00× | 20 MiB | 5 ms | 1.25× | 4 ms | 200 µs | — | 1.50 |",
		"| 10,000 | 84 ms | 42.00× slower | 2 ms |",
		"this machine has 2 CPUs",
		// Measured in process: no ratio to the null PM's process.
		"| npm | `WholeHook` | `in-process` | deps | — | — | — | 0.5–1.5 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}
