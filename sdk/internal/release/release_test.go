package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
)

// testVersion is the version the simulated release publishes.
const testVersion = "v0.9.1"

// hardcodedVersion lists binaries known to print a version of their own
// instead of the module version from their build information; the test
// reports what they print without failing. Remove an entry once fixed.
var hardcodedVersion = map[string]bool{}

// TestRelease simulates a release of this repository: every module in its
// released form (Prepare, on copies; the working tree is left alone) is
// written into a file-based module proxy, and from it, outside any
// workspace and into an empty GOBIN, `go install <binary>@version` installs
// every binary, which then reports that version; and each module builds and
// vets with its tests on its own, resolving its siblings from the proxy
// and everything else from the module cache or the configured proxy.
//
// The go commands run with -trimpath and a module cache of their own, kept
// between runs in the user's cache directory (symposium-pm/release-test,
// locked while a run uses it), so that a second run compiles only what
// changed; this repository's modules are removed from it after each run.
func TestRelease(t *testing.T) {
	if os.Getenv("SYMPOSIUM_RELEASE_CHECK") == "" {
		t.Skip("the go-install release simulation takes minutes: run it with make release-check (SYMPOSIUM_RELEASE_CHECK=1)")
	}
	if testing.Short() {
		t.Skip("builds every binary of the repository: skipped under -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	// The checksum database is only asked about public modules, whose
	// checksums the module cache or go.sum files already hold; off, the
	// simulation makes no lookups over the network for them.
	env := setenv(os.Environ(), "GOSUMDB", "off")
	modcache, shared := sharedModCache(t)
	if !shared {
		modcache = filepath.Join(t.TempDir(), "modcache")
	}
	// This repository's modules never stay in the cache: the fake release
	// must not be mistaken for a real one later.
	if err := EvictSiblings(modcache); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { EvictSiblings(modcache) })
	start := time.Now()
	plan, err := Prepare(ctx, Options{Root: root, Version: testVersion, Stage: t.TempDir(), Env: env, ModCache: modcache, Log: tlog{t}})
	if err != nil && ctx.Err() != nil {
		t.Skipf("preparing the release did not finish before the test timeout (rerun with a larger -timeout): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared in %v", time.Since(start).Round(time.Millisecond))
	checkStaged(t, plan)

	proxy := t.TempDir()
	if err := plan.Publish(proxy); err != nil {
		t.Fatal(err)
	}
	if err := EvictSiblings(modcache); err != nil {
		t.Fatal(err)
	}
	goenv, err := GoEnv(ctx, env, proxy, modcache)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("install", func(t *testing.T) {
		needTime(t, 2*time.Minute)
		gobin := t.TempDir()
		installEnv := setenv(goenv, "GOBIN", gobin)
		outside := t.TempDir() // no go.mod here or above
		var want []string
		var wg sync.WaitGroup
		sem := make(chan struct{}, 3) // links overlap with compiles
		for _, m := range plan.Modules {
			for _, cmd := range m.Commands() {
				want = append(want, filepath.Base(cmd))
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					start := time.Now()
					if out, err := runGo(ctx, outside, installEnv, "install", cmd+"@"+testVersion); err != nil {
						t.Errorf("go install %s@%s: %v\n%s", cmd, testVersion, err, out)
						return
					}
					t.Logf("go install %s@%s: %v", cmd, testVersion, time.Since(start).Round(time.Millisecond))
				})
			}
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for _, bin := range []string{"symposium-pm", "symposium-pm-cargo", "symposium-pm-npm", "symposium-pm-pypi", "symposium-pm-gitregistry", "symposium-pm-fixture"} {
			if !slices.Contains(want, bin) {
				t.Errorf("no module has the binary %s", bin)
			}
		}
		entries, _ := os.ReadDir(gobin)
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("GOBIN holds %v, want %v", got, want)
		}
		for _, bin := range want {
			out, err := exec.Command(filepath.Join(gobin, bin), "--version").Output()
			if err != nil {
				t.Errorf("%s --version: %v", bin, err)
				continue
			}
			got, want := strings.TrimSpace(string(out)), bin+" "+testVersion
			switch {
			case got != want && hardcodedVersion[bin]:
				t.Logf("KNOWN ISSUE: %s --version printed %q, not the module version %q (it hard-codes its version)", bin, got, testVersion)
			case got != want:
				t.Errorf("%s --version printed %q, want %q", bin, got, want)
			case hardcodedVersion[bin]:
				t.Logf("%s now prints the module version: drop it from hardcodedVersion", bin)
			}
		}
	})

	t.Run("standalone", func(t *testing.T) {
		for _, m := range plan.Modules {
			needTime(t, time.Minute)
			start := time.Now()
			dir := filepath.Join(plan.Stage, filepath.FromSlash(m.Dir))
			// The released go.sum is complete for building: nothing to add.
			if out, err := runGo(ctx, dir, setenv(goenv, "GOFLAGS", "-mod=readonly -modcacherw -trimpath"), "build", "./..."); err != nil {
				t.Errorf("GOWORK=off go build -mod=readonly ./... in %s: %v\n%s", m.Dir, err, out)
			}
			// Tests may need the checksums of later modules (see the
			// package doc): -mod=mod fetches and records them.
			if out, err := runGo(ctx, dir, goenv, "vet", "./..."); err != nil {
				t.Errorf("GOWORK=off go vet ./... in %s: %v\n%s", m.Dir, err, out)
			}
			t.Logf("go build -mod=readonly and go vet ./... in %s: %v", m.Dir, time.Since(start).Round(time.Millisecond))
		}
	})
}

