package cargopm

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// oracleCrates is what the fake registry publishes for the differential
// tests.
func oracleCrates() []fakeregistry.Crate {
	c := func(name, ver string, deps ...fakeregistry.Dep) fakeregistry.Crate {
		return fakeregistry.Crate{Name: name, Version: ver, Deps: deps}
	}
	return []fakeregistry.Crate{
		c("a", "1.0.0"), c("ab", "0.2.0", fakeregistry.Dep{Name: "abc", Req: "3"}), c("abc", "3.1.0"),
		c("serde", "1.0.100"), c("serde", "1.0.200"),
		c("rand", "0.7.3", fakeregistry.Dep{Name: "libc", Req: "0.2"}), c("rand", "0.8.5", fakeregistry.Dep{Name: "libc", Req: "0.2"}),
		c("libc", "0.2.150"), c("winapi", "0.3.9"), c("cc", "1.0.83"), c("proptest", "1.4.0"),
		c("heck", "0.4.1"), c("either", "1.9.0"), c("anyhow", "1.0.75"), c("anyhow", "1.0.76"),
		{Name: "anyhow", Version: "1.0.99", Yanked: true},
		c("thiserror", "1.0.50"), c("log", "0.4.20"), c("tokio", "1.2.0", fakeregistry.Dep{Name: "log", Req: "0.4"}),
		c("mio", "0.8.0"),
	}
}

// oracleWorkspaces are generated workspaces covering every case list_deps
// handles: member globs, exclude, a literal member, a virtual root and a
// root package, all dependency tables, target tables, optional deps,
// renames, workspace inheritance (with a rename inside
// [workspace.dependencies]), member path deps, a path dep implicitly a
// member, path deps outside the root or excluded, and two versions of one
// crate used by two members and by one member through a rename.
var oracleWorkspaces = map[string]map[string]string{
	"virtual": {
		"ws/Cargo.toml": `[workspace]
members = ["crates/*", "tools/cli"]
exclude = ["crates/excluded"]
default-members = ["crates/beta"]
resolver = "2"

[patch.crates-io]
heck = { path = "../heck-fork" }

[workspace.package]
version = "0.3.0"

[workspace.dependencies]
anyhow = "1"
te = { package = "thiserror", version = "1.0" }
util = { path = "util" }
log = "0.4"
`,
		"ws/crates/alpha/Cargo.toml": `[package]
name = "alpha"
version.workspace = true
edition = "2021"

[dependencies]
rand = "0.7"
anyhow = { workspace = true }
te = { workspace = true, optional = true }
beta = { path = "../beta" }
excluded = { path = "../excluded" }
outside = { path = "../../../outside" }
casing = { package = "heck", version = "0.4" }
either = { version = "1", optional = true }
gitdep = { git = "GITURL" }

[dev-dependencies]
proptest = "1"

[build-dependencies]
cc = "1"

[target.'cfg(windows)'.dependencies]
winapi = "0.3"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[target.x86_64-unknown-linux-gnu.dev-dependencies]
a = "1"
`,
		"ws/crates/alpha/src/lib.rs": "",
		"ws/crates/beta/Cargo.toml": `[package]
name = "beta"
version = "0.1.0"
edition = "2021"

[dependencies]
rand = "0.8"
rand07 = { package = "rand", version = "0.7" }
log = { workspace = true }
util = { workspace = true }
ab = "0.2"
`,
		"ws/crates/beta/src/lib.rs": "",
		"ws/crates/excluded/Cargo.toml": `[package]
name = "excluded"
version = "0.9.0"
edition = "2021"

[dependencies]
mio = "0.8"
`,
		"ws/crates/excluded/src/lib.rs": "",
		"ws/tools/cli/Cargo.toml": `[package]
name = "cli"
version = "2.0.0"
edition = "2021"

[dependencies]
alpha = { path = "../../crates/alpha" }
serde = "=1.0.100"
`,
		"ws/tools/cli/src/main.rs": "fn main() {}\n",
		"ws/util/Cargo.toml": `[package]
name = "util"
version = "0.0.1"
edition = "2021"

[dependencies]
tokio = "1"
`,
		"ws/util/src/lib.rs": "",
		"outside/Cargo.toml": `[package]
name = "outside"
version = "4.5.6"
edition = "2021"

[dependencies]
serde = "1"
`,
		"outside/src/lib.rs":   "",
		"heck-fork/Cargo.toml": "[package]\nname = \"heck\"\nversion = \"0.4.1\"\nedition = \"2021\"\n",
		"heck-fork/src/lib.rs": "",
	},
	"rootpkg": {
		"ws/Cargo.toml": `[package]
name = "app"
version = "1.0.0"
edition = "2021"
rust-version = "1.60"

[workspace]
members = ["sub"]

[dependencies]
sub = { path = "sub" }
serde = "1.0.150"
anyhow = "=1.0.75"

[dev-dependencies]
tokio = "1"
`,
		"ws/src/main.rs": "fn main() {}\n",
		"ws/sub/Cargo.toml": `[package]
name = "sub"
version = "0.1.0"
edition = "2021"

[dependencies]
log = "0.4"
`,
		"ws/sub/src/lib.rs": "",
	},
	"lockv2": {
		"ws/Cargo.toml": `[package]
name = "old"
version = "0.1.0"
rust-version = "1.45"

[dependencies]
serde = "1"
rand = "0.7"
ab = "0.2"
`,
		"ws/src/lib.rs": "",
	},
	"globs": {
		"ws/Cargo.toml": `[workspace]
members = ["libs/*", "ext/*/two", "apps/app-?", "tools/[ab]*"]
exclude = ["libs/skip"]
`,
		"ws/libs/one/Cargo.toml":       "[package]\nname = \"one\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nserde = \"1\"\n",
		"ws/libs/one/src/lib.rs":       "",
		"ws/ext/nested/two/Cargo.toml": "[package]\nname = \"two\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nlog = \"0.4\"\n",
		"ws/ext/nested/two/src/lib.rs": "",
		"ws/libs/skip/Cargo.toml":      "[package]\nname = \"skip\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nmio = \"0.8\"\n",
		"ws/libs/skip/src/lib.rs":      "",
		"ws/apps/app-1/Cargo.toml":     "[package]\nname = \"app-1\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\neither = \"1\"\n",
		"ws/apps/app-1/src/lib.rs":     "",
		"ws/apps/app-10/Cargo.toml":    "[package]\nname = \"app-10\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n[dependencies]\nwinapi = \"0.3\"\n",
		"ws/apps/app-10/src/lib.rs":    "",
		"ws/tools/alpha/Cargo.toml":    "[package]\nname = \"alpha\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nabc = \"3\"\n",
		"ws/tools/alpha/src/lib.rs":    "",
	},
	"single": {
		"ws/Cargo.toml": `[package]
name = "solo"
version = "0.1.0"
edition = "2021"

[dependencies]
abc = "3"
mio = { version = "0.8", optional = true }
`,
		"ws/src/lib.rs": "",
	},
}

