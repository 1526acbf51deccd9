package acquire

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/internal/npmreg"
)

// nodePM is the tarball of examples/pm-node, made once by npm pack.
var nodePM = sync.OnceValues(func() ([]byte, error) {
	return npmreg.Pack("../../../examples/pm-node")
})

// npmEnv starts a loopback registry holding the Node PM and returns an
// environment whose npm uses it through a user .npmrc (HOME) and a private
// cache.
func npmEnv(t *testing.T) (*npmreg.Registry, []string) {
	t.Helper()
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := os.Stat("../../../examples/pm-node/package.json"); err != nil {
		t.Skip("examples/pm-node is not beside this module")
	}
	tgz, err := nodePM()
	if err != nil {
		t.Fatal(err)
	}
	reg := npmreg.New()
	t.Cleanup(reg.Close)
	if err := reg.Publish(tgz); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry="+reg.URL()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(strings.ToLower(k), "npm_config_") {
			env = append(env, kv) // the test's .npmrc decides
		}
	}
	env = setenv(env, "HOME", home)
	env = setenv(env, "npm_config_cache", filepath.Join(home, "npm-cache"))
	return reg, env
}

func TestNPMInstallFromLoopbackRegistry(t *testing.T) {
	t.Parallel()
	reg, env := npmEnv(t)
	cache := t.TempDir()
	src := Source{PM: "node", Kind: NPM, Package: "symposium-pm-node", Version: "0.1.0"}
	res, err := Acquire(context.Background(), cache, src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "0.1.0" || !strings.HasSuffix(res.Path, filepath.Join("pm-binaries", "node", "0.1.0", "node_modules", ".bin", "symposium-pm-node")) {
		t.Errorf("acquired %s at %s", res.Version, res.Path)
	}
	if reg.Requests("/symposium-pm-node/-/symposium-pm-node-0.1.0.tgz") != 1 {
		t.Errorf("npm did not download the tarball from the loopback registry")
	}
	// The bin link npm made still works after the directory was moved.
	cmd := exec.Command(res.Path, "--version")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "symposium-pm-node 0.1.0") {
		t.Errorf("%s --version: %v: %s", res.Path, err, out)
	}
	// Pinned and acquired: nothing runs again, even with no toolchain.
	again, err := Acquire(context.Background(), cache, src, Options{Env: []string{"PATH="}})
	if err != nil || again.Changed {
		t.Errorf("second acquisition: %v", err)
	}
	assertNoTemp(t, cache, "node")
}

func TestNPMFailures(t *testing.T) {
	t.Parallel()
	_, env := npmEnv(t)
	for _, tc := range []struct {
		name string
		src  Source
		env  []string
		want string
	}{
		{"unknown package", Source{PM: "n", Kind: NPM, Package: "no-such-pm"}, env, "404"},
		{"no such version", Source{PM: "n", Kind: NPM, Package: "symposium-pm-node", Version: "9.9.9"}, env, "9.9.9"},
		{"no such bin", Source{PM: "n", Kind: NPM, Package: "symposium-pm-node", Version: "0.1.0", Bin: "other"}, env, `no bin "other"`},
		{"toolchain missing", Source{PM: "n", Kind: NPM, Package: "symposium-pm-node"}, []string{"PATH=" + t.TempDir()}, "npm toolchain is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := Acquire(context.Background(), cache, tc.src, Options{Env: tc.env})
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *Error", err)
			}
			for _, w := range []string{`package manager "n"`, tc.src.String(), tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if testing.Verbose() {
				t.Log(err)
			}
			assertNoTemp(t, cache, "n")
		})
	}
}

