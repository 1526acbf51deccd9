package cargopm

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// crateToml is the manifest of a package with the given dependency table
// body.
func crateToml(name, version, deps string) string {
	return "[package]\nname = \"" + name + "\"\nversion = \"" + version + "\"\nedition = \"2021\"\n\n[dependencies]\n" + deps
}

// registrySource is the source Cargo.lock records for crates.io, and for
// the loopback registry standing in for it.
const registrySource = "registry+https://github.com/rust-lang/crates.io-index"

// lockOf writes a Cargo.lock (version 4) of app 0.1.0 depending on the
// given packages, each "name version" or "name version source", as cargo
// writes it.
func lockOf(pkgs ...string) string {
	var b strings.Builder
	b.WriteString("version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n")
	for _, p := range pkgs {
		f := strings.Fields(p)
		b.WriteString(" \"" + f[0] + "\",\n")
	}
	b.WriteString("]\n")
	for _, p := range pkgs {
		f := strings.Fields(p)
		b.WriteString("\n[[package]]\nname = \"" + f[0] + "\"\nversion = \"" + f[1] + "\"\n")
		if len(f) > 2 {
			b.WriteString("source = \"" + f[2] + "\"\n")
		}
	}
	return b.String()
}

// redirectCase is a workspace whose dependency a [patch] or [replace]
// entry leads to a path crate: files are written, Cargo.lock is written
// (by cargo in the oracle test; as lock in the other), then after.
type redirectCase struct {
	name  string
	files map[string]string // under a temporary directory; the workspace is ws/
	lock  string            // what cargo writes from files
	after map[string]string // written once Cargo.lock is
	want  []string          // list_deps, "name@version"
	paths map[string]string // "name@version" -> directory (relative) among the snapshot's Paths
}

// gitPlaceholder stands for the URL of the git repository gitRepo makes.
const gitPlaceholder = "GITURL"

var redirectCases = []redirectCase{
	{
		name: "a patch bumped within the requirement after Cargo.lock",
		files: map[string]string{
			"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.crates-io]\nheck = { path = \"../heck-fork\" }\n",
			"heck-fork/Cargo.toml": crateToml("heck", "0.4.1", ""),
		},
		lock:  lockOf("heck 0.4.1"),
		after: map[string]string{"heck-fork/Cargo.toml": crateToml("heck", "0.4.2", "")},
		want:  []string{"heck@0.4.2"},
		paths: map[string]string{"heck@0.4.2": "heck-fork"},
	},
	{
		name: "a patch added at the locked version",
		files: map[string]string{
			"ws/Cargo.toml": crateToml("app", "0.1.0", "heck = \"0.4\"\n"),
		},
		lock: lockOf("heck 0.4.1 " + registrySource),
		after: map[string]string{
			"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.crates-io]\nheck = { path = \"../heck-fork\" }\n",
			"heck-fork/Cargo.toml": crateToml("heck", "0.4.1", ""),
		},
		want:  []string{"heck@0.4.1"},
		paths: map[string]string{"heck@0.4.1": "heck-fork"},
	},
	{
		name: "a patch added at another version than the locked one is unused",
		files: map[string]string{
			"ws/Cargo.toml": crateToml("app", "0.1.0", "heck = \"0.4\"\n"),
		},
		lock: lockOf("heck 0.4.1 " + registrySource),
		after: map[string]string{
			"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.crates-io]\nheck = { path = \"../heck-fork\" }\n",
			"heck-fork/Cargo.toml": crateToml("heck", "0.4.2", ""),
		},
		want:  []string{"heck@0.4.1"},
		paths: map[string]string{},
	},
	{
		name: "a patch of another source does not apply",
		files: map[string]string{
			"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.\"https://example.com/heck\"]\nheck = { path = \"../heck-fork\" }\n",
			"heck-fork/Cargo.toml": crateToml("heck", "0.4.1", ""),
		},
		lock:  lockOf("heck 0.4.1 " + registrySource),
		want:  []string{"heck@0.4.1"},
		paths: map[string]string{},
	},
	{
		name: "a [replace] by a path crate",
		files: map[string]string{
			"ws/Cargo.toml":     crateToml("app", "0.1.0", "either = \"1\"\n") + "\n[replace]\n\"either:1.9.0\" = { path = \"../either\" }\n",
			"either/Cargo.toml": crateToml("either", "1.9.0", ""),
		},
		lock: strings.Replace(lockOf("either 1.9.0 "+registrySource), " \"either\",", " \"either 1.9.0 ("+registrySource+")\",", 1) +
			"replace = \"either 1.9.0\"\n\n[[package]]\nname = \"either\"\nversion = \"1.9.0\"\n",
		want:  []string{"either@1.9.0"},
		paths: map[string]string{"either@1.9.0": "either"},
	},
	{
		name: "a git dependency patched by a path crate bumped after Cargo.lock",
		files: map[string]string{
			"ws/Cargo.toml": crateToml("app", "0.1.0", "gitdep = { git = \""+gitPlaceholder+"\" }\n") +
				"\n[patch.\"" + gitPlaceholder + "\"]\ngitdep = { path = \"../gd\" }\n",
			"gd/Cargo.toml": crateToml("gitdep", "0.7.0", ""),
		},
		lock:  lockOf("gitdep 0.7.0"),
		after: map[string]string{"gd/Cargo.toml": crateToml("gitdep", "0.7.1", "")},
		want:  []string{"gitdep@0.7.1"},
		paths: map[string]string{"gitdep@0.7.1": "gd"},
	},
}

