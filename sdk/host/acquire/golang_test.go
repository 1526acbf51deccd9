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

	"golang.org/x/mod/module"

	"github.com/symposium-dev/symposium-pm/sdk/internal/modproxy"
)

const (
	repoModule    = "github.com/symposium-dev/symposium-pm"
	fixtureModule = repoModule + "/pm-fixture"
	fixtureCmd    = fixtureModule + "/cmd/symposium-pm-fixture"
	sdkModule     = repoModule + "/sdk"
)

// goProxy publishes this repository's sdk and pm-fixture modules (at
// v0.1.0, pm-fixture requiring sdk as a released module must) into a
// file-based module proxy, once per test binary.
var goProxy = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "pm-fixture", "go.mod")); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "acquire-goproxy-")
	if err != nil {
		return "", err
	}
	err = modproxy.Write(dir,
		modproxy.Module{Path: sdkModule, Version: "v0.1.0", Dir: filepath.Join(root, "sdk")},
		modproxy.Module{Path: fixtureModule, Version: "v0.1.0", Dir: filepath.Join(root, "pm-fixture"),
			Require: []module.Version{{Path: sdkModule, Version: "v0.1.0"}}},
	)
	return dir, err
})

// goEnv is an environment for go install from the test proxy: the test
// modules first, then the local module cache (their dependencies, without
// the network), then the configured proxy; a private module cache.
func goEnv(t *testing.T) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not installed")
	}
	proxy, err := goProxy()
	if err != nil {
		t.Skipf("publishing this repository's modules: %v", err)
	}
	out, err := exec.Command(gobin, "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	env := os.Environ()
	// The configured proxy last, for dependencies the local cache lacks;
	// never "direct", which would try to clone the unpublished modules.
	fallback := strings.NewReplacer(",direct", "", "|direct", "").Replace(f[1])
	if fallback == "direct" || fallback == "" {
		fallback = "off"
	}
	env = setenv(env, "GOPROXY", "file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(f[0], "cache", "download"))+","+fallback)
	env = setenv(env, "GOMODCACHE", filepath.Join(t.TempDir(), "modcache"))
	env = setenv(env, "GOFLAGS", "-modcacherw")
	env = setenv(env, "GONOSUMDB", repoModule)
	env = setenv(env, "GOTOOLCHAIN", "local")
	return env
}

func TestOracleGoInstallFromProxy(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	cache := t.TempDir()
	src := Source{PM: "fix", Kind: Go, Module: fixtureCmd, Version: "v0.1.0"}
	res, err := Acquire(context.Background(), cache, src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Version != "v0.1.0" {
		t.Errorf("got changed=%v version %q, want a fresh v0.1.0", res.Changed, res.Version)
	}
	want := filepath.Join(cache, "pm-binaries", "fix", "v0.1.0", "bin", "symposium-pm-fixture")
	if res.Path != want {
		t.Errorf("path %s, want %s", res.Path, want)
	}
	out, err := exec.Command(res.Path, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", res.Path, err, out)
	}
	// Acquired once: a second acquisition is offline and changes nothing,
	// even with no toolchain at all.
	res2, err := Acquire(context.Background(), cache, src, Options{Env: []string{"PATH="}})
	if err != nil || res2.Changed {
		t.Errorf("second acquisition: changed=%v err=%v", res2 != nil && res2.Changed, err)
	}
	inst, err := Installed(cache, src)
	if err != nil || inst.Path != want {
		t.Errorf("Installed = %v, %v", inst, err)
	}
	assertNoTemp(t, cache, "fix")
}

func TestGoInstallFailures(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	for _, tc := range []struct {
		name string
		src  Source
		env  []string
		want string
	}{
		{"unknown module", Source{PM: "x", Kind: Go, Module: "github.com/symposium-dev/symposium-pm/nope/cmd/nope", Version: "v0.1.0"}, env, "nope"},
		{"no such version", Source{PM: "x", Kind: Go, Module: fixtureCmd, Version: "v9.9.9"}, env, "v9.9.9"},
		{"toolchain missing", Source{PM: "x", Kind: Go, Module: fixtureCmd, Version: "v0.1.0"}, []string{"PATH=" + t.TempDir()}, "go toolchain is not installed"},
		{"toolchain override missing", Source{PM: "x", Kind: Go, Module: fixtureCmd, Version: "v0.1.0"}, setenv(env, "SYMPOSIUM_GO", "/nonexistent/go"), "SYMPOSIUM_GO=/nonexistent/go does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := Acquire(context.Background(), cache, tc.src, Options{Env: tc.env})
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *Error", err)
			}
			msg := err.Error()
			for _, w := range []string{`package manager "x"`, tc.src.String(), tc.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if testing.Verbose() {
				t.Log(msg)
			}
			if _, err := Installed(cache, tc.src); !errors.Is(err, ErrNotAcquired) {
				t.Errorf("after a failure Installed = %v, want ErrNotAcquired", err)
			}
			assertNoTemp(t, cache, "x")
		})
	}
}

// assertNoTemp fails when anything but complete copies is left in the PM's
// directory.
func assertNoTemp(t *testing.T, cache, pm string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(cache, "pm-binaries", pm))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
			continue
		}
		if _, err := os.Stat(filepath.Join(cache, "pm-binaries", pm, e.Name(), ReceiptFile)); err != nil {
			t.Errorf("incomplete copy left behind: %s", e.Name())
		}
	}
}
