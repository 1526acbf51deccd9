package cargopm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// debianRegistry is where Debian's librust-*-dev packages install crate
// sources, laid out as a cargo directory source.
const debianRegistry = "/usr/share/cargo/registry"

// debianCrates are the crates the differential suite resolves against (any
// version Debian packages); .ci/run installs their librust-*-dev packages.
// The set is closed under the dependencies cargo resolves for the generated
// workspaces, which debianEnv checks by resolving debianProbe.
var debianCrates = []string{
	"autocfg", "cfg-if", "either", "fnv", "hex", "itoa", "libc", "memchr", "proc-macro2",
	"quote", "ryu", "scopeguard", "serde", "serde_derive", "static_assertions", "syn",
	"unicode-ident",
}

// debianProbe depends on every registry crate the cases use, with their
// requirements and features.
const debianProbe = `[package]
name = "probe"
version = "0.1.0"
edition = "2021"

[dependencies]
autocfg = "1"
cfg-if = "1.0"
either = { version = "1", default-features = false }
fnv = "1"
hex = "0.4"
itoa = "1"
memchr = "2"
ryu = "1"
scopeguard = "1"
serde = { version = "1.0.100", features = ["derive", "std"] }
static_assertions = "1"
`

// debianCase is one generated layout: its files (slash paths under a
// temporary directory; GIT:<repo> and REV:<repo> are replaced by the URL
// and head commit of a local git repository the test makes), and the
// directories the workspace is opened from.
type debianCase struct {
	files  map[string]string
	starts []string
}

// debianGitRepos are the local git repositories the cases depend on: each
// holds the files given, committed on "main"; a "dev" branch adds one more
// commit and a tag "v0.3.0" marks the first.
var debianGitRepos = map[string]map[string]string{
	"plain": {
		"Cargo.toml": "[package]\nname = \"gplain\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\n",
		"src/lib.rs": "",
	},
	"branchy": {
		"Cargo.toml": "[package]\nname = \"gbranch\"\nversion = \"0.2.0\"\nedition = \"2021\"\n",
		"src/lib.rs": "",
	},
	"tagged": {
		"Cargo.toml": "[package]\nname = \"gtag\"\nversion = \"0.3.0\"\nedition = \"2021\"\n\n[dependencies]\nfnv = \"1\"\n",
		"src/lib.rs": "",
	},
	"pinned": {
		"Cargo.toml": "[package]\nname = \"grev\"\nversion = \"0.4.0\"\nedition = \"2021\"\n",
		"src/lib.rs": "",
	},
	// The same name and version as a crate in the directory source: the
	// lockfile must name each by source.
	"cfgif": {
		"Cargo.toml": "[package]\nname = \"cfg-if\"\nversion = \"1.0.0\"\nedition = \"2018\"\n",
		"src/lib.rs": "",
	},
	// A repository holding a workspace; the dependency picks one crate.
	"multi": {
		"Cargo.toml":              "[workspace]\nmembers = [\"crates/*\"]\n",
		"crates/one/Cargo.toml":   "[package]\nname = \"gone\"\nversion = \"1.1.0\"\nedition = \"2021\"\n\n[dependencies]\nhex = \"0.4\"\n",
		"crates/one/src/lib.rs":   "",
		"crates/other/Cargo.toml": "[package]\nname = \"gother\"\nversion = \"1.2.0\"\nedition = \"2021\"\n",
		"crates/other/src/lib.rs": "",
	},
	// A patch of a registry crate with a newer version.
	"ryufork": {
		"Cargo.toml": "[package]\nname = \"ryu\"\nversion = \"1.0.3\"\nedition = \"2018\"\n",
		"src/lib.rs": "",
	},
}

const pkgEd = "version = \"0.1.0\"\nedition = \"2021\"\n"

