package benchreport

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Role is what a variant of a hook-path benchmark measures.
type Role int

const (
	// RolePM is a PM's own hook path (spawn, initialize, one request, exit).
	RolePM Role = iota
	// RoleNull is the SDK's null PM: the floor of any PM built on the SDK.
	RoleNull
	// RoleBare is a Go binary that only starts and exits.
	RoleBare
	// RoleTool is the ecosystem's own tool (cargo metadata, npm ls, ...).
	RoleTool
	// RoleInProcess is the PM's work measured without a process start.
	RoleInProcess
)

var toolName = regexp.MustCompile(`^(npm-ls|pip-list|(cargo-)?metadata|git-ls-files|git-fetch(-checkout)?|git-clone|uv-pip-list|pnpm-ls|yarn-list)$`)

// Classify returns the role of the variant named name (a sub-benchmark
// path) and whether it is a cold run.
func Classify(name string) (role Role, cold bool) {
	lower := strings.ToLower(name)
	segs := strings.Split(lower, "/")
	last := segs[len(segs)-1]
	switch {
	case slices.ContainsFunc(segs, func(s string) bool { return s == "nullpm" || s == "null-pm" || s == "null" }):
		return RoleNull, false
	case slices.ContainsFunc(segs, func(s string) bool { return s == "barego" || s == "bare-go" || s == "bare" }):
		return RoleBare, false
	case toolName.MatchString(last):
		return RoleTool, false
	}
	cold = strings.Contains(lower, "cold") || strings.Contains(lower, "no-index")
	if strings.Contains(lower, "in-process") || strings.Contains(lower, "inprocess") || strings.Contains(lower, "in_process") {
		return RoleInProcess, cold
	}
	return RolePM, cold
}

// ToolLabel is how the report names the ecosystem tool of a variant.
func ToolLabel(name string) string {
	last := name[strings.LastIndex(name, "/")+1:]
	if last == "metadata" {
		return "cargo metadata"
	}
	return strings.Replace(last, "-", " ", 1)
}

// Variant is one measured variant of a benchmark.
type Variant struct {
	// Name is the sub-benchmark path below the benchmark ("npm/cold").
	Name string
	Role Role
	Cold bool
	// Ns is the time per operation in nanoseconds.
	Ns float64
	// CPUNs is the CPU time per operation of the measured process, when
	// reported (a "<variant>-cpu-ms" metric), else 0.
	CPUNs float64
	// PeakKiB is the peak resident memory of the measured process, when
	// reported (a "<variant>-peak-RSS-KiB" metric), else 0.
	PeakKiB float64
	// Result is the result line the variant comes from.
	Result Result
	// Split is set when the variant is one of several reported as metrics
	// of a single result line.
	Split bool
}

// Group is one benchmark: a package's top-level Benchmark function and
// its variants.
type Group struct {
	Pkg, Bench string
	Variants   []Variant
}

// Module returns the repository directory of the group's package
// ("pm-cargo").
func (g *Group) Module() string {
	const prefix = "github.com/symposium-dev/symposium-pm/"
	rest, ok := strings.CutPrefix(g.Pkg, prefix)
	if !ok {
		return g.Pkg
	}
	return strings.SplitN(rest, "/", 2)[0]
}

// PM returns the PM's name for groups in a pm-* module ("cargo"), else "".
func (g *Group) PM() string {
	m, ok := strings.CutPrefix(g.Module(), "pm-")
	if !ok {
		return ""
	}
	return m
}

// find returns the first variant with role r (and, for RolePM, the given
// coldness), or nil.
func (g *Group) find(r Role, cold bool) *Variant {
	for i, v := range g.Variants {
		if v.Role == r && (r != RolePM || v.Cold == cold) {
			return &g.Variants[i]
		}
	}
	return nil
}

// Null, Bare and Tool return the floors and the tool of the group, or nil.
func (g *Group) Null() *Variant { return g.find(RoleNull, false) }

// Bare returns the bare Go binary's variant, or nil.
func (g *Group) Bare() *Variant { return g.find(RoleBare, false) }

// Tool returns the ecosystem tool's variant, or nil.
func (g *Group) Tool() *Variant { return g.find(RoleTool, false) }