// writeCase writes files under base with every "GITURL" replaced by
// gitURL, and an empty src/lib.rs beside each Cargo.toml.
func writeCase(t *testing.T, base, gitURL string, files map[string]string) {
	t.Helper()
	out := map[string]string{}
	for name, body := range files {
		out[name] = strings.ReplaceAll(body, gitPlaceholder, gitURL)
		if filepath.Base(name) == "Cargo.toml" && strings.Contains(body, "[package]") {
			out[filepath.ToSlash(filepath.Join(filepath.Dir(name), "src", "lib.rs"))] = ""
		}
	}
	cargotest.WriteFiles(t, base, out)
}

// persistBefore has a PM opened on ws persist its list_deps answer in
// cache, once the inputs just written have settled past
// depcache.RacyWindow, and returns it, so that a later change is checked against a
// persisted answer and not merely computed again.
func persistBefore(t *testing.T, ws, cache string) []protocol.PackageID {
	t.Helper()
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	deps, _ := askPM(t, ws, cache)
	if files, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", "*.cache")); len(files) != 1 {
		t.Fatalf("persisted list_deps entries %v, want 1: the cached case would test nothing", files)
	}
	return deps
}

// snapshotPaths asks a PM opened on ws (without a cache directory) for its
// snapshot's Paths, relative to base.
func snapshotPaths(t *testing.T, ws, base string) map[string]string {
	t.Helper()
	s, err := newPM(t, ws, nil).snapshot(context.Background(), layoutPart)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, dir := range s.Paths {
		r, err := filepath.Rel(base, dir)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = filepath.ToSlash(r)
	}
	return out
}

// TestListDepsRedirectedPathCrate: a dependency that a [patch] or
// [replace] entry of the root manifest leads to a path crate is listed as
// cargo metadata lists it (TestOracleRedirectedPathCrate checks the same
// cases against cargo): cargo reads that crate's Cargo.toml every time, so
// a patch bumped since Cargo.lock was written counts, and the crate's
// directory is where active_plugins finds it. A patch cargo leaves unused
// (another version than the locked one, another source) changes nothing.
// The answer persisted is stamped on the patch crate's manifest.
func TestListDepsRedirectedPathCrate(t *testing.T) {
	for _, tc := range redirectCases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			ws, cache := filepath.Join(base, "ws"), t.TempDir()
			const gitURL = "https://example.com/gitdep"
			writeCase(t, base, gitURL, tc.files)
			cargotest.WriteFiles(t, base, map[string]string{"ws/Cargo.lock": tc.lock})
			persistBefore(t, ws, cache) // before the edit
			writeCase(t, base, gitURL, tc.after)
			for name := range tc.after {
				touchLater(t, filepath.Join(base, filepath.FromSlash(name)))
			}
			for _, c := range []string{"", cache} {
				if deps, _ := askPM(t, ws, c); !slices.Equal(deps, ids(tc.want...)) {
					t.Errorf("cache dir %q: list_deps %v, want %v", c, deps, tc.want)
				}
			}
			if got := snapshotPaths(t, ws, base); !maps.Equal(got, tc.paths) {
				t.Errorf("path crates %v, want %v", got, tc.paths)
			}
		})
	}
}

