package benchkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// RunWholeHook runs the whole hook Symposium runs once against bin: spawn
// it in workspace, send initialize (with env), list_deps and active_plugins
// for deps, close its input, read its output and wait for it to exit. deps
// stands for list_deps' answer, which a benchmark knows in advance: all
// three requests are written at once, as a host pipelining them would.
func RunWholeHook(tb testing.TB, bin, workspace, cacheDir string, env map[string]string, deps []protocol.PackageID) Hook {
	tb.Helper()
	cmd := wholeHookCmd(tb, WholeHook{Bin: bin, Workspace: workspace, CacheDir: cacheDir, Env: env, Deps: deps})
	return RunCmd(tb, cmd, cmd.Dir)
}

// RunWholeHooks runs several whole hooks at once, as a host spawning its
// PMs side by side does, and times them from the first spawn to the last
// exit; the Hook's CPU is the sum of theirs and its Out is empty. Each
// hook's output is checked with check, outside the timing.
func RunWholeHooks(tb testing.TB, hooks []WholeHook, check func(i int, h Hook)) Hook {
	tb.Helper()
	cmds := make([]*exec.Cmd, len(hooks))
	for i, wh := range hooks {
		cmds[i] = wholeHookCmd(tb, wh)
	}
	var h Hook
	h.Wall, h.CPU = runCmds(tb, cmds, func(i int, out []byte) { check(i, Hook{Out: out}) })
	return h
}

// WholeHook is one whole hook for RunWholeHooks: RunWholeHook's
// arguments, and whether to ask for the workspace too.
type WholeHook struct {
	Bin, Workspace, CacheDir string
	Env                      map[string]string
	Deps                     []protocol.PackageID
	// AskWorkspace adds a workspace request (id 4) after active_plugins:
	// what `symposium-pm discover` asks of every PM announcing the
	// capability, besides the hook.
	AskWorkspace bool
}

