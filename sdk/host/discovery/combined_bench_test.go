//go:build unix

package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// combined sizes: plugins per ecosystem in the combined workspace, 1,000
// plugins in all.
const combinedCargo, combinedNPM, combinedPyPI = 300, 400, 300

const combinedSkill = "---\nname: s\ndescription: d\n---\n"

// genCombined writes a workspace that is a Rust crate with combinedCargo
// vendored dependencies, an npm project with combinedNPM installed ones and
// a Python project with combinedPyPI in its virtualenv, every dependency
// embedding a plugin with one skill. It returns each PM's dependencies as
// its list_deps reports them.
//
// installed lays the workspace out as the installers leave it: npm's
// package-lock.json and its record of the install,
// node_modules/.package-lock.json; a .cargo-checksum.json in every vendored
// crate, as `cargo vendor` writes it and cargo requires; pip's RECORD in
// every .dist-info. Otherwise the npm and cargo trees are hand-made
// (no lockfile, no record, no checksums): the PMs then stamp every file
// they read, as they must for content a user may edit.
func genCombined(tb testing.TB, ws string, installed bool) map[string][]protocol.PackageID {
	tb.Helper()
	files := map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n",
		"src/lib.rs":         "",
		".venv/pyvenv.cfg":   "version = 3.12.1\n",
	}
	deps := map[string][]protocol.PackageID{}
	var cdecl, clock, cnames strings.Builder
	for i := range combinedCargo {
		n := fmt.Sprintf("crate-%04d", i)
		fmt.Fprintf(&cdecl, "%s = \"1\"\n", n)
		fmt.Fprintf(&cnames, "%q,", n)
		fmt.Fprintf(&clock, "\n[[package]]\nname = %q\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n", n)
		files["vendor/"+n+"/Cargo.toml"] = fmt.Sprintf("[package]\nname = %q\nversion = \"1.0.0\"\n", n)
		files["vendor/"+n+"/skills/s/SKILL.md"] = combinedSkill
		if installed {
			files["vendor/"+n+"/.cargo-checksum.json"] = fmt.Sprintf(`{"files":{"Cargo.toml":%q,"skills/s/SKILL.md":%q},"package":%q}`,
				sha256Hex(files["vendor/"+n+"/Cargo.toml"]), sha256Hex(combinedSkill), sha256Hex(n))
		}
		deps["cargo"] = append(deps["cargo"], protocol.PackageID{PM: "cargo", Name: n, Version: "1.0.0"})
	}
	files["Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\n" + cdecl.String()
	files["Cargo.lock"] = "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [" + strings.TrimSuffix(cnames.String(), ",") + "]\n" + clock.String()
	var ndecl, nlock []string
	for i := range combinedNPM {
		n := fmt.Sprintf("pkg-%04d", i)
		nlock = append(nlock, fmt.Sprintf(`"node_modules/%s":{"version":"1.0.0","resolved":"https://registry.npmjs.org/%s/-/%s-1.0.0.tgz","integrity":"sha512-%s"}`, n, n, n, sha256Hex(n)))
		files["node_modules/"+n+"/package.json"] = fmt.Sprintf(`{"name":%q,"version":"1.0.0"}`, n)
		files["node_modules/"+n+"/skills/s/SKILL.md"] = combinedSkill
		ndecl = append(ndecl, fmt.Sprintf("%q:\"^1\"", n))
		deps["npm"] = append(deps["npm"], protocol.PackageID{PM: "npm", Name: n, Version: "1.0.0"})
	}
	files["package.json"] = `{"name":"app","version":"1.0.0","dependencies":{` + strings.Join(ndecl, ",") + `}}`
	if installed {
		head := `{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{`
		files["package-lock.json"] = head + `"":{"name":"app","version":"1.0.0","dependencies":{` + strings.Join(ndecl, ",") + `}},` + strings.Join(nlock, ",") + `}}`
		files["node_modules/.package-lock.json"] = head + strings.Join(nlock, ",") + `}}`
	}
	site := ".venv/lib/python3.12/site-packages/"
	var pdecl []string
	for i := range combinedPyPI {
		n := fmt.Sprintf("dist%04d", i)
		di := site + n + "-1.0.dist-info/"
		files[di+"METADATA"] = "Metadata-Version: 2.1\nName: " + n + "\nVersion: 1.0\n\n"
		files[di+"RECORD"] = n + "/__init__.py,,\n"
		files[site+n+"/__init__.py"] = ""
		files[site+n+"/SYMPOSIUM.toml"] = ""
		files[site+n+"/skills/s/SKILL.md"] = combinedSkill
		pdecl = append(pdecl, fmt.Sprintf("%q", n))
		deps["pypi"] = append(deps["pypi"], protocol.PackageID{PM: "pypi", Name: n, Version: "1.0"})
	}
	files["pyproject.toml"] = "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [" + strings.Join(pdecl, ", ") + "]\n"
	for name, data := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return deps
}