// debianCases are the generated shapes. Every case is written by this test.
var debianCases = map[string]debianCase{
	// Renames, optional dependencies and features, every dependency table
	// and target tables, in a lone package.
	"features": {files: map[string]string{
		"ws/Cargo.toml": `[package]
name = "feat"
version = "0.2.0"
edition = "2021"

[dependencies]
serde = { version = "1", features = ["derive"], optional = true }
either = { version = "1", optional = true, default-features = false }
num = { package = "itoa", version = "1" }

[features]
default = []
fmt = ["dep:either", "serde?/std"]

[dev-dependencies]
static_assertions = "1"

[build-dependencies]
autocfg = "1"

[target.'cfg(windows)'.dependencies]
scopeguard = "1"

[target.'cfg(target_os = "macos")'.dev-dependencies]
fnv = "1"

[target.x86_64-pc-windows-gnu.build-dependencies]
hex = "0.4"
`,
		"ws/src/lib.rs": "",
	}, starts: []string{"ws", "ws/src"}},

	// Workspace inheritance (package version, dependencies with a rename and
	// a path), [patch] to a path, a root package with a
	// member and default-members.
	"inherit": {files: map[string]string{
		"ws/Cargo.toml": `[package]
name = "top"
version.workspace = true
edition = "2021"

[dependencies]
corelib = { workspace = true }
mc = { workspace = true, optional = true }

[dev-dependencies]
app = { path = "crates/app" }

[workspace]
members = ["crates/*"]
default-members = ["crates/app"]
resolver = "2"

[workspace.package]
version = "1.2.3"

[workspace.dependencies]
serde = { version = "1.0.100", default-features = false }
bytes_hex = { package = "hex", version = "0.4" }
mc = { package = "memchr", version = "2" }
corelib = { path = "crates/corelib" }

[patch.crates-io]
itoa = { path = "patches/itoa" }
`,
		"ws/src/lib.rs": "",
		"ws/crates/corelib/Cargo.toml": `[package]
name = "corelib"
version.workspace = true
edition = "2021"

[dependencies]
serde = { workspace = true, features = ["derive"] }
bytes_hex = { workspace = true }
itoa = "1"
fnv = "1"
`,
		"ws/crates/corelib/src/lib.rs": "",
		"ws/crates/app/Cargo.toml": `[package]
name = "app"
version = "0.9.0"
edition = "2021"

[dependencies]
corelib = { workspace = true }
memchr = "2"
hexa = { package = "hex", version = "0.4", optional = true }

[build-dependencies]
ryu = "1"
`,
		"ws/crates/app/src/lib.rs":     "",
		"ws/patches/itoa/Cargo.toml":   "[package]\nname = \"itoa\"\nversion = \"1.0.5\"\nedition = \"2018\"\n",
		"ws/patches/itoa/src/lib.rs":   "",
		"ws/crates/corelib/src/a/b.rs": "",
	}, starts: []string{"ws", "ws/crates/app", "ws/crates/corelib/src/a", "ws/patches/itoa"}},

	// [replace] of a registry crate by a path outside the root and of
	// another by a git repository.
	"replace": {files: map[string]string{
		"ws/Cargo.toml": "[package]\nname = \"rep\"\n" + pkgEd + `
[dependencies]
fnv = "1"
cfg-if = "1"
hex = "0.4"

[replace]
"fnv:1.0.7" = { path = "../fnv" }
"cfg-if:1.0.0" = { git = "GIT:cfgif" }
`,
		"ws/src/lib.rs":  "",
		"fnv/Cargo.toml": "[package]\nname = \"fnv\"\nversion = \"1.0.7\"\nedition = \"2018\"\n",
		"fnv/src/lib.rs": "",
	}, starts: []string{"ws", "ws/src", "fnv"}},

	// Git dependencies of every reference kind, a git [patch], and one name
	// and version from two sources (the directory source and a git
	// repository; one repository's default branch and another branch),
	// across two members.
	"git": {files: map[string]string{
		"ws/Cargo.toml": `[workspace]
members = ["m1", "m2"]

[patch.crates-io]
ryu = { git = "GIT:ryufork" }
`,
		"ws/m1/Cargo.toml": "[package]\nname = \"m1\"\n" + pkgEd + `
[dependencies]
gplain = { git = "GIT:plain" }
gbranch = { git = "GIT:branchy", branch = "dev" }
gtag = { git = "GIT:tagged", tag = "v0.3.0" }
grev = { git = "GIT:pinned", rev = "REV:pinned" }
cfg-if = "1"
ryu = "1"
`,
		"ws/m1/src/lib.rs": "",
		"ws/m2/Cargo.toml": "[package]\nname = \"m2\"\n" + pkgEd + `
[dependencies]
cfgif_git = { package = "cfg-if", git = "GIT:cfgif" }
gone = { git = "GIT:multi" }
gplain = { git = "GIT:plain" }
gplain_dev = { package = "gplain", git = "GIT:plain", branch = "dev" }

[dev-dependencies]
cfg-if = "1.0"
`,
		"ws/m2/src/lib.rs": "",
	}, starts: []string{"ws", "ws/m2", "ws/m1/src"}},

	// Members listed explicitly under a broader exclude, an excluded
	// package opened on its own, a glob with an exclude, a path dependency
	// outside the root.
	"excludes": {files: map[string]string{
		"ws/Cargo.toml": `[workspace]
members = ["crates/a", "crates/b", "tools/*"]
exclude = ["crates", "tools/off"]
`,
		"ws/crates/a/Cargo.toml":  "[package]\nname = \"a\"\n" + pkgEd + "\n[dependencies]\neither = \"1\"\nb = { path = \"../b\" }\nc = { path = \"../c\" }\n",
		"ws/crates/a/src/lib.rs":  "",
		"ws/crates/b/Cargo.toml":  "[package]\nname = \"b\"\n" + pkgEd + "\n[dependencies]\nhex = \"0.4\"\noutside = { path = \"../../../outside\" }\n",
		"ws/crates/b/src/lib.rs":  "",
		"ws/crates/c/Cargo.toml":  "[package]\nname = \"c\"\nversion = \"0.5.0\"\nedition = \"2021\"\n\n[dependencies]\nfnv = \"1\"\n",
		"ws/crates/c/src/lib.rs":  "",
		"ws/tools/on/Cargo.toml":  "[package]\nname = \"on\"\n" + pkgEd + "\n[dependencies]\nitoa = \"1\"\n",
		"ws/tools/on/src/lib.rs":  "",
		"ws/tools/off/Cargo.toml": "[package]\nname = \"off\"\n" + pkgEd + "\n[dependencies]\nryu = \"1\"\n",
		"ws/tools/off/src/lib.rs": "",
		"outside/Cargo.toml":      "[package]\nname = \"outside\"\nversion = \"3.0.0\"\nedition = \"2021\"\n\n[dependencies]\nmemchr = \"2\"\n",
		"outside/src/lib.rs":      "",
	}, starts: []string{"ws", "ws/crates/a", "ws/crates/a/src", "ws/crates/b", "ws/crates/c", "ws/tools/on", "ws/tools/off", "outside"}},

	// A workspace nested inside another one's directory, and an excluded
	// vendor directory.
	"nested": {files: map[string]string{
		"ws/Cargo.toml": `[package]
name = "outer"
version = "0.1.0"
edition = "2021"

[dependencies]
m1 = { path = "m1" }
either = "1"

[workspace]
members = ["m1"]
exclude = ["vendor"]
`,
		"ws/src/lib.rs":                 "",
		"ws/m1/Cargo.toml":              "[package]\nname = \"m1\"\n" + pkgEd + "\n[dependencies]\nhex = \"0.4\"\n",
		"ws/m1/src/lib.rs":              "",
		"ws/inner/Cargo.toml":           "[workspace]\nmembers = [\"x\", \"y\"]\n",
		"ws/inner/x/Cargo.toml":         "[package]\nname = \"x\"\n" + pkgEd + "\n[dependencies]\nitoa = \"1\"\ny = { path = \"../y\" }\n",
		"ws/inner/x/src/lib.rs":         "",
		"ws/inner/y/Cargo.toml":         "[package]\nname = \"y\"\n" + pkgEd + "\n[dependencies]\nryu = \"1\"\n",
		"ws/inner/y/src/lib.rs":         "",
		"ws/vendor/lib/Cargo.toml":      "[package]\nname = \"vlib\"\n" + pkgEd + "\n[dependencies]\nfnv = \"1\"\n",
		"ws/vendor/lib/src/lib.rs":      "",
		"ws/vendor/lib/src/deep/mod.rs": "",
	}, starts: []string{"ws", "ws/m1", "ws/inner", "ws/inner/x", "ws/inner/y/src", "ws/vendor/lib", "ws/vendor/lib/src/deep"}},

	// package.workspace: a member outside the root naming it, a package
	// under that member inheriting its choice, and a path dependency outside
	// the root pointing back.
	"pointers": {files: map[string]string{
		"ws/Cargo.toml":          "[workspace]\nmembers = [\"crates/m\", \"../pa\", \"../pa/inner\"]\n",
		"ws/crates/m/Cargo.toml": "[package]\nname = \"m\"\n" + pkgEd + "\n[dependencies]\next = { path = \"../../../ext\" }\nhex = \"0.4\"\n",
		"ws/crates/m/src/lib.rs": "",
		"pa/Cargo.toml":          "[package]\nname = \"pa\"\nversion = \"0.2.0\"\nedition = \"2021\"\nworkspace = \"../ws\"\n\n[dependencies]\neither = \"1\"\n",
		"pa/src/lib.rs":          "",
		"pa/inner/Cargo.toml":    "[package]\nname = \"inner\"\n" + pkgEd + "\n[dependencies]\nfnv = \"1\"\n",
		"pa/inner/src/lib.rs":    "",
		"ext/Cargo.toml":         "[package]\nname = \"ext\"\nversion = \"0.7.0\"\nedition = \"2021\"\nworkspace = \"../ws\"\n\n[dependencies]\nitoa = \"1\"\n",
		"ext/src/lib.rs":         "",
	}, starts: []string{"ws", "ws/crates/m", "pa", "pa/inner", "pa/inner/src", "ext"}},

	// Member globs over hidden directories and target/.
	"hidden": {files: map[string]string{
		"ws/Cargo.toml":                       "[workspace]\nmembers = [\"crates/*\", \"more/**/leaf\"]\n",
		"ws/crates/.hidden/Cargo.toml":        "[package]\nname = \"hidden\"\n" + pkgEd + "\n[dependencies]\nhex = \"0.4\"\n",
		"ws/crates/.hidden/src/lib.rs":        "",
		"ws/crates/target/Cargo.toml":         "[package]\nname = \"tgt\"\n" + pkgEd + "\n[dependencies]\nitoa = \"1\"\n",
		"ws/crates/target/src/lib.rs":         "",
		"ws/crates/vis/Cargo.toml":            "[package]\nname = \"vis\"\n" + pkgEd + "\n[dependencies]\nfnv = \"1\"\n",
		"ws/crates/vis/src/lib.rs":            "",
		"ws/more/.dot/leaf/Cargo.toml":        "[package]\nname = \"dotleaf\"\n" + pkgEd + "\n[dependencies]\nryu = \"1\"\n",
		"ws/more/.dot/leaf/src/lib.rs":        "",
		"ws/more/target/deep/leaf/Cargo.toml": "[package]\nname = \"deepleaf\"\n" + pkgEd + "\n[dependencies]\neither = \"1\"\n",
		"ws/more/target/deep/leaf/src/lib.rs": "",
	}, starts: []string{"ws", "ws/crates/.hidden", "ws/crates/target/src", "ws/more/target/deep/leaf"}},

	// Layouts cargo refuses: a package under a workspace that does not list
	// it, and a member glob matching a directory without a Cargo.toml.
	"refused": {files: map[string]string{
		"ws/Cargo.toml":          "[workspace]\nmembers = [\"a\"]\n",
		"ws/a/Cargo.toml":        "[package]\nname = \"a\"\n" + pkgEd + "\n[dependencies]\nhex = \"0.4\"\n",
		"ws/a/src/lib.rs":        "",
		"ws/stray/Cargo.toml":    "[package]\nname = \"stray\"\n" + pkgEd + "\n[dependencies]\nfnv = \"1\"\n",
		"ws/stray/src/lib.rs":    "",
		"bad/Cargo.toml":         "[workspace]\nmembers = [\"libs/*\"]\n",
		"bad/libs/ok/Cargo.toml": "[package]\nname = \"ok\"\n" + pkgEd,
		"bad/libs/ok/src/lib.rs": "",
		"bad/libs/docs/README":   "not a crate\n",
	}, starts: []string{"ws", "ws/a", "ws/stray", "ws/stray/src", "bad", "bad/libs/ok"}},
}

