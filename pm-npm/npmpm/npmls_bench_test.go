package npmpm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

// offlineRegistry is where the npm the benchmarks run is told the registry
// is: port 9 (discard) on the loopback address, which refuses connections,
// so that a tool that tried to reach the network would fail at once
// instead of measuring a download.
const offlineRegistry = "http://127.0.0.1:9/"

// npmLsVariant returns the ecosystem tool's variant of a benchmark, named
// "npm-ls" as the bench report expects: `npm ls` with args, run in ws in
// the first rounds rounds, offline, with an environment of its own (PATH
// only from the caller's; HOME, the npm cache and both npmrc files in a
// fresh directory; no audit, funding or update check; no log files). Each
// run checks, outside its timing, that npm exited 0 and that its output
// names want (a package@version the tree holds), so that an npm that
// printed an error or an empty tree is not timed as if it had done the
// work. ok is false when npm is not installed: the benchmark then runs
// without the tool, and says so in its log.
func npmLsVariant(b *testing.B, ws string, rounds int, want string, args ...string) (v benchkit.Variant, ok bool) {
	b.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		b.Log("npm is not installed: measuring without npm ls")
		return benchkit.Variant{}, false
	}
	scratch := b.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + scratch,
		"npm_config_cache=" + filepath.Join(scratch, "cache"),
		"npm_config_userconfig=" + filepath.Join(scratch, "npmrc"),
		"npm_config_globalconfig=" + filepath.Join(scratch, "global-npmrc"),
		"npm_config_registry=" + offlineRegistry,
		"npm_config_offline=true",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
		"npm_config_logs_max=0",
		"npm_config_loglevel=error",
		"npm_config_progress=false",
	}
	run := func() benchkit.Hook {
		cmd := exec.CommandContext(b.Context(), npm, append([]string{"ls"}, args...)...)
		cmd.Env = env
		h := benchkit.RunCmd(b, cmd, ws)
		if !bytes.Contains(h.Out, []byte(want)) {
			out := h.Out[:min(len(h.Out), 2000)]
			b.Fatalf("npm ls %v in %s: the output does not name %s:\n%s", args, ws, want, out)
		}
		return h
	}
	return benchkit.Variant{Name: "npm-ls", Rounds: rounds, Run: run}, true
}

// withNpmLs appends npmLsVariant's variant to variants when npm is
// installed.
func withNpmLs(b *testing.B, variants []benchkit.Variant, ws string, rounds int, want string, args ...string) []benchkit.Variant {
	b.Helper()
	if v, ok := npmLsVariant(b, ws, rounds, want, args...); ok {
		variants = append(variants, v)
	}
	return variants
}

// toolRounds is how many rounds of a benchmark at size n (dependencies,
// locked packages or members) include npm ls: a few at small sizes, one
// where a run of npm takes seconds, so that each benchmark stays within a
// minute or two.
func toolRounds(n int) int {
	switch {
	case n <= 400:
		return 3
	case n <= 2000:
		return 2
	}
	return 1
}
