package fakeregistry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
)

// TestRealCargoFetch proves the fake with the real client: cargo resolves
// names of every index path length, skips a yanked version, verifies the
// checksums and unpacks the sources.
func TestRealCargoFetch(t *testing.T) {
	reg, err := fakeregistry.New(
		fakeregistry.Crate{Name: "a", Version: "1.0.0"},
		fakeregistry.Crate{Name: "ab", Version: "0.2.0", Deps: []fakeregistry.Dep{{Name: "abc", Req: "^3"}}},
		fakeregistry.Crate{Name: "abc", Version: "3.1.0"},
		fakeregistry.Crate{Name: "abc", Version: "3.2.0", Yanked: true},
		fakeregistry.Crate{Name: "serde_like", Version: "1.0.5", Files: map[string]string{"SYMPOSIUM.toml": "name = \"x\"\n"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	dir := t.TempDir()
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml": "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\na = \"1\"\nab = \"0.2\"\nserde_like = \"1\"\n",
		"src/lib.rs": "",
	})
	env.Run(t, dir, "fetch")
	lf, err := cargolock.ReadFile(filepath.Join(dir, "Cargo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range lf.Packages {
		if p.Source != "" {
			got[p.Name] = p.Version
			if p.Checksum != reg.Checksum(p.Name, p.Version) {
				t.Errorf("%s %s: lock checksum %s, registry %s", p.Name, p.Version, p.Checksum, reg.Checksum(p.Name, p.Version))
			}
		}
	}
	want := map[string]string{"a": "1.0.0", "ab": "0.2.0", "abc": "3.1.0", "serde_like": "1.0.5"}
	for n, v := range want {
		if got[n] != v {
			t.Errorf("locked %s = %q, want %q (yanked versions must be skipped)", n, got[n], v)
		}
	}
	srcs, _ := filepath.Glob(filepath.Join(env.CargoHome, "registry", "src", "*", "serde_like-1.0.5", "SYMPOSIUM.toml"))
	if len(srcs) != 1 {
		t.Fatalf("cargo did not unpack serde_like: %v", srcs)
	}
	if b, _ := os.ReadFile(srcs[0]); !strings.Contains(string(b), "name") {
		t.Errorf("unpacked SYMPOSIUM.toml = %q", b)
	}
	reqs := strings.Join(reg.Requests(), "\n")
	for _, p := range []string{"/index/config.json", "/index/1/a", "/index/2/ab", "/index/3/a/abc", "/index/se/rd/serde_like", "/api/v1/crates/a/1.0.0/download"} {
		if !strings.Contains(reqs, p) {
			t.Errorf("cargo never requested %s; requests:\n%s", p, reqs)
		}
	}
}