// TestListDepsPatchBumpedBeyondTheRequirement: a patch crate bumped past
// what the dependency accepts is unused, and cargo resolves the dependency
// from its source again, at a version no lockfile records (cargo metadata
// answers the newest one it can reach): list_deps lists it at "*", not at
// the patch crate's old version Cargo.lock recorded.
func TestListDepsPatchBumpedBeyondTheRequirement(t *testing.T) {
	base := t.TempDir()
	writeCase(t, base, "", map[string]string{
		"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.crates-io]\nheck = { path = \"../heck-fork\" }\n",
		"heck-fork/Cargo.toml": crateToml("heck", "0.5.0", ""),
		"ws/Cargo.lock":        lockOf("heck 0.4.1"),
	})
	ws := filepath.Join(base, "ws")
	if deps, _ := askPM(t, ws, ""); !slices.Equal(deps, ids("heck@*")) {
		t.Errorf("list_deps %v, want heck@*", deps)
	}
	if got := snapshotPaths(t, ws, base); len(got) != 0 {
		t.Errorf("path crates %v, want none: cargo does not build heck from ../heck-fork", got)
	}
}

// TestOracleRedirectedPathCrate gives redirectCases to cargo: Cargo.lock
// written by cargo from the files must be the one the other test writes,
// and, after the edit and before cargo runs again, list_deps must answer
// what `cargo metadata --offline` does.
func TestOracleRedirectedPathCrate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo")
	}
	reg, err := fakeregistry.New(oracleCrates()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	gitURL := gitRepo(t)
	for _, tc := range redirectCases {
		t.Run(tc.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(base, "ws")
			writeCase(t, base, gitURL, tc.files)
			env.Run(t, ws, "generate-lockfile")
			env.Run(t, ws, "fetch")
			compareLocks(t, filepath.Join(ws, "Cargo.lock"), tc.lock)
			writeCase(t, base, gitURL, tc.after)
			got, err := ourAnswer(t, ws) // before cargo runs again
			if err != nil {
				t.Fatal(err)
			}
			paths := snapshotPaths(t, ws, base)
			out := env.Run(t, ws, "metadata", "--format-version", "1", "--offline", "--all-features")
			want := parseMetadata(t, out)
			compareAnswers(t, "after the edit", got, want)
			if !slices.Equal(got.Deps, ids(tc.want...)) {
				t.Errorf("list_deps %v, the table says %v", got.Deps, tc.want)
			}
			if cargoPaths := metadataPathCrates(t, out, base, got.Deps); !maps.Equal(paths, cargoPaths) {
				t.Errorf("path crates %v, cargo metadata builds %v from a path", paths, cargoPaths)
			}
		})
	}
}

// metadataPathCrates returns, of the dependencies deps, those cargo
// metadata's answer out builds from a path crate (a package without a
// source that is no member), as "name@version" -> directory relative to
// base.
func metadataPathCrates(t *testing.T, out []byte, base string, deps []protocol.PackageID) map[string]string {
	t.Helper()
	var md struct {
		Packages []struct {
			ID, Name, Version string
			Source            *string
			ManifestPath      string `json:"manifest_path"`
		}
		WorkspaceMembers []string `json:"workspace_members"`
	}
	if err := json.Unmarshal(out, &md); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, p := range md.Packages {
		id := protocol.PackageID{PM: Name, Name: p.Name, Version: p.Version}
		if p.Source != nil || slices.Contains(md.WorkspaceMembers, p.ID) || !slices.Contains(deps, id) {
			continue
		}
		r, err := filepath.Rel(base, filepath.Dir(p.ManifestPath))
		if err != nil {
			t.Fatal(err)
		}
		paths[p.Name+"@"+p.Version] = filepath.ToSlash(r)
	}
	return paths
}

// compareLocks fails unless the lockfile cargo wrote at path locks the
// same packages (name, version, kind of source) as the table's want.
func compareLocks(t *testing.T, path, want string) {
	t.Helper()
	got, err := cargolock.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cargolock.Parse("want", []byte(want))
	if err != nil {
		t.Fatal(err)
	}
	set := func(lf *cargolock.Lockfile) []string {
		var out []string
		for _, p := range lf.Packages {
			kind, _, _ := strings.Cut(p.Source, "+")
			out = append(out, p.Name+" "+p.Version+" "+kind)
		}
		slices.Sort(out)
		return out
	}
	if g, w := set(got), set(w); !slices.Equal(g, w) {
		data, _ := os.ReadFile(path)
		t.Fatalf("cargo locks %v, the table %v:\n%s", g, w, data)
	}
}