// debianEnv returns a cargo environment whose CARGO_HOME replaces crates-io
// with Debian's crate sources, or skips the test naming what is missing.
func debianEnv(t *testing.T) *cargotest.Env {
	t.Helper()
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("cargo not installed: the Debian-sources oracle suite needs it")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the Debian-sources oracle suite needs it")
	}
	var missing []string
	for _, c := range debianCrates {
		found, _ := filepath.Glob(filepath.Join(debianRegistry, c+"-[0-9]*", ".cargo-checksum.json"))
		if len(found) == 0 {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		t.Skipf("%s lacks %s: install the librust-*-dev packages .ci/run lists", debianRegistry, strings.Join(missing, ", "))
	}
	home := filepath.Join(t.TempDir(), "cargo-home")
	cargotest.WriteFiles(t, home, map[string]string{"config.toml": fmt.Sprintf(
		"[source.crates-io]\nreplace-with = \"debian\"\n\n[source.debian]\ndirectory = %q\n", debianRegistry)})
	vars := []string{"CARGO_HOME=" + home, "CARGO_TERM_COLOR=never"}
	if os.Getenv("RUSTUP_HOME") == "" {
		if h, err := os.UserHomeDir(); err == nil {
			if _, err := os.Stat(filepath.Join(h, ".rustup")); err == nil {
				vars = append(vars, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
			}
		}
	}
	env := &cargotest.Env{Cargo: cargo, CargoHome: home, Vars: vars}
	probe := filepath.Join(t.TempDir(), "probe")
	cargotest.WriteFiles(t, probe, map[string]string{"Cargo.toml": debianProbe, "src/lib.rs": ""})
	if _, err := env.Try(probe, "generate-lockfile", "--offline"); err != nil {
		t.Skipf("the crates in %s do not resolve the suite's requirements (install the librust-*-dev packages .ci/run lists): %v", debianRegistry, err)
	}
	return env
}

// makeGitRepos creates debianGitRepos under dir and returns the
// placeholder replacements for their URLs and head commits.
func makeGitRepos(t *testing.T, dir string) map[string]string {
	t.Helper()
	repl := map[string]string{}
	for name, files := range debianGitRepos {
		repo := filepath.Join(dir, name)
		cargotest.WriteFiles(t, repo, files)
		git := func(args ...string) string {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v in %s: %v\n%s", args, repo, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		git("init", "-q", "-b", "main")
		git("add", ".")
		git("commit", "-q", "-m", "first")
		git("tag", "v0.3.0")
		head := git("rev-parse", "HEAD")
		git("checkout", "-q", "-b", "dev")
		cargotest.WriteFiles(t, repo, map[string]string{"src/dev.rs": ""})
		git("add", ".")
		git("commit", "-q", "-m", "dev")
		git("checkout", "-q", "main")
		repl["GIT:"+name] = "file://" + repo
		repl["REV:"+name] = head
	}
	return repl
}

// cargoAnswer is what cargo metadata says about a workspace.
type cargoAnswer struct {
	Root    string
	Members []protocol.WorkspaceMember
	Deps    []protocol.PackageID
}

// parseMetadata reads cargo metadata's answer: the workspace root, the
// members, and the direct dependencies of the members (members removed).
func parseMetadata(t *testing.T, out []byte) cargoAnswer {
	t.Helper()
	var md struct {
		Packages []struct {
			ID, Name, Version string
			ManifestPath      string `json:"manifest_path"`
		}
		WorkspaceMembers []string `json:"workspace_members"`
		WorkspaceRoot    string   `json:"workspace_root"`
	}
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatalf("cargo metadata: %v", err)
	}
	a := cargoAnswer{Root: md.WorkspaceRoot, Deps: metadataDirect(t, out)}
	for _, p := range md.Packages {
		if slices.Contains(md.WorkspaceMembers, p.ID) {
			a.Members = append(a.Members, protocol.WorkspaceMember{Name: p.Name, Version: p.Version, Dir: filepath.Dir(p.ManifestPath)})
		}
	}
	sortMembers(a.Members)
	if a.Deps == nil {
		a.Deps = []protocol.PackageID{}
	}
	return a
}

func sortMembers(ms []protocol.WorkspaceMember) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Dir < ms[j].Dir })
}

