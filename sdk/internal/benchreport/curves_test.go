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
