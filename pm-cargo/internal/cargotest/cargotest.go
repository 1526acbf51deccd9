// Package cargotest runs the real cargo in tests against a fake registry,
// with a private CARGO_HOME, so tests never touch the user's cargo state or
// the network beyond loopback.
package cargotest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
)

// Cargo returns the cargo executable, skipping the test when there is none.
func Cargo(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("cargo not installed")
	}
	return p
}

// Env is an environment for running cargo against a fake registry.
type Env struct {
	Cargo     string
	CargoHome string
	Vars      []string
}

// New makes a CARGO_HOME under t.TempDir() whose config replaces crates-io
// with reg.
func New(t testing.TB, reg *fakeregistry.Registry) *Env {
	t.Helper()
	cargo := Cargo(t)
	home := filepath.Join(t.TempDir(), "cargo-home")
	if err := reg.WriteCargoConfig(home); err != nil {
		t.Fatal(err)
	}
	vars := []string{"CARGO_HOME=" + home, "CARGO_NET_OFFLINE=false", "CARGO_TERM_COLOR=never", "CARGO_HTTP_TIMEOUT=30"}
	// rustup's proxy needs to find its toolchains even though CARGO_HOME moved.
	if os.Getenv("RUSTUP_HOME") == "" {
		if h, err := os.UserHomeDir(); err == nil {
			if _, err := os.Stat(filepath.Join(h, ".rustup")); err == nil {
				vars = append(vars, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
			}
		}
	}
	return &Env{Cargo: cargo, CargoHome: home, Vars: vars}
}

// Environ returns the process environment with e's variables over it.
func (e *Env) Environ(extra ...string) []string {
	env := []string{}
	over := map[string]bool{}
	for _, kv := range append(append([]string{}, e.Vars...), extra...) {
		k, _, _ := strings.Cut(kv, "=")
		over[k] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !over[k] && !strings.HasPrefix(k, "CARGO_") {
			env = append(env, kv)
		}
	}
	return append(append(env, e.Vars...), extra...)
}

// Run runs cargo with args in dir and returns stdout; it fails the test on
// a non-zero exit.
func (e *Env) Run(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	out, err := e.Try(dir, args...)
	if err != nil {
		t.Fatalf("cargo %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	return out
}

// Try runs cargo with args in dir and returns stdout, or an error carrying
// stderr.
func (e *Env) Try(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command(e.Cargo, args...)
	cmd.Dir = dir
	cmd.Env = e.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &Failure{Err: err, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// Failure is a failed cargo run.
type Failure struct {
	Err    error
	Stderr string
}

// Error returns the exit status and cargo's stderr.
func (f *Failure) Error() string { return f.Err.Error() + ": " + strings.TrimSpace(f.Stderr) }

// WriteFiles writes files (slash paths relative to dir).
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