// ourAnswer asks a fresh PM opened on dir for list_deps and workspace.
func ourAnswer(t *testing.T, dir string) (cargoAnswer, error) {
	t.Helper()
	p := newPM(t, dir, nil)
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		return cargoAnswer{}, err
	}
	ws, err := p.Workspace(context.Background())
	if err != nil {
		return cargoAnswer{}, fmt.Errorf("workspace failed after list_deps succeeded: %w", err)
	}
	members := slices.Clone(ws.Members)
	sortMembers(members)
	return cargoAnswer{Root: ws.Root, Members: members, Deps: deps}, nil
}

func compareAnswers(t *testing.T, what string, got, want cargoAnswer) {
	t.Helper()
	if got.Root != want.Root {
		t.Errorf("%s: workspace root %s, cargo metadata says %s", what, got.Root, want.Root)
	}
	if !slices.Equal(got.Members, want.Members) {
		t.Errorf("%s: members\n got  %v\n want %v (cargo metadata)", what, got.Members, want.Members)
	}
	if !slices.Equal(got.Deps, want.Deps) {
		t.Errorf("%s: list_deps\n got  %v\n want %v (cargo metadata)", what, got.Deps, want.Deps)
	}
}

// TestDebianSourcesMatchCargoMetadata is the differential suite against
// cargo itself: workspaces generated here resolve against Debian's packaged
// crate sources (a cargo directory source), and list_deps and workspace,
// opened from every start directory of each case and with the lockfile
// rewritten in every format version, must answer what
// `cargo metadata --all-features` does, failing exactly where cargo fails.
func TestDebianSourcesMatchCargoMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo on generated workspaces")
	}
	env := debianEnv(t)
	repos := makeGitRepos(t, t.TempDir())
	// The cases run in parallel with --offline against one CARGO_HOME:
	// fetch the git repositories into it once, first.
	scratch := t.TempDir()
	cargotest.WriteFiles(t, scratch, substitute(debianCases["git"].files, repos))
	env.Run(t, filepath.Join(scratch, "ws"), "generate-lockfile")
	names := make([]string, 0, len(debianCases))
	for n := range debianCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		c := debianCases[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cargotest.WriteFiles(t, base, substitute(c.files, repos))
			answers := map[string]cargoAnswer{} // by workspace root
			var primary string
			var primaryStarts []string
			for i, s := range c.starts {
				start := filepath.Join(base, filepath.FromSlash(s))
				// locate-project loads the workspace as every command does
				// (refusing the same layouts) without resolving it; the full
				// resolve runs once per workspace root.
				loc, cargoErr := env.Try(start, "locate-project", "--workspace", "--message-format", "plain", "--offline")
				if cargoErr != nil {
					got, ourErr := ourAnswer(t, start)
					if ourErr == nil {
						t.Errorf("from %s: cargo refuses (%v) but we answer %+v", s, cargoErr, got)
					} else {
						t.Logf("from %s: both refuse; ours: %v", s, ourErr)
					}
					continue
				}
				root := filepath.Dir(strings.TrimSpace(string(loc)))
				want, ok := answers[root]
				if !ok {
					// Loading every member, cargo may still refuse.
					out, err := env.Try(root, "metadata", "--offline", "--all-features", "--format-version", "1")
					if err != nil {
						want.Root = "refused: " + err.Error()
					} else {
						want = parseMetadata(t, out)
					}
					answers[root] = want
				}
				got, ourErr := ourAnswer(t, start) // after cargo wrote the lockfile
				if refusal, ok := strings.CutPrefix(want.Root, "refused: "); ok {
					if ourErr == nil {
						t.Errorf("from %s: cargo refuses (%s) but we answer %+v", s, refusal, got)
					} else {
						t.Logf("from %s: both refuse; ours: %v", s, ourErr)
					}
					continue
				}
				if ourErr != nil {
					t.Errorf("from %s: we fail (%v) where cargo answers", s, ourErr)
					continue
				}
				compareAnswers(t, "from "+s, got, want)
				if i == 0 {
					primary = root
				}
				if root == primary {
					primaryStarts = append(primaryStarts, start)
				}
			}
			if primary != "" {
				checkLockVersions(t, env, primary, primaryStarts, answers[primary])
			}
		})
	}
}