// gitRepo makes a local git repository holding the crate gitdep 0.7.0 and
// returns its file:// URL, or skips the test without git.
func gitRepo(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(t.TempDir(), "gitdep")
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml": "[package]\nname = \"gitdep\"\nversion = \"0.7.0\"\nedition = \"2021\"\n",
		"src/lib.rs": "",
	})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "gitdep"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return "file://" + dir
}

// metadataDirect computes the direct dependency set from `cargo metadata`:
// the resolve deps of every workspace member, members removed.
func metadataDirect(t *testing.T, out []byte) []protocol.PackageID {
	t.Helper()
	var md struct {
		Packages []struct {
			ID, Name, Version string
		}
		WorkspaceMembers []string `json:"workspace_members"`
		Resolve          struct {
			Nodes []struct {
				ID   string
				Deps []struct{ Pkg string }
			}
		}
	}
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatal(err)
	}
	byID := map[string]protocol.PackageID{}
	for _, p := range md.Packages {
		byID[p.ID] = protocol.PackageID{PM: Name, Name: p.Name, Version: p.Version}
	}
	var got []protocol.PackageID
	for _, n := range md.Resolve.Nodes {
		if !slices.Contains(md.WorkspaceMembers, n.ID) {
			continue
		}
		for _, d := range n.Deps {
			if slices.Contains(md.WorkspaceMembers, d.Pkg) {
				continue
			}
			got = append(got, byID[d.Pkg])
		}
	}
	return sortDeps(got)
}

func TestOracleListDepsMatchesCargoMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that runs cargo metadata on every generated workspace for minutes: make oracle runs it; -short (make race) skips it")
	}
	reg, err := fakeregistry.New(oracleCrates()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	gitURL := gitRepo(t)
	for name, files := range oracleWorkspaces {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cargotest.WriteFiles(t, dir, files)
			for p, body := range files {
				if strings.Contains(body, "GITURL") {
					cargotest.WriteFiles(t, dir, map[string]string{p: strings.ReplaceAll(body, "GITURL", gitURL)})
				}
			}
			ws := filepath.Join(dir, "ws")
			env.Run(t, ws, "generate-lockfile")
			want := metadataDirect(t, env.Run(t, ws, "metadata", "--format-version", "1", "--all-features"))
			lockData, err := os.ReadFile(filepath.Join(ws, "Cargo.lock"))
			if err != nil {
				t.Fatal(err)
			}
			variants := map[string][]byte{"as written": lockData}
			lf, err := cargolock.Parse("Cargo.lock", lockData)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("cargo wrote lockfile version %d; cargo metadata's direct deps: %v", lf.Version, want)
			if len(want) == 0 {
				t.Fatal("the oracle found no dependencies")
			}
			variants["v1"] = encodeLock(t, lf, 1)
			for variant, data := range variants {
				if err := os.WriteFile(filepath.Join(ws, "Cargo.lock"), data, 0o644); err != nil {
					t.Fatal(err)
				}
				if variant != "as written" {
					// cargo itself must read the rewritten lockfile the same way.
					// (--offline, not --locked: with a git dependency cargo
					// upgrades version 1 files, whose default-branch encoding
					// is ambiguous.)
					got := metadataDirect(t, env.Run(t, ws, "metadata", "--format-version", "1", "--all-features", "--offline"))
					if !slices.Equal(got, want) {
						t.Fatalf("%s: cargo reads the rewritten lockfile differently: %v", variant, got)
					}
					if err := os.WriteFile(filepath.Join(ws, "Cargo.lock"), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// Start from a member directory too: discovery walks up.
				for _, start := range []string{ws, filepath.Join(ws, "crates", "beta"), filepath.Join(ws, "sub")} {
					if _, err := os.Stat(start); err != nil {
						continue
					}
					w, err := cargotoml.Load(start, cargotoml.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if len(w.Errors) > 0 {
						t.Fatalf("member errors: %v", w.Errors)
					}
					l, err := cargolock.ReadFile(w.Lockfile)
					if err != nil {
						t.Fatal(err)
					}
					got := DirectDeps(w, l)
					if !slices.Equal(got, want) {
						t.Errorf("%s, from %s:\n got  %v\n want %v (cargo metadata)", variant, start, got, want)
					}
				}
			}
		})
	}
}
