// Package benchkit measures the hook path of PM binaries side by side: the
// spawn → initialize → list_deps → exit sequence Symposium runs on every
// agent hook, and the floors any Go PM is compared with — a Go binary that
// only starts and exits, and a null PM built with this SDK that answers
// initialize and an empty list_deps.
package benchkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Build compiles the main package pkg (an import path in the current
// workspace) into dir and returns the binary's path, built as releases and
// make build build it (goBuild).
func Build(tb testing.TB, pkg, dir string) string {
	tb.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	if b, err := goBuild(out, pkg).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// goBuild returns the go build command compiling the main package pkg into
// out, with cgo off as in releases and make build: a statically linked
// binary, which starts without the dynamic loader (1.3-2.5 ms of the null
// PM's 10.5-14.4 ms hook on this project's 2-core benchmark machine). It builds with
// -trimpath, as make test does: the compiled packages then do not depend on
// where the checkout is, so a fresh clone reuses the build cache instead of
// compiling the whole workspace again for each binary.
func goBuild(out, pkg string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// floors holds the floor binaries this process built, by name: each is
// built on first use only (a test needing the null PM does not link the
// others).
var floors struct {
	mu    sync.Mutex
	built map[string]*floorBuild
}

type floorBuild struct {
	once sync.Once
	path string
	err  error
}

// NullPM returns the path of the null PM: the harness with empty answers.
func NullPM(tb testing.TB) string { return floor(tb, "nullpm") }

// BareGo returns the path of a Go binary that only starts and exits.
func BareGo(tb testing.TB) string { return floor(tb, "barego") }

// floorPkg is the import path of the floors' main packages.
const floorPkg = "github.com/symposium-dev/symposium-pm/sdk/benchkit/internal"

func floor(tb testing.TB, name string) string {
	tb.Helper()
	floors.mu.Lock()
	if floors.built == nil {
		floors.built = map[string]*floorBuild{}
	}
	f := floors.built[name]
	if f == nil {
		f = &floorBuild{}
		floors.built[name] = f
	}
	floors.mu.Unlock()
	f.once.Do(func() { f.path, f.err = buildFloor(name) })
	if f.err != nil {
		tb.Fatal(f.err)
	}
	return f.path
}

// buildFloor builds the floor binary name into one fixed directory, so that
// runs do not pile up temporary directories. Each process builds it again,
// into a temporary name renamed over the last: a binary another test
// process is running is replaced, never rewritten.
func buildFloor(name string) (string, error) {
	dir := filepath.Join(os.TempDir(), "symposium-benchkit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// By import path, from the test's own directory (inside the workspace):
	// the source path compiled in is relative under -trimpath.
	if b, err := goBuild(tmp.Name(), floorPkg+"/"+name).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", name, err, b)
	}
	out := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

// Hook is one run of the hook path.
type Hook struct {
	// Out is what the PM wrote on stdout.
	Out []byte
	// Wall is the time from spawn to exit, with all output read: the PM's
	// share of the hook path. The host's decoding of the answer is not in
	// it; that is the same work for every PM listing the same dependencies,
	// and a null PM, which lists none, would otherwise be spared it.
	Wall time.Duration
	// CPU is the user and system time the process used.
	CPU time.Duration
}

// RunHook runs the hook path once against bin: spawn it in workspace, send
// initialize and list_deps, close its input, read its output and wait for it
// to exit. A binary that is not a PM (BareGo) is simply run to completion.
func RunHook(tb testing.TB, bin string, args []string, workspace, cacheDir string) Hook {
	tb.Helper()
	cmd := hookCmd(bin, args, workspace, cacheDir)
	return RunCmd(tb, cmd, cmd.Dir)
}

// hookCmd is the command RunHook runs: bin in workspace, with initialize
// and list_deps on its input.
func hookCmd(bin string, args []string, workspace, cacheDir string) *exec.Cmd {
	init, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
		"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cacheDir, Env: map[string]string{}},
	})
	input := string(init) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"list_deps"}` + "\n"
	cmd := exec.Command(bin, args...)
	cmd.Dir = workspace
	cmd.Stdin = strings.NewReader(input)
	return cmd
}

// Results decodes h's output into each response's result, by id, failing
// tb on a line that is not a response or on any error response.
func (h Hook) Results(tb testing.TB) map[int]json.RawMessage {
	tb.Helper()
	results := map[int]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(h.Out))
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var rsp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *protocol.Error `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rsp); err != nil {
			tb.Fatalf("bad response line: %v", err)
		}
		if rsp.Error != nil {
			tb.Fatalf("request %d failed: %v", rsp.ID, rsp.Error)
		}
		results[rsp.ID] = rsp.Result
	}
	return results
}

// Deps decodes the list_deps answer (id 2) in h's output, failing tb if any
// response is an error.
func (h Hook) Deps(tb testing.TB) []protocol.PackageID {
	tb.Helper()
	var deps []protocol.PackageID
	if r, ok := h.Results(tb)[2]; ok {
		if err := json.Unmarshal(r, &deps); err != nil {
			tb.Fatalf("list_deps result: %v", err)
		}
	}
	return deps
}