// substitute replaces the git placeholders in every file body.
func substitute(files, repl map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for p, body := range files {
		for k, v := range repl {
			body = strings.ReplaceAll(body, k, v)
		}
		out[p] = body
	}
	return out
}

// checkLockVersions rewrites the lockfile cargo wrote at root in every
// format version, has cargo read each back (its answer must not change),
// and compares our answers from each start directory on the rewritten file
// with want, cargo's answer on the lockfile as it wrote it.
func checkLockVersions(t *testing.T, env *cargotest.Env, root string, starts []string, want cargoAnswer) {
	t.Helper()
	lockPath := filepath.Join(root, "Cargo.lock")
	orig, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatalf("cargo left no lockfile at %s: %v", root, err)
	}
	lf, err := cargolock.Parse(lockPath, orig)
	if err != nil {
		t.Fatal(err)
	}
	hasGit := slices.ContainsFunc(lf.Packages, func(p cargolock.Package) bool { return strings.HasPrefix(p.Source, "git+") })
	for v := 1; v <= cargolock.MaxVersion; v++ {
		data := encodeLock(t, lf, v)
		back, err := cargolock.Parse(lockPath, data)
		if err != nil {
			t.Fatalf("v%d rewrite does not parse: %v\n%s", v, err, data)
		}
		if back.Version != v {
			t.Fatalf("v%d rewrite reads as version %d", v, back.Version)
		}
		if err := os.WriteFile(lockPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Without a git source, versions 2 to 4 differ only in the version
		// key: cargo re-reads versions 1 and 4 there (and every version
		// where git sources make the encodings differ), keeping the suite's
		// cargo runs few.
		if v == 1 || v == cargolock.MaxVersion || hasGit {
			cargoSays := parseMetadata(t, env.Run(t, root, "metadata", "--offline", "--all-features", "--format-version", "1"))
			if !slices.Equal(cargoSays.Deps, want.Deps) {
				t.Fatalf("%s, v%d: cargo reads the rewritten lockfile differently:\n got  %v\n want %v\n%s", root, v, cargoSays.Deps, want.Deps, data)
			}
		}
		rewritten, err := os.ReadFile(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		// Ours on the file as written by hand, and on what cargo left (it
		// may upgrade an old version).
		variants := [][]byte{data}
		if string(rewritten) != string(data) {
			variants = append(variants, rewritten)
		}
		for i, body := range variants {
			if err := os.WriteFile(lockPath, body, 0o644); err != nil {
				t.Fatal(err)
			}
			label := fmt.Sprintf("v%d lockfile", v)
			if i == 1 {
				label += " after cargo re-wrote it"
			}
			for _, start := range starts {
				got, err := ourAnswer(t, start)
				if err != nil {
					t.Errorf("%s, from %s: %v", label, start, err)
					continue
				}
				compareAnswers(t, label+", from "+start, got, want)
			}
		}
	}
	if err := os.WriteFile(lockPath, orig, 0o644); err != nil {
		t.Fatal(err)
	}
}

// encodeLock writes lf in lockfile format version v as cargo encodes it:
// version 1 spells every dependency in full and keeps checksums in
// [metadata]; versions 2 to 4 write the shortest unambiguous reference and
// inline checksums, and 3 and 4 carry a version key. References never
// carry a git source's "#commit" part.
func encodeLock(t *testing.T, lf *cargolock.Lockfile, v int) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n")
	if v >= 3 {
		fmt.Fprintf(&b, "version = %d\n", v)
	}
	meta := map[string]string{}
	for _, p := range lf.Packages {
		fmt.Fprintf(&b, "\n[[package]]\nname = %q\nversion = %q\n", p.Name, p.Version)
		if p.Source != "" {
			fmt.Fprintf(&b, "source = %q\n", p.Source)
		}
		if p.Checksum != "" {
			if v == 1 {
				meta[fmt.Sprintf("checksum %s %s (%s)", p.Name, p.Version, p.Source)] = p.Checksum
			} else {
				fmt.Fprintf(&b, "checksum = %q\n", p.Checksum)
			}
		}
		if len(p.Dependencies) == 0 {
			continue
		}
		b.WriteString("dependencies = [\n")
		for _, r := range p.Dependencies {
			dp, err := lf.Resolve(r)
			if err != nil {
				t.Fatalf("cargo's own lockfile: %v", err)
			}
			src, _, _ := strings.Cut(dp.Source, "#")
			ref := cargolock.Ref{Name: dp.Name}
			switch {
			case v == 1:
				ref.Version, ref.Source = dp.Version, src
			case len(lf.ByName(dp.Name)) == 1:
			default:
				ref.Version = dp.Version
				n := 0
				for _, o := range lf.ByName(dp.Name) {
					if o.Version == dp.Version {
						n++
					}
				}
				if n > 1 {
					ref.Source = src
				}
			}
			fmt.Fprintf(&b, " %q,\n", ref.String())
		}
		b.WriteString("]\n")
	}
	if v == 1 && len(meta) > 0 {
		b.WriteString("\n[metadata]\n")
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%q = %q\n", k, meta[k])
		}
	}
	return []byte(b.String())
}