// wholeHookCmd is the command RunWholeHook runs: wh.Bin in wh.Workspace,
// with initialize, list_deps and active_plugins (and workspace, when
// asked) on its input.
func wholeHookCmd(tb testing.TB, wh WholeHook) *exec.Cmd {
	tb.Helper()
	env, deps := wh.Env, wh.Deps
	if env == nil {
		env = map[string]string{}
	}
	if deps == nil {
		deps = []protocol.PackageID{}
	}
	reqs := []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
			"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: wh.Workspace, CacheDir: wh.CacheDir, Env: env}},
		{"jsonrpc": "2.0", "id": 2, "method": protocol.MethodListDeps},
		{"jsonrpc": "2.0", "id": 3, "method": protocol.MethodActivePlugins, "params": protocol.ActivePluginsParams{Deps: deps}},
	}
	if wh.AskWorkspace {
		reqs = append(reqs, map[string]any{"jsonrpc": "2.0", "id": 4, "method": protocol.MethodWorkspace})
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, req := range reqs {
		if err := enc.Encode(req); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(wh.Bin)
	cmd.Dir = wh.Workspace
	cmd.Stdin = &in
	return cmd
}

// Counts decodes h's list_deps and active_plugins answers and returns how
// many dependencies and offers they hold, failing tb if any response is an
// error.
func (h Hook) Counts(tb testing.TB) (deps, offers int) {
	tb.Helper()
	for id, r := range h.Results(tb) {
		if id != 2 && id != 3 {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(r, &list); err != nil {
			tb.Fatalf("request %d: result is not a list: %v", id, err)
		}
		if id == 2 {
			deps = len(list)
		} else {
			offers = len(list)
		}
	}
	return deps, offers
}

// WholeHookVariants returns the variants of a whole-hook benchmark (see
// RunWholeHook), in this order: "nullpm" (NullPM, sent the same requests),
// "cached" (bin with a cache directory it has already filled) and "cold"
// (bin with a fresh, empty cache directory each run, in the first
// coldRounds rounds only). Each run of bin checks, outside its timing, that
// it listed len(deps) dependencies and made offers offers.
func WholeHookVariants(b *testing.B, bin, workspace string, env map[string]string, deps []protocol.PackageID, offers, coldRounds int) []Variant {
	b.Helper()
	null := NullPM(b)
	cached, nullCache, coldRoot := b.TempDir(), b.TempDir(), b.TempDir()
	check := func(h Hook, wantDeps, wantOffers int) {
		if d, o := h.Counts(b); d != wantDeps || o != wantOffers {
			b.Fatalf("%s listed %d deps and made %d offers, want %d and %d", filepath.Base(bin), d, o, wantDeps, wantOffers)
		}
	}
	// Fill the cache; a second run persists what the first could not
	// (inputs written within the racy window).
	for range 2 {
		check(RunWholeHook(b, bin, workspace, cached, env, deps), len(deps), offers)
		time.Sleep(60 * time.Millisecond)
	}
	cold := 0
	var extra []Variant
	if dir := os.Getenv(BaselineDirEnv); dir != "" {
		base := filepath.Join(dir, filepath.Base(bin))
		baseCache := b.TempDir()
		for range 2 {
			check(RunWholeHook(b, base, workspace, baseCache, env, deps), len(deps), offers)
			time.Sleep(60 * time.Millisecond)
		}
		extra = append(extra, Variant{Name: "baseline-cached", Run: func() Hook {
			h := RunWholeHook(b, base, workspace, baseCache, env, deps)
			check(h, len(deps), offers)
			return h
		}})
	}
	peak := func(bin string, cacheDir func() string) func() int64 {
		return func() int64 {
			return PeakRSS(b, wholeHookCmd(b, WholeHook{Bin: bin, Workspace: workspace, CacheDir: cacheDir(), Env: env, Deps: deps}))
		}
	}
	return append([]Variant{
		{Name: "nullpm", Peak: peak(null, func() string { return nullCache }), Run: func() Hook {
			h := RunWholeHook(b, null, workspace, nullCache, env, deps)
			check(h, 0, 0)
			return h
		}},
		{Name: "cached", Peak: peak(bin, func() string { return cached }), Run: func() Hook {
			h := RunWholeHook(b, bin, workspace, cached, env, deps)
			check(h, len(deps), offers)
			return h
		}},
		{Name: "cold", Rounds: coldRounds, Peak: peak(bin, func() string { cold++; return filepath.Join(coldRoot, fmt.Sprint(cold)) }), Run: func() Hook {
			cold++
			h := RunWholeHook(b, bin, workspace, filepath.Join(coldRoot, fmt.Sprint(cold)), env, deps)
			check(h, len(deps), offers)
			return h
		}},
	}, extra...)
}

// BaselineDirEnv names the environment variable that may point at a
// directory of PM binaries built from another revision: whole-hook
// benchmarks then also time that revision's binary of the same name, with
// its own filled cache ("baseline-cached"), in the same rounds, for a
// before/after comparison under the same load.
const BaselineDirEnv = "SYMPOSIUM_BENCH_BASELINE"

// WholeHookSizes are the numbers of dependencies on disk whole-hook
// benchmarks run at.
var WholeHookSizes = []int{100, 400, 2000}

// ReportLoad reports the machine's one-minute load average as the metric
// "load1", so that every ratio is read with the load it was measured at.
func ReportLoad(b *testing.B) {
	data, err := readLoadavg()
	if err != nil {
		return
	}
	var l float64
	if _, err := fmt.Sscan(strings.Fields(data)[0], &l); err == nil {
		b.ReportMetric(l, "load1")
	}
}

// readLoadavg returns /proc/loadavg, where there is one.
func readLoadavg() (string, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(strings.Fields(string(data))) == 0 {
		return "", errors.New("no load average on this system")
	}
	return string(data), nil
}