// HookPath is RunHook followed by Deps: it returns the list_deps result.
// When tb is a *testing.B, its timer is stopped while the answer is
// decoded, so that a benchmark times the PM's work only (see Hook.Wall).
func HookPath(tb testing.TB, bin string, args []string, workspace, cacheDir string) []protocol.PackageID {
	tb.Helper()
	h := RunHook(tb, bin, args, workspace, cacheDir)
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
		defer b.StartTimer()
	}
	return h.Deps(tb)
}

// Run runs bin with args to completion, for comparison tools such as
// `cargo metadata` or `npm ls`; it fails the benchmark if bin fails.
func Run(tb testing.TB, dir, bin string, args ...string) {
	tb.Helper()
	RunCmd(tb, exec.Command(bin, args...), dir)
}

// RunCmd runs cmd in dir to completion and times it from spawn to exit
// with all output read; its output is the Hook's Out. It fails the
// benchmark if cmd fails, with the end of its stderr and stdout. RunHook
// and RunWholeHook run their hooks with it; tools that need their own
// environment use it directly.
//
// The timing is of cmd, not of this process reading its output: stdout is
// read into a buffer kept from earlier runs (sinks), so that a run does not
// allocate as it reads, and a garbage collection is finished before the
// spawn, so that none started by an earlier run's checks competes with cmd
// for the cores. Without both, a benchmark process that had just decoded a
// large answer spent more of a 2-core machine collecting it, and faulting
// in fresh pages for the next answer, than the PM took to write it: the
// git registry's cached hook (a 3.7 MiB answer) measured 33-50 ms where it
// takes 23 ms beside a reader that does not allocate.
func RunCmd(tb testing.TB, cmd *exec.Cmd, dir string) Hook {
	tb.Helper()
	cmd.Dir = dir
	var h Hook
	h.Wall, h.CPU = runCmds(tb, []*exec.Cmd{cmd}, func(_ int, out []byte) { h.Out = bytes.Clone(out) })
	return h
}

// runCmds runs cmds at once, each to completion, and times them from the
// first spawn to the last exit, as RunCmd describes; cpu is their CPU time
// summed. Once the timing is over it hands use each command's output, which
// is only valid during the call. It fails tb if a command fails, with the
// end of its stderr and stdout.
func runCmds(tb testing.TB, cmds []*exec.Cmd, use func(i int, out []byte)) (wall, cpu time.Duration) {
	tb.Helper()
	outs := make([]*bytes.Buffer, len(cmds))
	errbs := make([]bytes.Buffer, len(cmds))
	for i, cmd := range cmds {
		outs[i] = sinks.get()
		defer sinks.put(outs[i])
		cmd.Stdout, cmd.Stderr = outs[i], &errbs[i]
	}
	errs := make([]error, len(cmds))
	runtime.GC()
	start := time.Now()
	for i, cmd := range cmds {
		errs[i] = cmd.Start()
	}
	for i, cmd := range cmds {
		if errs[i] == nil {
			errs[i] = cmd.Wait()
		}
	}
	wall = time.Since(start)
	for i, cmd := range cmds {
		if errs[i] != nil {
			b := append(errbs[i].Bytes(), outs[i].Bytes()...)
			tb.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), errs[i], b[max(0, len(b)-2000):])
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		use(i, outs[i].Bytes())
	}
	return wall, cpu
}

// sinks keeps the output buffers of finished runs for the next, so that
// reading a run's output reuses memory already faulted in (a reset
// bytes.Buffer keeps its capacity, and its ReadFrom reads into it).
var sinks sinkPool

type sinkPool struct {
	mu   sync.Mutex
	free []*bytes.Buffer
}

func (p *sinkPool) get() *bytes.Buffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		b.Reset()
		return b
	}
	return bytes.NewBuffer(make([]byte, 0, 64<<10))
}

