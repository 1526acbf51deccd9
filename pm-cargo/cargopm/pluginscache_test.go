package cargopm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

const cacheLock = `version = 3

[[package]]
name = "app"
version = "0.1.0"
dependencies = ["a", "b", "c", "local"]

[[package]]
name = "a"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "b"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "c"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "local"
version = "0.5.0"
`

// cacheWorkspace writes a crate with three vendored dependencies (b with
// SYMPOSIUM.toml, c with a metadata table, a with an empty skills tree)
// and a path dependency with a plugin, under dir/ws; it returns the
// workspace and the CARGO_HOME to use.
func cacheWorkspace(t *testing.T, dir string) (ws, home string) {
	t.Helper()
	cargotest.WriteFiles(t, dir, map[string]string{
		"ws/Cargo.toml":                  "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\na = \"1\"\nb = \"1\"\nc = \"1\"\nlocal = { path = \"../local\" }\n",
		"ws/Cargo.lock":                  cacheLock,
		"ws/.cargo/config.toml":          "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n",
		"ws/vendor/a/Cargo.toml":         "[package]\nname = \"a\"\nversion = \"1.0.0\"\n",
		"ws/vendor/a/skills/x/notes.txt": "",
		"ws/vendor/b/Cargo.toml":         "[package]\nname = \"b\"\nversion = \"1.0.0\"\n",
		"ws/vendor/b/SYMPOSIUM.toml":     "name = \"b-plugin\"\n",
		"ws/vendor/c/Cargo.toml":         "[package]\nname = \"c\"\nversion = \"1.0.0\"\n\n[package.metadata.symposium]\nname = \"c-plugin\"\n",
		"local/Cargo.toml":               "[package]\nname = \"local\"\nversion = \"0.5.0\"\n\n[package.metadata.symposium]\nname = \"local-plugin\"\n",
		"home/.keep":                     "",
	})
	return filepath.Join(dir, "ws"), filepath.Join(dir, "home")
}

// TestActivePluginsCache: a second active_plugins on unchanged inputs is
// served from the persisted cache; after each kind of change the cached PM
// answers exactly what a PM without a cache answers.
func TestActivePluginsCache(t *testing.T) {
	deps := ids("a@1.0.0", "b@1.0.0", "c@1.0.0", "local@0.5.0")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"nothing", func(*testing.T, string) {}},
		{"Cargo.toml gains a metadata table", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/Cargo.toml": "[package]\nname = \"a\"\nversion = \"1.0.0\"\n\n[package.metadata.symposium]\nname = \"a-plugin\"\n"})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/SYMPOSIUM.toml": "name = \"a-plugin\"\n"})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "ws/vendor/b/SYMPOSIUM.toml"))
		}},
		{"SYMPOSIUM.toml edited", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/b/SYMPOSIUM.toml": "name = \"b-renamed\"\n"})
		}},
		{"SKILL.md added deep in skills", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
		}},
		{"vendored directory replaced", func(t *testing.T, dir string) {
			v := filepath.Join(dir, "ws/vendor")
			cargotest.WriteFiles(t, v, map[string]string{".new/Cargo.toml": "[package]\nname = \"b\"\nversion = \"1.0.0\"\n"})
			os.RemoveAll(filepath.Join(v, "b"))
			if err := os.Rename(filepath.Join(v, ".new"), filepath.Join(v, "b")); err != nil {
				t.Fatal(err)
			}
		}},
		{"cargo configuration points elsewhere", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{
				"ws/.cargo/config.toml":    "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"other\"\n",
				"ws/other/b/Cargo.toml":    "[package]\nname = \"b\"\nversion = \"1.0.0\"\n",
				"ws/other/b/notes.txt":     "",
				"ws/other/c/Cargo.toml":    "[package]\nname = \"c\"\nversion = \"1.0.0\"\n",
				"ws/other/a/Cargo.toml":    "[package]\nname = \"a\"\nversion = \"1.0.0\"\n",
				"ws/other/a/skills/s/x.md": "",
			})
		}},
		{"lockfile changes the path dependency's version", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{
				"ws/Cargo.lock":    cacheLock[:len(cacheLock)-len("0.5.0\"\n")] + "0.6.0\"\n",
				"local/Cargo.toml": "[package]\nname = \"local\"\nversion = \"0.6.0\"\n\n[package.metadata.symposium]\nname = \"local-plugin\"\n",
			})
		}},
		{"path dependency's manifest edited", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"local/Cargo.toml": "[package]\nname = \"local\"\nversion = \"0.5.0\"\n\n[package.metadata.symposium]\nname = \"renamed\"\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, home := cacheWorkspace(t, dir)
			env := map[string]string{"CARGO_HOME": home, "HOME": home}
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			p := newPM(t, ws, env)
			ctx := context.Background()
			first, err := p.ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != 3 {
				t.Fatalf("first answer %v", pmtest.OfferSet(first))
			}
			cacheFiles, _ := filepath.Glob(filepath.Join(p.session().CacheDir, "cargo", "active_plugins", "*.cache"))
			if len(cacheFiles) != 1 {
				t.Fatalf("persisted entries %v", cacheFiles)
			}
			tc.change(t, dir)
			got, err := p.ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			fresh := newPM(t, ws, env)
			fresh.session().CacheDir = ""
			want, err := fresh.ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			pmtest.CheckInvalidation(t, tc.name != "nothing", first, got, want)
		})
	}
}