// sha256Hex is the hex SHA-256 of s, for the checksums and integrities the
// installers write.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// BenchmarkDiscoverCombined measures discover on a combined workspace of
// 1,000 plugins (300 cargo, 400 npm, 300 pypi), laid out as the installers
// leave it (see genCombined), against its slowest PM:
// each round runs discover (spawning the three PMs, all answering from
// their persisted caches), each PM alone answering what discover asks of
// it (its whole hook, then its workspace), and "validate": the
// host's own judging (validation, decision) of the same 1,000 offers
// in-process, one PM's offers after the other's, without PMs. It reports
// the medians, discover/slowest, host-ms (discover minus the slowest PM),
// and discover/(1.2*slowest+validate), whose target is ≤ 1.
//
// On a machine of few cores that target may lie below what the CPU allows:
// the PMs run at once and the host judges while they answer, so discover
// cannot take less wall time than all their CPU time spread over the cores.
// pm-cpu-sum-ms is the PMs' CPU time summed (each measured alone), and
// cpu-floor-ms that plus the host's own CPU in discover, divided by the
// cores the process may use (runtime.NumCPU: the affinity set under
// taskset); discover/cpu-floor says how far discover is
// from that floor.
//
// Two variants put that in numbers. "cli" is discover as a user runs it,
// the symposium-pm binary: a fresh process, with its own start, a heap it
// faults in as it grows, and the JSON it prints, where "discover" is the
// library call in this warm benchmark process. The library call's time
// depends on what ran before it in this process: on 2 cores about 20 ms
// right after validate, 27 to 34 ms right after a variant that spawns
// processes (a cause not pinned down: neither a collection nor the heap
// handed back to the system before it changes that); Interleave's
// rotation spreads that over the rounds. The cli, a fresh process each
// run, does not move so. "together" is the three
// PMs spawned at once with no host, each asked what discover asks of it:
// what running them side by
// side costs on this machine's cores, which no host can beat. The ratios
// cli/(1.2*slowest+validate) (the target, on the binary), and
// discover/(1.2*together+validate) and cli/(1.2*together+validate) (what
// the host adds to its PMs as they run beside each other) are reported.
//
// Run with -cpu 1,2 to compare the host on one core with two (the PMs,
// separate processes, keep their own GOMAXPROCS, and so does the cli
// variant), and under taskset to pin everything to fewer cores.
func BenchmarkDiscoverCombined(b *testing.B) { benchDiscoverCombined(b, true) }

// BenchmarkDiscoverCombinedHandMade is BenchmarkDiscoverCombined on
// hand-made npm and cargo trees (no lockfile, no installer's record, no
// checksums), where the PMs stamp every file they read.
func BenchmarkDiscoverCombinedHandMade(b *testing.B) { benchDiscoverCombined(b, false) }