func (p *sinkPool) put(b *bytes.Buffer) {
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

// Variant is one thing Interleave times.
type Variant struct {
	// Name labels the variant's metrics: "cached", "nullpm", "npm-ls".
	Name string
	// Run performs one timed run; it may check the answer, outside the
	// timing it reports.
	Run func() Hook
	// Rounds is how many of the rounds include the variant; zero means all.
	// A slow tool runs in the first few rounds only.
	Rounds int
	// Peak, if set, runs the variant once more, untimed, and returns its
	// process's peak resident set size in KiB (see PeakRSS).
	Peak func() int64
}

// Interleave times variants side by side: each benchmark iteration runs
// rounds rounds, each round running every variant once, so that a shared
// machine's load changes affect all of them alike. Each round starts one
// variant further along the list (round r with variant r mod n), so that
// no variant always runs first, right after the last one of the round
// before, or always right after the same neighbour: on discover's
// benchmark, the variant run first in every round took a third longer
// than in any other place. It reports, per
// variant, the median wall time (metric "<name>-ms") and the median CPU
// time of the process ("<name>-cpu-ms", steadier under load) and, for a
// variant with Peak, its peak resident memory ("<name>-peak-RSS-KiB",
// measured once after the rounds), and returns
// the wall medians in milliseconds by name, for the ratios a benchmark
// states its targets in.
func Interleave(b *testing.B, rounds int, variants ...Variant) map[string]float64 {
	b.Helper()
	wall := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	for b.Loop() {
		for r := range rounds {
			for _, i := range roundOrder(r, len(variants)) {
				v := variants[i]
				if v.Rounds > 0 && r >= v.Rounds {
					continue
				}
				h := v.Run()
				wall[v.Name] = append(wall[v.Name], h.Wall)
				cpu[v.Name] = append(cpu[v.Name], h.CPU)
			}
		}
	}
	med := map[string]float64{}
	for _, v := range variants {
		ms := func(ds []time.Duration) float64 {
			slices.Sort(ds)
			return float64(ds[len(ds)/2]) / float64(time.Millisecond)
		}
		med[v.Name] = ms(wall[v.Name])
		b.ReportMetric(med[v.Name], v.Name+"-ms")
		b.ReportMetric(ms(cpu[v.Name]), v.Name+"-cpu-ms")
		if v.Peak != nil {
			if kib := v.Peak(); kib > 0 {
				b.ReportMetric(float64(kib), v.Name+"-peak-RSS-KiB")
			}
		}
	}
	return med
}

// roundOrder is the order Interleave runs n variants in, in round r: the
// list from variant r mod n on, wrapping around.
func roundOrder(r, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (r + k) % n
	}
	return order
}

// HookVariants returns the usual variants of a PM's hook-path benchmark,
// in this order: "barego" (BareGo run to completion), "nullpm" (NullPM),
// "cached" (bin with a cache directory it has already filled) and "cold"
// (bin with a fresh, empty cache directory each run). Each PM run checks,
// outside its timing, that bin listed deps dependencies and the null PM
// none.
func HookVariants(b *testing.B, bin, workspace string, deps int) []Variant {
	b.Helper()
	null, bare := NullPM(b), BareGo(b)
	cached, nullCache, coldRoot := b.TempDir(), b.TempDir(), b.TempDir()
	HookPath(b, bin, nil, workspace, cached)
	hook := func(bin string, cacheDir func() string, want int) func() Hook {
		return func() Hook {
			h := RunHook(b, bin, nil, workspace, cacheDir())
			if got := len(h.Deps(b)); got != want {
				b.Fatalf("%s listed %d deps, want %d", bin, got, want)
			}
			return h
		}
	}
	cold := 0
	coldDir := func() string { cold++; return filepath.Join(coldRoot, fmt.Sprint(cold)) }
	peak := func(bin string, cacheDir func() string) func() int64 {
		return func() int64 { return PeakRSS(b, hookCmd(bin, nil, workspace, cacheDir())) }
	}
	return []Variant{
		{Name: "barego", Run: func() Hook { return RunCmd(b, exec.Command(bare), workspace) },
			Peak: func() int64 { c := exec.Command(bare); c.Dir = workspace; return PeakRSS(b, c) }},
		{Name: "nullpm", Run: hook(null, func() string { return nullCache }, 0), Peak: peak(null, func() string { return nullCache })},
		{Name: "cached", Run: hook(bin, func() string { return cached }, deps), Peak: peak(bin, func() string { return cached })},
		{Name: "cold", Run: hook(bin, coldDir, deps), Peak: peak(bin, coldDir)},
	}
}

// ReportRatios reports the ratios hook-path targets are stated in, from
// Interleave's medians: "cached/nullpm" and "cold/nullpm" and, when tool
// names a variant that was measured, "<tool>/cached" and "<tool>/cold".
func ReportRatios(b *testing.B, med map[string]float64, tool string) {
	b.ReportMetric(med["cached"]/med["nullpm"], "cached/nullpm")
	b.ReportMetric(med["cold"]/med["nullpm"], "cold/nullpm")
	if base, ok := med["baseline-cached"]; ok {
		b.ReportMetric(base/med["nullpm"], "baseline-cached/nullpm")
	}
	if t, ok := med[tool]; ok {
		b.ReportMetric(t/med["cached"], tool+"/cached")
		b.ReportMetric(t/med["cold"], tool+"/cold")
	}
}

// ClosedProxies returns the proxy variables, in both cases, of an
// environment that cannot reach the network: every proxy is a loopback
// port nothing listens on (9, discard), so an ecosystem tool run as a
// comparison that tried to download something fails at once instead of
// measuring a download.
func ClosedProxies() []string {
	const closed = "http://127.0.0.1:9"
	var env []string
	for _, name := range []string{"http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, name+"="+closed, strings.ToUpper(name)+"="+closed)
	}
	return env
}
