package acquire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sparseRegistry serves one crate over cargo's sparse registry protocol:
// config.json, the index file at its path by name length, and the download.
func sparseRegistry(t *testing.T, name, version string, crate []byte) *httptest.Server {
	t.Helper()
	sum := sha256.Sum256(crate)
	entry, _ := json.Marshal(map[string]any{
		"name": name, "vers": version, "deps": []any{}, "cksum": hex.EncodeToString(sum[:]),
		"features": map[string]any{}, "yanked": false,
	})
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config.json":
			w.Write([]byte(`{"dl":"` + srv.URL + `/api/v1/crates","api":"` + srv.URL + `"}`))
		case "/" + name[:2] + "/" + name[2:4] + "/" + name:
			w.Write(append(entry, '\n'))
		case "/api/v1/crates/" + name + "/" + version + "/download":
			w.Write(crate)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// packTinyPM runs cargo package on testdata/tiny-pm (copied out of the
// source tree) and returns the .crate.
func packTinyPM(t *testing.T, cargo string) []byte {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"Cargo.toml", "src/main.rs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "tiny-pm", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(cargo, "package", "--offline", "--no-verify", "--allow-dirty")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+filepath.Join(dir, "target"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo package: %v\n%s", err, out)
	}
	crate, err := os.ReadFile(filepath.Join(dir, "target", "package", "tiny-pm-0.1.0.crate"))
	if err != nil {
		t.Fatal(err)
	}
	return crate
}

// cargoEnv returns an environment whose cargo replaces crates.io with the
// loopback sparse registry, through CARGO_HOME's config.toml.
func cargoEnv(t *testing.T) []string {
	t.Helper()
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("cargo not installed")
	}
	srv := sparseRegistry(t, "tiny-pm", "0.1.0", packTinyPM(t, cargo))
	home := t.TempDir()
	config := "[source.crates-io]\nreplace-with = \"loopback\"\n\n[source.loopback]\nregistry = \"sparse+" + srv.URL + "/\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	// cargo and rustc stay where they are; only the configuration moves.
	env = setenv(env, "SYMPOSIUM_CARGO", cargo)
	if rustc, err := exec.LookPath("rustc"); err == nil {
		env = setenv(env, "RUSTC", rustc)
	}
	env = setenv(env, "CARGO_HOME", home)
	env = setenv(env, "CARGO_TARGET_DIR", filepath.Join(t.TempDir(), "target"))
	return env
}

func TestOracleCargoInstallFromSparseRegistry(t *testing.T) {
	t.Parallel()
	env := cargoEnv(t)
	cache := t.TempDir()
	src := Source{PM: "tiny", Kind: Cargo, Crate: "tiny-pm", Version: "0.1.0"}
	res, err := Acquire(context.Background(), cache, src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "pm-binaries", "tiny", "0.1.0", "bin", "tiny-pm")
	if res.Version != "0.1.0" || res.Path != want {
		t.Errorf("acquired %s at %s, want 0.1.0 at %s", res.Version, res.Path, want)
	}
	out, err := exec.Command(res.Path, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "tiny-pm 0.1.0" {
		t.Errorf("%s --version: %v: %s", res.Path, err, out)
	}
	assertNoTemp(t, cache, "tiny")
}

func TestCargoFailures(t *testing.T) {
	t.Parallel()
	env := cargoEnv(t)
	for _, tc := range []struct {
		name string
		src  Source
		env  []string
		want string
	}{
		{"unknown crate", Source{PM: "c", Kind: Cargo, Crate: "no-such-pm", Version: "1.0.0"}, env, "no-such-pm"},
		{"no such version", Source{PM: "c", Kind: Cargo, Crate: "tiny-pm", Version: "9.9.9"}, env, "9.9.9"},
		{"toolchain missing", Source{PM: "c", Kind: Cargo, Crate: "tiny-pm"}, []string{"PATH=" + t.TempDir()}, "cargo toolchain is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := Acquire(context.Background(), cache, tc.src, Options{Env: tc.env})
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *Error", err)
			}
			for _, w := range []string{`package manager "c"`, tc.src.String(), tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if testing.Verbose() {
				t.Log(err)
			}
			assertNoTemp(t, cache, "c")
		})
	}
}

// cargo install --git from a local repository at a rev: pinned, keyed by
// the repository, and the version read back from cargo's install record.
func TestOracleCargoInstallFromGit(t *testing.T) {
	t.Parallel()
	env := cargoEnv(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	for _, f := range []string{"Cargo.toml", "src/main.rs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "tiny-pm", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(repo, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(repo, f), data, 0o644)
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "tiny-pm"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = repo, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command(git, "rev-parse", "HEAD")
	cmd.Dir = repo
	rev, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	src := Source{PM: "tinygit", Kind: Cargo, Git: "file://" + filepath.ToSlash(repo), Rev: strings.TrimSpace(string(rev))}
	if !src.Pinned() || !strings.HasPrefix(src.Key(), "git-") {
		t.Errorf("a git rev: pinned %v, key %s", src.Pinned(), src.Key())
	}
	res, err := Acquire(context.Background(), t.TempDir(), src, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "0.1.0" || filepath.Base(res.Path) != "tiny-pm" || filepath.Base(res.Dir) != src.Key() {
		t.Errorf("acquired %s at %s", res.Version, res.Path)
	}
}
