package cargopm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
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

// debianCase is one generated layout, read from testdata/debian/cases: its
// files (slash paths under a temporary directory; GIT:<repo> and
// REV:<repo> are replaced by the URL and head commit of a local git
// repository the test makes), and the directories the workspace is opened
// from (the archive comment's "starts:" line).
type debianCase struct {
	files  map[string]string
	starts []string
}

// debianCases reads the generated shapes, by name; the archive comments
// say what each covers.
func debianCases(t *testing.T) map[string]debianCase {
	t.Helper()
	cases := map[string]debianCase{}
	for name, ar := range readArchives(t, filepath.Join("testdata", "debian", "cases")) {
		var starts []string
		for _, line := range strings.Split(string(ar.Comment), "\n") {
			if rest, ok := strings.CutPrefix(line, "starts:"); ok {
				starts = strings.Fields(rest)
			}
		}
		if len(starts) == 0 {
			t.Fatalf("testdata/debian/cases/%s.txtar: no \"starts:\" line naming the directories to open", name)
		}
		cases[name] = debianCase{files: archiveFiles(ar), starts: starts}
	}
	return cases
}

// debianGitRepos reads the local git repositories the cases depend on
// (testdata/debian/repos), by name: each holds the files given, committed
// on "main"; a "dev" branch adds one more commit and a tag "v0.3.0" marks
// the first.
func debianGitRepos(t *testing.T) map[string]map[string]string {
	t.Helper()
	repos := map[string]map[string]string{}
	for name, ar := range readArchives(t, filepath.Join("testdata", "debian", "repos")) {
		repos[name] = archiveFiles(ar)
	}
	return repos
}

// readArchives parses every .txtar file of dir, by name without the
// extension, failing when there is none.
func readArchives(t *testing.T, dir string) map[string]*txtar.Archive {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no txtar archives in %s: %v", dir, err)
	}
	out := make(map[string]*txtar.Archive, len(paths))
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".txtar")] = ar
	}
	return out
}

// archiveFiles returns an archive's files as path → content.
func archiveFiles(ar *txtar.Archive) map[string]string {
	files := make(map[string]string, len(ar.Files))
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	return files
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
	for name, files := range debianGitRepos(t) {
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

// TestOracleDebianSourcesMatchCargoMetadata is the differential suite against
// cargo itself: workspaces generated here resolve against Debian's packaged
// crate sources (a cargo directory source), and list_deps and workspace,
// opened from every start directory of each case and with the lockfile
// rewritten in every format version, must answer what
// `cargo metadata --all-features` does, failing exactly where cargo fails.
func TestOracleDebianSourcesMatchCargoMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo on generated workspaces")
	}
	env := debianEnv(t)
	repos := makeGitRepos(t, t.TempDir())
	// The cases run in parallel with --offline against one CARGO_HOME:
	// fetch the git repositories into it once, first.
	cases := debianCases(t)
	scratch := t.TempDir()
	cargotest.WriteFiles(t, scratch, substitute(cases["git"].files, repos))
	env.Run(t, filepath.Join(scratch, "ws"), "generate-lockfile")
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := cases[name]
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

// TestOracleDebianPathDepBumpedAfterLock: a path dependency outside the
// workspace bumps its version after Cargo.lock was written, and no cargo
// command has run since. cargo reads the path crate's manifest and
// answers its current version; so must list_deps, asked before cargo runs
// again (Cargo.lock still records the old version).
func TestOracleDebianPathDepBumpedAfterLock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo")
	}
	env := debianEnv(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(name, version, deps string) string {
		return "[package]\nname = \"" + name + "\"\nversion = \"" + version + "\"\nedition = \"2021\"\n\n[dependencies]\n" + deps
	}
	cargotest.WriteFiles(t, base, map[string]string{
		"ws/Cargo.toml":      pkg("app", "0.1.0", "outside = { path = \"../outside\" }\nfnv = \"1\"\n"),
		"ws/src/lib.rs":      "",
		"outside/Cargo.toml": pkg("outside", "1.0.0", ""),
		"outside/src/lib.rs": "",
	})
	ws := filepath.Join(base, "ws")
	env.Run(t, ws, "generate-lockfile", "--offline")
	cargotest.WriteFiles(t, base, map[string]string{"outside/Cargo.toml": pkg("outside", "1.1.0", "")})
	got, ourErr := ourAnswer(t, ws) // before cargo runs again
	if ourErr != nil {
		t.Fatal(ourErr)
	}
	want := parseMetadata(t, env.Run(t, ws, "metadata", "--format-version", "1", "--offline", "--all-features"))
	compareAnswers(t, "after bumping ../outside to 1.1.0", got, want)
}
