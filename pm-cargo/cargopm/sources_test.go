package cargopm

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// TestOracleVendoredDirectoryCargoBuildsFrom: with two vendor directories
// holding fnv 1.0.7, each with a plugin of its own, active_plugins offers
// the copy cargo metadata builds from. The configuration either has both
// .cargo/config and .cargo/config.toml (cargo uses the extensionless one,
// and warns: so does the PM, as a diagnostic), or .cargo/config alone
// (cargo reads it and warns that it is deprecated: so does the PM, as a
// diagnostic naming the file), or defines both directory
// sources and replaces crates-io with one (a user who switched
// replace-with and kept the old table): the other is not a source cargo
// reads, whatever the order the PM meets them in.
func TestOracleVendoredDirectoryCargoBuildsFrom(t *testing.T) {
	cargo := cargotest.Cargo(t)
	tests := []struct {
		name    string
		config  map[string]string
		warning string // a substring of the diagnostic the hook must send
	}{
		{
			name: "legacy config beside config.toml",
			config: map[string]string{
				"ws/.cargo/config":      "[source.crates-io]\nreplace-with = \"va\"\n\n[source.va]\ndirectory = \"../va\"\n",
				"ws/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"vb\"\n\n[source.vb]\ndirectory = \"../vb\"\n",
			},
			warning: "exist. Using `",
		},
		{
			name: "legacy config alone",
			config: map[string]string{
				"ws/.cargo/config": "[source.crates-io]\nreplace-with = \"va\"\n\n[source.va]\ndirectory = \"../va\"\n",
			},
			warning: "/ws/.cargo/config` is deprecated in favor of `config.toml`",
		},
		{
			name: "a directory source nothing is replaced with",
			config: map[string]string{
				"ws/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"vb\"\n\n[source.va]\ndirectory = \"../va\"\n\n[source.vb]\ndirectory = \"../vb\"\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"ws/Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nfnv = \"1\"\n",
				"ws/src/lib.rs": "",
				"home/.keep":    "",
			}
			for k, v := range tt.config {
				files[k] = v
			}
			for _, v := range []string{"va", "vb"} {
				files[v+"/fnv/Cargo.toml"] = "[package]\nname = \"fnv\"\nversion = \"1.0.7\"\nedition = \"2015\"\n"
				files[v+"/fnv/src/lib.rs"] = ""
				files[v+"/fnv/SYMPOSIUM.toml"] = "name = \"plugin-from-" + v + "\"\n"
				files[v+"/fnv/.cargo-checksum.json"] = "{\"files\":{},\"package\":null}"
			}
			cargotest.WriteFiles(t, base, files)
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			env := &cargotest.Env{Cargo: cargo, CargoHome: home, Vars: []string{"CARGO_HOME=" + home, "CARGO_TERM_COLOR=never"}}
			out := env.Run(t, ws, "metadata", "--format-version", "1", "--offline")
			var md struct {
				Packages []struct {
					Name         string
					ManifestPath string `json:"manifest_path"`
				}
			}
			if err := json.Unmarshal(out, &md); err != nil {
				t.Fatal(err)
			}
			cargoDir := ""
			for _, p := range md.Packages {
				if p.Name == "fnv" {
					cargoDir = filepath.Clean(filepath.Dir(p.ManifestPath))
				}
			}
			if cargoDir == "" {
				t.Fatalf("cargo metadata has no fnv:\n%s", out)
			}
			for range 10 { // the PM met the sources in map order
				h := pmtest.Hook{New: func() pmserver.PM { return New() }, Options: host.Options{Workspace: ws,
					Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
				r := h.Run(t)
				if len(r.Offers) != 1 || r.Offers[0].Root != cargoDir {
					var roots []string
					for _, o := range r.Offers {
						roots = append(roots, o.Root)
					}
					t.Fatalf("list_deps %v; active_plugins offers from %v, but cargo builds fnv from %s", r.Deps, roots, cargoDir)
				}
				warned := false
				for _, d := range r.Diagnostics {
					warned = warned || tt.warning != "" && strings.Contains(d.Message, tt.warning) && d.File != ""
				}
				if tt.warning != "" && !warned {
					t.Fatalf("no diagnostic saying %q: %+v", tt.warning, r.Diagnostics)
				}
			}
		})
	}
}