// unloadableCase is a path crate outside the members that cargo cannot
// load once broken: broken is written after Cargo.lock, and list_deps
// still lists dep, with one warning naming the crate's Cargo.toml
// (manifest, relative) and saying cause.
type unloadableCase struct {
	name     string
	files    map[string]string
	lock     string
	broken   map[string]string // "" removes the file
	dep      string
	manifest string
	cause    string
}

// pathDepOut is a workspace whose member app has the path dependency out
// 1.0.0, outside the workspace (read only).
var pathDepOut = map[string]string{"ws/Cargo.toml": crateToml("app", "0.1.0", "out = { path = \"../out\" }\n"), "out/Cargo.toml": crateToml("out", "1.0.0", "")}

var unloadableCases = []unloadableCase{
	{
		name:     "a path dependency's Cargo.toml is missing",
		files:    pathDepOut,
		lock:     lockOf("out 1.0.0"),
		broken:   map[string]string{"out/Cargo.toml": ""},
		dep:      "out@1.0.0",
		manifest: "out/Cargo.toml",
		cause:    "Cargo.toml: file does not exist",
	},
	{
		name:     "a path dependency's Cargo.toml is malformed",
		files:    pathDepOut,
		lock:     lockOf("out 1.0.0"),
		broken:   map[string]string{"out/Cargo.toml": "[package]\nname = \"out\"\nversion = \n"},
		dep:      "out@1.0.0",
		manifest: "out/Cargo.toml",
		cause:    "Cargo.toml:3",
	},
	{
		name:     "a path dependency's Cargo.toml has no [package]",
		files:    pathDepOut,
		lock:     lockOf("out 1.0.0"),
		broken:   map[string]string{"out/Cargo.toml": "[workspace]\n"},
		dep:      "out@1.0.0",
		manifest: "out/Cargo.toml",
		cause:    "has no [package]",
	},
	{
		name:     "a path dependency declares another name",
		files:    pathDepOut,
		lock:     lockOf("out 1.0.0"),
		broken:   map[string]string{"out/Cargo.toml": crateToml("other", "1.0.0", "")},
		dep:      "out@1.0.0",
		manifest: "out/Cargo.toml",
		cause:    "declares the package \"other\", not \"out\"",
	},
	{
		name:     "a path dependency inherits a version without a workspace",
		files:    pathDepOut,
		lock:     lockOf("out 1.0.0"),
		broken:   map[string]string{"out/Cargo.toml": "[package]\nname = \"out\"\nversion.workspace = true\nedition = \"2021\"\n"},
		dep:      "out@1.0.0",
		manifest: "out/Cargo.toml",
		cause:    "version.workspace = true, but the package belongs to no workspace",
	},
	{
		name: "a patch crate is missing",
		files: map[string]string{
			"ws/Cargo.toml":        crateToml("app", "0.1.0", "heck = \"0.4\"\n") + "\n[patch.crates-io]\nheck = { path = \"../heck-fork\" }\n",
			"heck-fork/Cargo.toml": crateToml("heck", "0.4.1", ""),
		},
		lock:     lockOf("heck 0.4.1"),
		broken:   map[string]string{"heck-fork/Cargo.toml": ""},
		dep:      "heck@0.4.1",
		manifest: "heck-fork/Cargo.toml",
		cause:    "[patch.crates-io] entry \"heck\" leads to",
	},
	{
		name: "a [replace] crate bumped past the replaced version",
		files: map[string]string{
			"ws/Cargo.toml":     crateToml("app", "0.1.0", "either = \"1\"\n") + "\n[replace]\n\"either:1.9.0\" = { path = \"../either\" }\n",
			"either/Cargo.toml": crateToml("either", "1.9.0", ""),
		},
		lock: strings.Replace(lockOf("either 1.9.0 "+registrySource), " \"either\",", " \"either 1.9.0 ("+registrySource+")\",", 1) +
			"replace = \"either 1.9.0\"\n\n[[package]]\nname = \"either\"\nversion = \"1.9.0\"\n",
		broken:   map[string]string{"either/Cargo.toml": crateToml("either", "1.9.1", "")},
		dep:      "either@1.9.0",
		manifest: "either/Cargo.toml",
		cause:    "declares version 1.9.1, not 1.9.0",
	},
}

