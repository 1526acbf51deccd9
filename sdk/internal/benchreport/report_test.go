package benchreport

import (
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := `goos: linux
pkg: example.com/m/p
BenchmarkA/x-2   	      10	  1500 ns/op	  12 B/op	  3 allocs/op
BenchmarkA/y-2   	       1	  2000 ns/op	  9.5 cached-ms	  1.25 cached/nullpm
BenchmarkLogs
    bench_test.go:3: a log line
--- BENCH: BenchmarkA/y-2
BenchmarkB-423-2 	       5	   100 ns/op
ok  	example.com/m/p	1.2s
`
	rs, err := Parse(strings.NewReader(in), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results: %+v", len(rs), rs)
	}
	if rs[0].Pkg != "example.com/m/p" || rs[0].Name != "A/x" || rs[0].N != 10 || rs[0].Values["B/op"] != 12 {
		t.Errorf("first result %+v", rs[0])
	}
	if got := strings.Join(rs[1].Units, ","); got != "ns/op,cached-ms,cached/nullpm" {
		t.Errorf("units %s", got)
	}
	if rs[2].Name != "B-423" {
		t.Errorf("name %q: only the GOMAXPROCS suffix is removed", rs[2].Name)
	}
	if _, err := Parse(strings.NewReader("BenchmarkX-2 1 abc ns/op\n"), 2); err == nil {
		t.Error("a malformed value is an error")
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		role Role
		cold bool
	}{
		{"nullpm", RoleNull, false},
		{"hook-path/nullpm", RoleNull, false},
		{"barego", RoleBare, false},
		{"npm-ls", RoleTool, false},
		{"pip-list", RoleTool, false},
		{"hook-path/metadata", RoleTool, false},
		{"git-ls-files", RoleTool, false},
		{"entries=1000/git-fetch-checkout", RoleTool, false},
		{"entries=1000/gitcache", RolePM, false},
		{"npm/cold", RolePM, true},
		{"npm/cached", RolePM, false},
		{"pypi-cold", RolePM, true},
		{"gitregistry", RolePM, false},
		{"gitregistry-no-index", RolePM, true},
		{"in-process-cold", RoleInProcess, true},
		{"inprocess/list_deps-cached", RoleInProcess, false},
	} {
		role, cold := Classify(tc.name)
		if role != tc.role || cold != tc.cold {
			t.Errorf("Classify(%q) = %v, %v; want %v, %v", tc.name, role, cold, tc.role, tc.cold)
		}
	}
}

// TestReport renders a report from a recorded run of every module's
// benchmarks (-benchtime 1x) and the RSS probe, and checks the ratios are
// computed from the matching variants.
func TestReport(t *testing.T) {
	f, err := os.Open("testdata/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := Parse(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	groups := Groups(rs)
	var pms []string
	for _, g := range groups {
		if g.IsHookPath() && g.PM() != "" {
			pms = append(pms, g.PM())
		}
	}
	if got := strings.Join(pms, ","); got != "cargo,npm,pypi,gitregistry" {
		t.Errorf("hook-path groups %s", got)
	}
	var b strings.Builder
	if err := Write(&b, Info{Date: "today", Machine: "m", Go: "go", Benchtime: "1x"}, groups); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		// npm: cached 262383273 ns ÷ null 131510287 ns, ÷ bare 64304538 ns; npm ls 10022362233 ns.
		"| npm | `HookPath` | — | 496 ms | 262 ms | 2.00× | 4.08× | npm ls 10.0 s | 20.23× | 38.20× | 9.40 MiB | — |",
		// cargo: variants split out of one result's -ms metrics.
		"| `hook-path/cached` | cargo hook path, cached | 107 ms | 1.28× | 6.54× | 37.39× | 32.2 ms |",
		"| gitregistry | `ActivePluginsNone` | — | 447 ms | 365 ms | 2.23× |",
		"throughput 1115 req/s",
		"| nullpm | 6.68 MiB | 6.80 MiB |",
		"| pm-npm/npmpm | `FetchNone` | 242 µs | 10736 | 173 |",
		// discover over its PMs: npm the slowest (11.03 ms).
		"| `DiscoverCombined` | 39.2 ms | 36.7 ms | 11.0 ms | 17.4 ms | 8.30 ms | 32.7 ms, 60.4 ms | 1.82 | 1.34 | 1.45 | 22.3 ms | 0.97 | 1.53 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "`DiscoverCombined/cli`") {
		t.Error("DiscoverCombined's variants are listed among the other benchmarks too")
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{1234.5, "1234"}, {12.345, "12.3"}, {1.2345, "1.23"}, {0.012345, "0.0123"}, {7, "7"}} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