// Cold returns the PM's cold hook path, or nil.
func (g *Group) Cold() *Variant { return g.find(RolePM, true) }

// Cached returns the PM's cached hook path: the variant named "cached" if
// any, else the first warm one; or nil.
func (g *Group) Cached() *Variant {
	for i, v := range g.Variants {
		if v.Role == RolePM && !v.Cold && strings.Contains(strings.ToLower(v.Name), "cached") {
			return &g.Variants[i]
		}
	}
	return g.find(RolePM, false)
}

// Metric returns the value of unit in the first of the group's results
// that reports it.
func (g *Group) Metric(unit string) (float64, bool) {
	for _, v := range g.Variants {
		if x, ok := v.Result.Value(unit); ok {
			return x, true
		}
	}
	return 0, false
}

// Workspace describes the size of the workspace a benchmark measured,
// from its "direct-deps", "locked-pkgs" and "members" metrics, or "—".
func (g *Group) Workspace() string {
	var parts []string
	for _, m := range []struct{ unit, word string }{{"members", "members"}, {"direct-deps", "direct deps"}, {"locked-pkgs", "locked"}} {
		if x, ok := g.Metric(m.unit); ok && x > 0 {
			parts = append(parts, thousands(int(x))+" "+m.word)
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// IsHookPath reports whether the group compares a PM's hook path with the
// floors: it has a PM variant, a null PM and a bare Go binary.
func (g *Group) IsHookPath() bool {
	return g.Null() != nil && g.Bare() != nil && (g.Cold() != nil || g.Cached() != nil)
}

var (
	msMetric   = regexp.MustCompile(`^(.+?)(-cpu)?-ms$`)
	peakMetric = regexp.MustCompile(`^(.+?)-peak-RSS-KiB$`)
)

// Groups arranges results into groups, in the order first seen. A result
// reporting variants as "<variant>-ms" metrics (and "<variant>-cpu-ms")
// becomes one variant per metric.
func Groups(results []Result) []*Group {
	var out []*Group
	index := map[string]*Group{}
	for _, r := range results {
		bench, sub, _ := strings.Cut(r.Name, "/")
		key := r.Pkg + " " + bench
		g := index[key]
		if g == nil {
			g = &Group{Pkg: r.Pkg, Bench: bench}
			index[key] = g
			out = append(out, g)
		}
		split := map[string]*Variant{}
		var order []string
		for _, u := range r.Units {
			m := msMetric.FindStringSubmatch(u)
			peak := peakMetric.FindStringSubmatch(u)
			if m == nil && peak == nil {
				continue
			}
			if peak != nil {
				m = []string{peak[0], peak[1], ""}
			}
			name := m[1]
			if sub != "" {
				name = sub + "/" + name
			}
			v := split[name]
			if v == nil {
				role, cold := Classify(name)
				v = &Variant{Name: name, Role: role, Cold: cold, Result: r, Split: true}
				split[name] = v
				order = append(order, name)
			}
			switch {
			case peak != nil:
				v.PeakKiB = r.Values[u]
			case m[2] != "":
				v.CPUNs = r.Values[u] * 1e6
			default:
				v.Ns = r.Values[u] * 1e6
			}
		}
		added := false
		for _, name := range order {
			if v := split[name]; v.Ns > 0 {
				g.Variants = append(g.Variants, *v)
				added = true
			}
		}
		if added {
			continue
		}
		ns, ok := r.Value("ns/op")
		if !ok {
			continue
		}
		role, cold := Classify(sub)
		if sub == "" {
			role = RoleInProcess // a benchmark without variants: no process comparison
		}
		g.Variants = append(g.Variants, Variant{Name: sub, Role: role, Cold: cold, Ns: ns, Result: r})
	}
	for _, g := range out {
		slices.SortStableFunc(g.Variants, func(a, b Variant) int { return rank(a) - rank(b) })
	}
	return out
}

// rank orders variants in a table: the PM's hook path cold then cached,
// the ecosystem tool, the floors, then in-process figures.
func rank(v Variant) int {
	switch v.Role {
	case RolePM:
		if v.Cold {
			return 0
		}
		return 1
	case RoleTool:
		return 2
	case RoleNull:
		return 3
	case RoleBare:
		return 4
	}
	return 5
}

// Info describes the run, for the report's header.
type Info struct {
	// Date, Machine and Go describe when and where the run happened.
	Date, Machine, Go string
	// Benchtime is the -benchtime the benchmarks ran with.
	Benchtime string
	// CPUs says how many CPUs the machine has ("2 CPUs"), for the summary.
	CPUs string
	// Duration names each module measured: how long its benchmarks took,
	// when they ran and the load at their start and end.
	Duration string
	// Plots is the directory, relative to the report, holding each growth
	// curve's plot as <Curve.Slug>.svg; empty to link none.
	Plots string
}

// Write renders the report for groups.
func Write(w io.Writer, info Info, groups []*Group) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmark report\n\n")
	p("Generated by `make bench` (`scripts/bench.sh`) on %s: %s, %s, `-benchtime %s`.\n", info.Date, info.Machine, info.Go, info.Benchtime)
	if info.Duration != "" {
		p("Each module's benchmarks, how long they took, when, and the one-minute load average\nat their start and end: %s.\n", info.Duration)
	}
	p("Every ratio divides two figures of one benchmark, measured side by side (interleaved)\n")
	p("on the same machine and workload, so load on the machine affects both; absolute times\n")
	p("are not comparable between benchmarks or runs. Regenerate with `make bench` (or\n")
	p("`make bench BENCHTIME=3s`; `make bench BENCH_MODULES=\"sdk pm-npm\"` measures those\n")
	p("modules again and keeps the others' last figures from `bench/out/`).\n\n")
	p("- **hook path**: what Symposium runs on every agent hook: spawn the PM, `initialize`,\n")
	p("  one request (`list_deps`; `active_plugins` for a git registry), close stdin, wait for exit.\n")
	p("  *Cold*: empty cache directory (lockfiles and manifests parsed); *cached*: the PM's\n")
	p("  persisted cache from an earlier run is valid.\n")
	p("- **× null PM**: time ÷ the SDK's null PM's hook path (the same handshake with an empty\n")
	p("  answer): what the PM's own work costs on top of the harness; 1.00 is the floor.\n")
	p("- **× bare Go**: time ÷ a Go binary that only starts and exits: the process-start floor.\n")
	p("- **tool ÷ PM**: the ecosystem's own tool on the same workspace ÷ the PM; above 1 the\n")
	p("  PM is that many times faster than asking the tool.\n\n")

	curves := Curves(groups)
	curved := map[*Group]bool{}
	for _, c := range curves {
		curved[c.Group] = true
	}
	var hooks, harness, hosts, others []*Group
	for _, g := range groups {
		switch {
		case curved[g]:
		case strings.HasPrefix(g.Bench, "DiscoverCombined"):
			hosts = append(hosts, g)
		case g.IsHookPath() && g.PM() != "":
			hooks = append(hooks, g)
		case g.Module() == "sdk" && strings.HasSuffix(g.Pkg, "/benchkit"):
			harness = append(harness, g)
		case g.Module() == "rss":
		default:
			others = append(others, g)
		}
	}
	rss := rssByPM(groups)

	p("## At a glance\n\n")
	if len(hooks) == 0 {
		p("No PM hook-path benchmark ran.\n\n")
	} else {
		p("| PM | benchmark | workspace | cold | cached | cached × null PM | cached × bare Go | ecosystem tool | tool ÷ cold | tool ÷ cached | peak RSS¹ | load |\n")
		p("|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
		for _, g := range hooks {
			cold, cached, null, bare, tool := g.Cold(), g.Cached(), g.Null(), g.Bare(), g.Tool()
			toolCell, toolCold, toolCached := "—", "—", "—"
			if tool != nil {
				toolCell = ToolLabel(tool.Name) + " " + dur(tool.Ns)
				toolCold, toolCached = ratio(tool, cold), ratio(tool, cached)
			}
			load := "—"
			if l, ok := g.Metric("load1"); ok {
				load = fmt.Sprintf("%.2f", l)
			}
			p("| %s | `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", g.PM(), g.Bench, g.Workspace(), durOf(cold), durOf(cached),
				ratio(cached, null), ratio(cached, bare), toolCell, toolCold, toolCached, kib(rss[g.PM()+"/cached"]), load)
		}
		p("\n")
		if len(rss) > 0 {
			p("¹ Cached hook path on the example workspace (see [Peak resident memory](#peak-resident-memory)); the null PM peaks at %s, a bare Go binary at %s.\n\n", kib(rss["nullpm/cached"]), kib(rss["barego/cached"]))
		}
	}

	if len(curves) > 0 {
		p("**Growth at a glance.** Each benchmark measured at several sizes (see [Growth curves](#growth-curves)):\n")
		p("the PM's time as a multiple of the null PM's at each size (1.00× is the floor), against the\n")
		p("ecosystem tool where it ran at that size, its peak resident memory at the largest size, and the\n")
		p("one-minute load average the sizes were measured at (this machine has %s).\n\n", cmp.Or(info.CPUs, "its CPUs shared"))
		p("| PM | benchmark | variant | by | × null PM | vs the ecosystem tool | peak RSS | load |\n")
		p("|---|---|---|---|---|---|---:|---:|\n")
		for _, c := range curves {
			if err := c.WriteGlance(&b); err != nil {
				return err
			}
		}
		p("\n")
	}

	if h := harnessSummary(harness); h != "" {
		p("%s\n\n", h)
	}

	for _, g := range hooks {
		null, bare, tool := g.Null(), g.Bare(), g.Tool()
		p("## %s: `%s` (%s)\n\n", g.PM(), g.Bench, shortPkg(g.Pkg))
		p("| variant | what | time/op | × null PM | × bare Go | tool ÷ this | CPU/op |\n")
		p("|---|---|---:|---:|---:|---:|---:|\n")
		for i := range g.Variants {
			v := &g.Variants[i]
			what := describe(v, g)
			toolRatio := "—"
			if tool != nil && (v.Role == RolePM || v.Role == RoleInProcess) {
				toolRatio = ratio(tool, v)
			}
			cpu := "—"
			if v.CPUNs > 0 {
				cpu = dur(v.CPUNs)
			}
			nr, br := ratio(v, null), ratio(v, bare)
			if v.Role == RoleInProcess {
				nr, br = "—", "—"
			}
			p("| `%s` | %s | %s | %s | %s | %s | %s |\n", v.Name, what, dur(v.Ns), nr, br, toolRatio, cpu)
		}
		if n := runs(g); n != "" {
			p("\n%s\n", n)
		}
		p("\n")
	}

	if len(curves) > 0 {
		p("## Growth curves\n\n")
		p("Benchmarks measured at several sizes, each size's variants interleaved with the null PM\n")
		p("on the same workspace: the ratio at each size is what the PM's own work costs on top\n")
		p("of starting a process and the handshake, so a flat line means the PM keeps up as the\n")
		p("workspace grows.\n\n")
		for _, c := range curves {
			p("### %s: `%s` by %s (%s)\n\n", cmp.Or(c.Group.PM(), c.Group.Module()), c.Group.Bench, c.Key, shortPkg(c.Group.Pkg))
			if info.Plots != "" {
				p("![%s %s by %s](%s/%s.svg)\n\n", cmp.Or(c.Group.PM(), c.Group.Module()), c.Group.Bench, c.Key, info.Plots, c.Slug())
			}
			if err := c.WriteTable(&b); err != nil {
				return err
			}
			p("\n")
		}
	}

	if len(hosts) > 0 {
		writeHosts(&b, hosts)
	}

	if len(harness) > 0 {
		p("## SDK harness (`sdk/benchkit`)\n\n")
		p("| benchmark | time/op | other |\n|---|---:|---|\n")
		for _, g := range harness {
			for _, v := range g.Variants {
				p("| `%s` | %s | %s |\n", join(g.Bench, v.Name), dur(v.Ns), extras(v.Result))
			}
		}
		p("\n")
	}

	if len(rss) > 0 {
		p("## Peak resident memory\n\n")
		p("Maximum resident set size of each binary over one hook path on `examples/workspace`\n")
		p("(a Rust, an npm and a Python project side by side; the git registry PM on\n")
		p("`examples/registry`), read from the kernel's accounting of the exited process.\n\n")
		p("| binary | cold | cached |\n|---|---:|---:|\n")
		for _, name := range rssOrder(rss) {
			p("| %s | %s | %s |\n", name, kib(rss[name+"/cold"]), kib(rss[name+"/cached"]))
		}
		p("\n")
	}

	if len(others) > 0 {
		p("## Other benchmarks\n\n")
		p("In-process work (no process start) and the SDK's own packages.\n\n")
		p("| package | benchmark | time/op | B/op | allocs/op | other |\n|---|---|---:|---:|---:|---|\n")
		for _, g := range others {
			for _, v := range g.Variants {
				bop, aop := "—", "—"
				if x, ok := v.Result.Value("B/op"); ok {
					bop = fmt.Sprintf("%.0f", x)
				}
				if x, ok := v.Result.Value("allocs/op"); ok {
					aop = fmt.Sprintf("%.0f", x)
				}
				p("| %s | `%s` | %s | %s | %s | %s |\n", shortPkg(g.Pkg), join(g.Bench, v.Name), dur(v.Ns), bop, aop, extras(v.Result))
			}
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHosts writes the section on what discover adds to its PMs: one row
// per DiscoverCombined benchmark (a workspace layout), from its variants
// and ratios.
func writeHosts(b *strings.Builder, hosts []*Group) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Host: `discover` over its PMs (`sdk/host/discovery`)\n\n")
	p("`symposium-pm discover` on a workspace of 1,000 plugins (300 cargo, 400 npm, 300 pypi,\n")
	p("every PM answering from its persisted cache), interleaved with each PM alone answering\n")
	p("what discover asks of it, the three PMs spawned together with no host, and the host's\n")
	p("judging of the same offers in process (*validate*). *cli* is the `symposium-pm` binary;\n")
	p("*library* is `discovery.Discover` in the benchmark's process (no process start, no\n")
	p("printing; its time depends on what ran before it in that process, so the ratios to the\n")
	p("PMs use *cli*). A host that adds little keeps *cli* within 1.2× its slowest PM plus its\n")
	p("own judging (the first ratio at most 1). The PMs run side by side, so on a machine with\n")
	p("fewer cores than PMs plus host they cannot take less than their CPU time spread over the\n")
	p("cores: *PMs together* is that cost with no host at all. *CPU* is the CPU time of the\n")
	p("three PMs (each measured alone, summed) and of the cli's whole run (the host and the PMs\n")
	p("it spawned). `DiscoverCombined` lays the workspace out as the installers leave it (npm's\n")
	p("lockfile and record of the install, cargo vendor's checksums, pip's RECORD), where the\n")
	p("PMs trust what the installers own; `DiscoverCombinedHandMade` has hand-made npm and cargo\n")
	p("trees, where they stamp every file they read. *Least possible* is the least time a cli\n")
	p("could take on this machine's cores if it spent no CPU beyond starting its binary and\n")
	p("judging: the PMs' CPU, the binary's start (`symposium-pm --version`) and validate's CPU,\n")
	p("spread perfectly over the cores. Where *target ÷ least* is below 1, the target\n")
	p("(1.2 × slowest + validate) lies under what the machine allows, for any host.\n\n")
	p("| benchmark | cli | library | slowest PM | PMs together | validate | CPU: PMs, cli | cli ÷ (1.2 × slowest + validate) | cli ÷ (1.2 × together + validate) | library ÷ CPU floor | least possible | target ÷ least | load |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range hosts {
		ns, cpu := map[string]float64{}, map[string]float64{}
		for _, v := range g.Variants {
			ns[v.Name], cpu[v.Name] = v.Ns, v.CPUNs
		}
		slowest := max(ns["cargo"], ns["npm"], ns["pypi"])
		metric := func(unit string) string {
			if x, ok := g.Metric(unit); ok {
				return fmt.Sprintf("%.2f", x)
			}
			return "—"
		}
		least := "—"
		if x, ok := ns["cli-least"]; ok {
			least = dur(x)
		}
		p("| `%s` | %s | %s | %s | %s | %s | %s, %s | %s | %s | %s | %s | %s | %s |\n", g.Bench, dur(ns["cli"]), dur(ns["discover"]), dur(slowest), dur(ns["together"]), dur(ns["validate"]),
			dur(ns["pm-cpu-sum"]), dur(cpu["cli"]), metric("cli/(1.2*slowest+validate)"), metric("cli/(1.2*together+validate)"), metric("discover/cpu-floor"),
			least, metric("target/least"), metric("load1"))
	}
	p("\n")
}

// harnessSummary is one sentence on the SDK harness's own figures: the
// round trip on a running PM, throughput with requests in flight, idle
// memory (results reporting "req/s" and "RSS-KiB").
func harnessSummary(harness []*Group) string {
	var parts []string
	for _, g := range harness {
		for _, v := range g.Variants {
			r := v.Result
			switch {
			case strings.Contains(g.Bench, "RoundTrip"):
				parts = append(parts, "one request's round trip on a running PM "+dur(v.Ns))
			case hasUnit(r, "req/s"):
				parts = append(parts, fmt.Sprintf("throughput %s req/s (`%s`)", num(r.Values["req/s"]), g.Bench))
			case hasUnit(r, "RSS-KiB"):
				parts = append(parts, "idle resident memory "+kib(r.Values["RSS-KiB"]))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "SDK harness, with the null PM: " + strings.Join(parts, "; ") + "."
}

func hasUnit(r Result, unit string) bool {
	_, ok := r.Values[unit]
	return ok
}

func describe(v *Variant, g *Group) string {
	switch v.Role {
	case RoleNull:
		return "null PM (floor)"
	case RoleBare:
		return "bare Go binary (floor)"
	case RoleTool:
		return ToolLabel(v.Name)
	case RoleInProcess:
		return "in process, no spawn"
	}
	if v.Cold {
		return g.PM() + " hook path, cold"
	}
	return g.PM() + " hook path, cached"
}

// runs notes how many iterations each variant's figure comes from.
func runs(g *Group) string {
	var parts []string
	for _, v := range g.Variants {
		if v.Split {
			return "Variants reported by one benchmark as medians of interleaved samples (see its doc comment)."
		}
		parts = append(parts, fmt.Sprintf("`%s` %d", v.Name, v.Result.N))
	}
	return "Iterations: " + strings.Join(parts, ", ") + "."
}

// rssByPM collects the peak RSS figures reported by the probe ("rss"
// results named RSS/<binary>/<cold|cached>), keyed "<pm>/<cold|cached>".
func rssByPM(groups []*Group) map[string]float64 {
	out := map[string]float64{}
	for _, g := range groups {
		if g.Module() != "rss" {
			continue
		}
		for _, v := range g.Variants {
			if kb, ok := v.Result.Value("peak-RSS-KiB"); ok {
				out[v.Name] = kb
			}
		}
	}
	return out
}

func rssOrder(rss map[string]float64) []string {
	var names []string
	for k := range rss {
		n, _, _ := strings.Cut(k, "/")
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	rank := func(n string) int {
		switch n {
		case "barego":
			return 0
		case "nullpm":
			return 1
		}
		return 2
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

func join(bench, sub string) string {
	if sub == "" {
		return bench
	}
	return bench + "/" + sub
}

func shortPkg(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/symposium-dev/symposium-pm/")
}

// extras formats a result's metrics other than time, B/op and allocs/op
// and the per-variant "-ms" metrics.
func extras(r Result) string {
	var parts []string
	for _, u := range r.Units {
		if u == "ns/op" || u == "B/op" || u == "allocs/op" || msMetric.MatchString(u) || peakMetric.MatchString(u) || u == "load1" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", num(r.Values[u]), u))
	}
	return strings.Join(parts, ", ")
}

func ratio(a, b *Variant) string {
	if a == nil || b == nil || b.Ns <= 0 || a.Ns <= 0 {
		return "—"
	}
	r := a.Ns / b.Ns
	if r >= 100 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

func durOf(v *Variant) string {
	if v == nil {
		return "—"
	}
	return dur(v.Ns)
}

// dur formats nanoseconds with three significant digits.
func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return num(ns/1e9) + " s"
	case ns >= 1e6:
		return num(ns/1e6) + " ms"
	case ns >= 1e3:
		return num(ns/1e3) + " µs"
	}
	return num(ns) + " ns"
}

func kib(v float64) string {
	if v <= 0 {
		return "—"
	}
	return num(v/1024) + " MiB"
}

// num formats v with three significant digits (integers as they are).
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