func benchDiscoverCombined(b *testing.B, installed bool) {
	bins := b.TempDir()
	for _, pm := range BuiltinPMs {
		benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-"+pm+"/cmd/symposium-pm-"+pm, bins)
	}
	cliBin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/sdk/cmd/symposium-pm", bins)
	ws, cache, home := b.TempDir(), b.TempDir(), b.TempDir()
	deps := genCombined(b, ws, installed)
	env := map[string]string{"CARGO_HOME": home, "HOME": home, "VIRTUAL_ENV": ""}
	set := Setup(&config.Config{}, bins, cache)
	if len(set.Specs) != 3 {
		b.Fatalf("setup: %+v", set)
	}
	// The symposium-pm binary runs with host.TuneGC; so does discover here.
	defer host.TuneGC()()
	discover := func() benchkit.Hook {
		pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: cache, Env: env}, set.Specs...)
		c0, start := cpuTime(), time.Now()
		res := Discover(b.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms, Kinds: set.Kinds})
		pms.Close()
		h := benchkit.Hook{Wall: time.Since(start), CPU: cpuTime() - c0}
		if len(res.Plugins) != combinedCargo+combinedNPM+combinedPyPI {
			b.Fatalf("discover found %d plugins, warnings %q", len(res.Plugins), res.Warnings)
		}
		return h
	}
	// Fill the PMs' caches (a second run persists what the first could not).
	for range 2 {
		discover()
		time.Sleep(60 * time.Millisecond)
	}
	offers := captureOffers(b, ws, cache, env, set)
	validate := func() benchkit.Hook {
		d := &discoverer{o: Options{Workspace: ws, Config: &config.Config{}, Kinds: set.Kinds}, depsReady: make(chan struct{}), openRoot: os.OpenRoot}
		close(d.depsReady)
		c0, start := cpuTime(), time.Now()
		n := 0
		for _, pm := range BuiltinPMs {
			for _, j := range d.judgeAll(b.Context(), pm, offers[pm]) {
				if j.plugin.State == NeedsConsent {
					n++
				}
			}
		}
		h := benchkit.Hook{Wall: time.Since(start), CPU: cpuTime() - c0}
		if n != combinedCargo+combinedNPM+combinedPyPI {
			b.Fatalf("validate: %d plugins need consent, want all", n)
		}
		return h
	}
	// cli is discover as a user runs it: the symposium-pm binary, a fresh
	// process with its own start, configuration and printing, over the
	// same PMs and caches. Its configuration turns the built-in registries
	// off, as discover's empty one has them: with them on, the binary
	// would also spawn the recommendations registry's PM, a fourth process
	// that discover does not run (about 4 ms more on 2 cores).
	cliHome := b.TempDir()
	if err := os.WriteFile(filepath.Join(cliHome, "config.toml"), []byte("[defaults]\nsymposium-recommendations = false\nuser-plugins = false\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cliArgs := []string{"discover", "--json", "--workspace", ws, "--cache-dir", cache}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cliArgs = append(cliArgs, "--env", k+"="+env[k])
	}
	cli := func() benchkit.Hook {
		cmd := exec.Command(cliBin, cliArgs...)
		cmd.Env = append(os.Environ(), "SYMPOSIUM_HOME="+cliHome, "HOME="+cliHome)
		h := benchkit.RunCmd(b, cmd, ws)
		var doc struct {
			Plugins []json.RawMessage
			Notes   []string
		}
		if err := json.Unmarshal(h.Out, &doc); err != nil || len(doc.Plugins) != combinedCargo+combinedNPM+combinedPyPI {
			b.Fatalf("symposium-pm discover printed %d plugins (%v)", len(doc.Plugins), err)
		}
		for _, n := range doc.Notes {
			if strings.Contains(n, config.RecommendationsName) {
				b.Fatalf("symposium-pm discover ran with the built-in registries on: %s", n)
			}
		}
		return h
	}
	// start is the symposium-pm binary starting and exiting (--version):
	// the CPU any run of the cli spends before it can spawn a PM.
	start := func() benchkit.Hook {
		h := benchkit.RunCmd(b, exec.Command(cliBin, "--version"), ws)
		if len(h.Out) == 0 {
			b.Fatal("symposium-pm --version printed nothing")
		}
		return h
	}
	var hooks []benchkit.WholeHook
	variants := []benchkit.Variant{{Name: "discover", Run: discover}, {Name: "cli", Run: cli}, {Name: "validate", Run: validate}, {Name: "start", Run: start}}
	checkOffers := func(pm string, h benchkit.Hook) {
		if _, o := h.Counts(b); o != len(deps[pm]) {
			b.Fatalf("%s offered %d plugins, want %d", pm, o, len(deps[pm]))
		}
	}
	for _, pm := range BuiltinPMs {
		// Each PM is asked what discover asks of it: the hook, and its
		// workspace (all three announce the capability).
		wh := benchkit.WholeHook{Bin: filepath.Join(bins, "symposium-pm-"+pm), Workspace: ws, CacheDir: cache, Env: env, Deps: deps[pm], AskWorkspace: true}
		hooks = append(hooks, wh)
		variants = append(variants, benchkit.Variant{Name: pm, Run: func() benchkit.Hook {
			return benchkit.RunWholeHooks(b, []benchkit.WholeHook{wh}, func(_ int, h benchkit.Hook) { checkOffers(pm, h) })
		}})
	}
	// together is the three PMs' whole hooks spawned at once, with no host:
	// what running them side by side costs on this machine's cores.
	variants = append(variants, benchkit.Variant{Name: "together", Run: func() benchkit.Hook {
		return benchkit.RunWholeHooks(b, hooks, func(i int, h benchkit.Hook) { checkOffers(BuiltinPMs[i], h) })
	}})
	// Interleave reports the CPU medians; they are taken here too, for the
	// floor.
	cpu := map[string][]time.Duration{}
	for i, v := range variants {
		variants[i].Run = func() benchkit.Hook {
			h := v.Run()
			cpu[v.Name] = append(cpu[v.Name], h.CPU)
			return h
		}
	}
	med := benchkit.Interleave(b, 10, variants...)
	cpuMed := func(name string) float64 {
		ds := slices.Sorted(slices.Values(cpu[name]))
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	slowest := max(med["cargo"], med["npm"], med["pypi"])
	b.ReportMetric(med["discover"]/slowest, "discover/slowest")
	b.ReportMetric(med["discover"]-slowest, "host-ms")
	b.ReportMetric(med["discover"]/(1.2*slowest+med["validate"]), "discover/(1.2*slowest+validate)")
	b.ReportMetric(med["cli"]/(1.2*slowest+med["validate"]), "cli/(1.2*slowest+validate)")
	b.ReportMetric(med["discover"]/(1.2*med["together"]+med["validate"]), "discover/(1.2*together+validate)")
	b.ReportMetric(med["cli"]/(1.2*med["together"]+med["validate"]), "cli/(1.2*together+validate)")
	pmCPU := cpuMed("cargo") + cpuMed("npm") + cpuMed("pypi")
	floor := (pmCPU + cpuMed("discover")) / float64(runtime.NumCPU())
	b.ReportMetric(pmCPU, "pm-cpu-sum-ms")
	b.ReportMetric(floor, "cpu-floor-ms")
	b.ReportMetric(med["discover"]/floor, "discover/cpu-floor")
	// least is the least wall time the cli could take on these cores if
	// it spent no CPU beyond starting and judging: the PMs' CPU, the host
	// binary's start and validate's CPU, spread perfectly over the cores.
	// A target below it (target/least < 1) cannot be met on this machine
	// by any host, however little it adds.
	least := (pmCPU + cpuMed("start") + cpuMed("validate")) / float64(runtime.NumCPU())
	b.ReportMetric(least, "cli-least-ms")
	b.ReportMetric((1.2*slowest+med["validate"])/least, "target/least")
	b.ReportMetric(med["cli"]/least, "cli/least")
	benchkit.ReportLoad(b)
}

// captureOffers returns the offers each PM makes in ws, by PM, from one
// hook through the host.
func captureOffers(b *testing.B, ws, cache string, env map[string]string, set Set) map[string][]protocol.Offer {
	b.Helper()
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: cache, Env: env}, set.Specs...)
	defer pms.Close()
	var mu sync.Mutex
	offers := map[string][]protocol.Offer{}
	res := pms.Hook(b.Context(), host.HookCallbacks{Offers: func(pm string, of []protocol.Offer) {
		mu.Lock()
		offers[pm] = of
		mu.Unlock()
	}})
	if len(res.ListWarnings)+len(res.ActiveWarnings) > 0 {
		b.Fatalf("capturing offers: %v %v", res.ListWarnings, res.ActiveWarnings)
	}
	return offers
}