// checkStaged checks the released go.mod files: every sibling imported is
// required at the release version, nothing is replaced, and go.sum holds
// the checksums of every earlier module required.
func checkStaged(t *testing.T, plan *Plan) {
	t.Helper()
	final := map[string]bool{}
	for _, m := range plan.Modules {
		dir := filepath.Join(plan.Stage, filepath.FromSlash(m.Dir))
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse(m.Dir+"/go.mod", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Replace) > 0 {
			t.Errorf("%s/go.mod has replace directives", m.Dir)
		}
		if m.Dir != "sdk" && m.Dir != "testscript" && !slices.Contains(m.Imports, RepoPath+"/sdk") {
			t.Errorf("%s does not import the sdk module: %v", m.Dir, m.Imports)
		}
		sum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		for _, r := range f.Require {
			if !strings.HasPrefix(r.Mod.Path, RepoPath+"/") {
				continue
			}
			if r.Mod.Version != plan.Version {
				t.Errorf("%s requires %s %s, want %s", m.Dir, r.Mod.Path, r.Mod.Version, plan.Version)
			}
			// The zip checksums of earlier modules are final and present;
			// those of later ones (test-only imports) left out.
			zip := strings.Contains(string(sum), r.Mod.Path+" "+plan.Version+" h1:")
			switch {
			case final[r.Mod.Path] && !zip:
				t.Errorf("%s/go.sum lacks the checksum of %s@%s", m.Dir, r.Mod.Path, plan.Version)
			case !final[r.Mod.Path] && zip:
				t.Errorf("%s/go.sum has the checksum of %s@%s, released after it", m.Dir, r.Mod.Path, plan.Version)
			}
			if !strings.Contains(string(sum), r.Mod.Path+" "+plan.Version+"/go.mod h1:") {
				t.Errorf("%s/go.sum lacks the go.mod checksum of %s@%s", m.Dir, r.Mod.Path, plan.Version)
			}
		}
		final[m.Path] = true
	}
}

// needTime skips the rest of the test when less than d is left before the
// test binary's -timeout: on a cold build cache and a loaded machine the
// first run compiles every dependency, and a timeout would abort every
// other test of the package.
func needTime(t *testing.T, d time.Duration) {
	t.Helper()
	if deadline, ok := t.Deadline(); ok && time.Until(deadline) < d {
		t.Skipf("only %v left before the test timeout: skipping the rest (rerun with a larger -timeout)", time.Until(deadline).Round(time.Second))
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want string // substring of the error, "" for none
	}{
		{"v0.1.0", ""},
		{"v1.2.3", ""},
		{"v1.0.0-rc.1", ""},
		{"1.2.3", "not a canonical"},
		{"v1.2", "not a canonical"},
		{"v1.2.3+meta", "build metadata"},
		{"v2.0.0", "/v2"},
	} {
		err := CheckVersion(tc.v)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckVersion(%q) = %v, want %q", tc.v, err, tc.want)
		}
	}
}

func TestReleaseOrder(t *testing.T) {
	mods := []Module{
		{Dir: "pm-b", Path: "p/pm-b", Imports: []string{"p/sdk"}, TestImports: []string{"p/ts"}},
		{Dir: "ts", Path: "p/ts", TestImports: []string{"p/pm-a", "p/pm-b"}},
		{Dir: "pm-a", Path: "p/pm-a", Imports: []string{"p/sdk"}},
		{Dir: "sdk", Path: "p/sdk"},
	}
	got, err := releaseOrder(mods)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range got {
		dirs = append(dirs, m.Dir)
	}
	if want := []string{"sdk", "ts", "pm-a", "pm-b"}; !slices.Equal(dirs, want) {
		t.Errorf("order %v, want %v", dirs, want)
	}
	mods[1].Imports = []string{"p/pm-b"}
	mods[0].Imports = []string{"p/ts"}
	if _, err := releaseOrder(mods); err == nil || !strings.Contains(err.Error(), "pm-b, ts") {
		t.Errorf("a cycle: err = %v", err)
	}
}

func TestDropSums(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.sum")
	in := "ex.com/a v1.0.0 h1:A=\nex.com/a v1.0.0/go.mod h1:B=\nex.com/b v1.0.0 h1:C=\nex.com/b v1.0.0/go.mod h1:D=\nex.com/b v0.9.0/go.mod h1:E=\n"
	for _, tc := range []struct {
		version, want string
	}{
		{"v1.0.0", "ex.com/a v1.0.0 h1:A=\nex.com/a v1.0.0/go.mod h1:B=\nex.com/b v1.0.0/go.mod h1:D=\nex.com/b v0.9.0/go.mod h1:E=\n"},
		{"", "ex.com/a v1.0.0 h1:A=\nex.com/a v1.0.0/go.mod h1:B=\n"},
	} {
		os.WriteFile(path, []byte(in), 0o644)
		if err := dropSums(path, []string{"ex.com/b"}, tc.version); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tc.want {
			t.Errorf("version %q: got\n%s\nwant\n%s", tc.version, got, tc.want)
		}
	}
}

func TestAddRequires(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.mod")
	os.WriteFile(path, []byte("module ex.com/m\n\ngo 1.26.0\n\nrequire ex.com/x v1.0.0\n"), 0o644)
	if err := addRequires(path, []string{"ex.com/sdk"}, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "ex.com/sdk v0.3.0") || !strings.Contains(string(got), "ex.com/x v1.0.0") {
		t.Errorf("go.mod:\n%s", got)
	}
	os.WriteFile(path, []byte("module ex.com/m\n\nreplace ex.com/sdk => ../sdk\n"), 0o644)
	if err := addRequires(path, []string{"ex.com/sdk"}, "v0.3.0"); err == nil || !strings.Contains(err.Error(), "replace") {
		t.Errorf("a replace directive: err = %v", err)
	}
}
