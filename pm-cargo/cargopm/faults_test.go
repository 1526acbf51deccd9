package cargopm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// faultEnv is a fake registry, a cargo home using it and a workspace, with
// the environments to start the PM binary in.
type faultEnv struct {
	reg      *fakeregistry.Registry
	cargo    *cargotest.Env
	ws       string
	procEnv  []string
	initEnv  map[string]string
	cacheDir string
}

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	cargotest.Cargo(t)
	if testing.Short() {
		t.Skip("runs cargo")
	}
	big := map[string]string{}
	for i := range 64 {
		big["data/"+strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+".txt"] = strings.Repeat("payload ", 512+i)
	}
	big["skills/s/SKILL.md"] = "---\nname: s\ndescription: a skill\n---\n"
	reg, err := fakeregistry.New(fakeregistry.Crate{Name: "big", Version: "1.0.0", Files: big})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	env := cargotest.New(t, reg)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	cargotest.WriteFiles(t, ws, map[string]string{
		"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nbig = \"1\"\n",
		"Cargo.lock": "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"big\"]\n\n[[package]]\nname = \"big\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
		"src/lib.rs": "",
	})
	procEnv := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SYMPOSIUM_LOG=debug"}, env.Vars...)
	return &faultEnv{reg: reg, cargo: env, ws: ws, procEnv: procEnv, initEnv: envMap(env), cacheDir: filepath.Join(dir, "cache")}
}

func (e *faultEnv) start(t *testing.T) *pmtest.Proc {
	return startPM(t, e.procEnv, e.ws, e.cacheDir, e.initEnv)
}

// processesMentioning lists the live processes whose command line contains
// s (Linux /proc; nil elsewhere).
func processesMentioning(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, filepath.Base(filepath.Dir(f))+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// unpacked lists cargo's complete unpacked copies of big 1.0.0.
func (e *faultEnv) unpacked() []string {
	m, _ := filepath.Glob(filepath.Join(e.cargo.CargoHome, "registry", "src", "*", "big-1.0.0", ".cargo-ok"))
	return m
}

// TestKillMidDownload SIGKILLs the PM while cargo is half-way through the
// download (the registry stalls after half the archive): no cargo survives
// it, nothing partial is left in <cache_dir>/cargo once a new PM starts
// fetching, and that fetch succeeds.
func TestKillMidDownload(t *testing.T) {
	e := newFaultEnv(t)
	release := make(chan struct{})
	stalled := e.reg.StallDownloads(release)
	pm := e.start(t)
	pm.Send("fetch", pkgParams("big", "1", "fetch"))
	select {
	case <-stalled:
	case <-time.After(60 * time.Second):
		t.Fatalf("the download never started; stderr:\n%s", pm.Stderr())
	}
	if err := pm.Kill(); err == nil {
		t.Fatal("the PM exited with status 0 before it could be killed")
	}
	// The kernel delivers the parent-death signal asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	for len(processesMentioning(e.cacheDir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := processesMentioning(e.cacheDir); len(left) > 0 {
		t.Errorf("processes survived the PM: %v", left)
	}
	if len(e.unpacked()) != 0 {
		t.Fatalf("big is unpacked although its download never finished")
	}
	probes, _ := filepath.Glob(filepath.Join(e.cacheDir, Name, "probes", "probe-*"))
	if len(probes) != 1 {
		t.Fatalf("probe directories after the kill: %v (want the killed one)", probes)
	}

	e.reg.StallDownloads(nil)
	close(release)
	pm2 := e.start(t)
	r := pm2.Call("fetch", pkgParams("big", "1", "fetch"))
	if r.Code() != 0 {
		t.Fatalf("fetch after the kill: %s\nstderr:\n%s", r.Raw, pm2.Stderr())
	}
	if len(e.unpacked()) != 1 {
		t.Errorf("unpacked copies: %v", e.unpacked())
	}
	r = pm2.Call("load_plugin", pkgParams("big", "=1.0.0", ""))
	if r.Code() != 0 || !strings.Contains(string(r.Result), `"name":"big"`) {
		t.Errorf("load_plugin after the kill: %s", r.Raw)
	}
	assertNoPartial(t, e.cacheDir)
	if left, _ := filepath.Glob(filepath.Join(e.cacheDir, Name, "probes", "*")); len(left) > 0 {
		t.Errorf("probe entries left: %v", left)
	}
}

// TestConcurrentFetchProcesses has two PM processes fetch the same crate at
// once: both succeed with the same root and cargo keeps one copy.
func TestConcurrentFetchProcesses(t *testing.T) {
	e := newFaultEnv(t)
	a, b := e.start(t), e.start(t)
	ia := a.Send("fetch", pkgParams("big", "1", "fetch"))
	ib := b.Send("fetch", pkgParams("big", "1", "fetch"))
	ra, rb := a.Wait(ia), b.Wait(ib)
	var fa, fb struct{ Root string }
	json.Unmarshal(ra.Result, &fa)
	json.Unmarshal(rb.Result, &fb)
	if ra.Code() != 0 || rb.Code() != 0 || fa.Root == "" || fa.Root != fb.Root {
		t.Fatalf("concurrent fetches: %s / %s", ra.Raw, rb.Raw)
	}
	if len(e.unpacked()) != 1 {
		t.Errorf("unpacked copies: %v", e.unpacked())
	}
	crates, _ := filepath.Glob(filepath.Join(e.cargo.CargoHome, "registry", "cache", "*", "big-*"))
	if len(crates) != 1 {
		t.Errorf("cached archives: %v", crates)
	}
	assertNoPartial(t, e.cacheDir)
}

// TestCacheDirDeletedBetweenCalls deletes cache_dir between calls on one
// connection: list_deps answers the same, fetch and load_plugin work.
func TestCacheDirDeletedBetweenCalls(t *testing.T) {
	e := newFaultEnv(t)
	pm := e.start(t)
	first := pm.Call("list_deps", nil)
	if first.Code() != 0 || !strings.Contains(string(first.Result), `"big"`) {
		t.Fatalf("list_deps: %s", first.Raw)
	}
	if err := os.RemoveAll(e.cacheDir); err != nil {
		t.Fatal(err)
	}
	second := pm.Call("list_deps", nil)
	if string(second.Result) != string(first.Result) {
		t.Errorf("list_deps after deleting cache_dir: %s, want %s", second.Raw, first.Result)
	}
	if r := pm.Call("fetch", pkgParams("big", "1", "fetch")); r.Code() != 0 {
		t.Errorf("fetch after deleting cache_dir: %s", r.Raw)
	}
	os.RemoveAll(e.cacheDir)
	if r := pm.Call("load_plugin", pkgParams("big", "1", "")); r.Code() != 0 {
		t.Errorf("load_plugin after deleting cache_dir: %s", r.Raw)
	}
	os.RemoveAll(e.cacheDir)
	if r := pm.Call("fetch", pkgParams("big", "2", "fetch")); r.Code() != -32010 {
		t.Errorf("fetch of a missing version after deleting cache_dir: %s", r.Raw)
	}
	if r := pm.Call("list_deps", nil); string(r.Result) != string(first.Result) {
		t.Errorf("list_deps at the end: %s", r.Raw)
	}
	assertNoPartial(t, e.cacheDir)
}