// breakCase writes (or, for "", removes) the files of broken under base.
func breakCase(t *testing.T, base string, broken map[string]string) {
	t.Helper()
	for name, body := range broken {
		p := filepath.Join(base, filepath.FromSlash(name))
		if body == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		cargotest.WriteFiles(t, base, map[string]string{name: body})
		touchLater(t, p)
	}
}

// checkUnloadable asks list_deps on ws (with the cache directory cache)
// and checks that it lists tc.dep and warns once, naming the manifest
// (file and message) and the cause.
func checkUnloadable(t *testing.T, tc unloadableCase, base, cache string) {
	t.Helper()
	ws := filepath.Join(base, "ws")
	deps, err := newPMCache(t, ws, cache).ListDeps(context.Background())
	if err != nil {
		t.Fatalf("list_deps: %v", err)
	}
	if !slices.Equal(deps, ids(tc.dep)) {
		t.Errorf("list_deps %v, want %v", deps, tc.dep)
	}
	s, err := newPMCache(t, ws, cache).snapshot(context.Background(), layoutPart)
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(base, filepath.FromSlash(tc.manifest))
	var found []warning
	for _, w := range s.Warnings {
		if w.File == manifest {
			found = append(found, w)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0].Message, filepath.Dir(manifest)) || !strings.Contains(found[0].Message, tc.cause) {
		t.Errorf("warnings %+v, want one about %s naming its directory and saying %q", s.Warnings, manifest, tc.cause)
	}
}

// newPMCache returns a PM initialized on ws with the cache directory
// cache ("" for none).
func newPMCache(t *testing.T, ws, cache string) *PM {
	t.Helper()
	p := New()
	if err := p.Initialize(context.Background(), &pmserver.Session{ProtocolVersion: 1, Workspace: ws, CacheDir: cache, Env: pmserver.NewEnv(nil),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestListDepsUnloadablePathCrate: a path crate outside the members that
// cargo cannot load (a path dependency or a [patch] or [replace] crate
// missing, malformed, virtual, of another name or version, or inheriting
// a version it cannot) makes cargo fail (TestOracleUnloadablePathCrate).
// list_deps does not fail the whole answer for it, as for a broken member,
// nor pass over it silently: it warns, naming the Cargo.toml and the cause,
// and lists the dependency at the version Cargo.lock records, cached or
// not.
func TestListDepsUnloadablePathCrate(t *testing.T) {
	for _, tc := range unloadableCases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			writeCase(t, base, "", tc.files)
			cargotest.WriteFiles(t, base, map[string]string{"ws/Cargo.lock": tc.lock})
			cache := t.TempDir()
			persistBefore(t, filepath.Join(base, "ws"), cache) // before it broke
			breakCase(t, base, tc.broken)
			checkUnloadable(t, tc, base, "")
			checkUnloadable(t, tc, base, cache)
		})
	}
}

// TestOracleUnloadablePathCrate gives unloadableCases to cargo: with the
// lockfile cargo wrote (the one the other test writes), cargo metadata
// --offline fails once the crate is broken, naming its directory, and
// list_deps warns.
func TestOracleUnloadablePathCrate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo")
	}
	reg, err := fakeregistry.New(oracleCrates()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	for _, tc := range unloadableCases {
		t.Run(tc.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(base, "ws")
			writeCase(t, base, "", tc.files)
			env.Run(t, ws, "generate-lockfile")
			env.Run(t, ws, "fetch")
			compareLocks(t, filepath.Join(ws, "Cargo.lock"), tc.lock)
			breakCase(t, base, tc.broken)
			checkUnloadable(t, tc, base, "")
			_, cerr := env.Try(ws, "metadata", "--format-version", "1", "--offline")
			var f *cargotest.Failure
			if !errors.As(cerr, &f) {
				t.Fatalf("cargo metadata succeeds (%v); the table says cargo cannot load %s", cerr, tc.manifest)
			}
			if dir := filepath.Dir(filepath.Join(base, filepath.FromSlash(tc.manifest))); !strings.Contains(f.Stderr, dir) && !strings.Contains(f.Stderr, "../"+filepath.Base(dir)) {
				t.Errorf("cargo fails without naming %s:\n%s", dir, f.Stderr)
			}
		})
	}
}