// A floating version ("latest") is updated by a later acquisition when the
// registry has a newer release, and swapped in place.
func TestOracleNPMLatestIsUpdated(t *testing.T) {
	t.Parallel()
	reg, env := npmEnv(t)
	cache := t.TempDir()
	src := Source{PM: "node", Kind: NPM, Package: "symposium-pm-node"}
	first, err := Acquire(context.Background(), cache, src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if first.Version != "0.1.0" || filepath.Base(first.Dir) != "latest" {
		t.Fatalf("first acquisition: %s in %s", first.Version, first.Dir)
	}
	// Publish 0.2.0: the same package with its version bumped.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../../examples/pm-node")); err != nil {
		t.Fatal(err)
	}
	pj, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	bumped := strings.Replace(string(pj), `"version": "0.1.0"`, `"version": "0.2.0"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(bumped), 0o644); err != nil {
		t.Fatal(err)
	}
	tgz, err := npmreg.Pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Publish(tgz); err != nil {
		t.Fatal(err)
	}
	second, err := Acquire(context.Background(), cache, src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if second.Version != "0.2.0" || second.Previous != "0.1.0" || second.Dir != first.Dir {
		t.Errorf("update: %s (previous %s) in %s", second.Version, second.Previous, second.Dir)
	}
	out, err := exec.Command(second.Path, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0.2.0") {
		t.Errorf("after the update %s --version: %v: %s", second.Path, err, out)
	}
}

// Interrupting the real npm install while it downloads the tarball kills
// npm and leaves nothing in the cache.
func TestNPMInterruptedDownload(t *testing.T) {
	t.Parallel()
	reg, env := npmEnv(t)
	arrived, release := reg.Stall()
	defer release()
	cache := t.TempDir()
	src := Source{PM: "node", Kind: NPM, Package: "symposium-pm-node", Version: "0.1.0"}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-arrived:
		case <-time.After(time.Minute):
		}
		cancel()
	}()
	_, err := Acquire(ctx, cache, src, Options{Env: env})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), `"node"`) {
		t.Fatalf("err = %v, want an interruption naming the PM", err)
	}
	select {
	case <-arrived:
	default:
		t.Fatal("npm never asked for the tarball")
	}
	if _, err := Installed(cache, src); !errors.Is(err, ErrNotAcquired) {
		t.Errorf("Installed after an interruption: %v", err)
	}
	assertNoTemp(t, cache, "node")
}

// The installed package's package.json is read as the npm PM reads one
// (sdk/pkgfile): a FIFO there is an error at once (os.ReadFile waited for
// a writer forever), so is one over 1 MiB (os.ReadFile read it whole),
// each naming the package and the cause. The npm here is a stand-in that
// installs such a package.json.
func TestNPMPackageJSONBounded(t *testing.T) {
	if _, err := exec.LookPath("mkfifo"); err != nil {
		t.Skip("mkfifo not installed")
	}
	npm := filepath.Join(t.TempDir(), "npm")
	script := `#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix=$2; shift; done
d="$prefix/node_modules/fakepkg"
mkdir -p "$d"
case "$FAKE_PJ" in
fifo) mkfifo "$d/package.json" ;;
big) { printf '{"version":"1.0.0","bin":"x","pad":"'; head -c 2000000 /dev/zero | tr '\0' ' '; printf '"}'; } >"$d/package.json" ;;
esac
`
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for mode, cause := range map[string]string{
		"fifo": "package.json: not a regular file (a FIFO)",
		"big":  "package.json: 2000038 bytes, over the size cap of 1048576 bytes",
	} {
		t.Run(mode, func(t *testing.T) {
			env := append(os.Environ(), "SYMPOSIUM_NPM="+npm, "FAKE_PJ="+mode)
			_, err := Acquire(context.Background(), t.TempDir(), Source{PM: "n", Kind: NPM, Package: "fakepkg"}, Options{Env: env})
			if err == nil || !strings.Contains(err.Error(), "fakepkg's package.json: ") || !strings.Contains(err.Error(), "/node_modules/fakepkg/"+cause) {
				t.Errorf("err = %v, want fakepkg's package.json named with %q", err, cause)
			}
		})
	}
}
