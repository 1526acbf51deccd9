// Package release prepares this repository's modules for a release: the
// go.mod and go.sum each module is tagged with, where every sibling module
// it imports is a versioned requirement and nothing is replaced, so that
// `go install <module>/cmd/<binary>@<version>` works outside the workspace.
//
// During development the modules carry no require on each other (go.work
// ties them). Prepare copies each module's files into a staging directory,
// adds the sibling requirements at the release version and runs `go mod
// tidy` outside the workspace against a file-based module proxy holding the
// staged siblings (package modproxy), so every checksum in go.sum is the one
// the public proxy will serve once the tags are pushed.
//
// The modules' test-only imports form a cycle (the PMs' tests use the
// testscript module, whose test binary embeds every PM), and a go.sum holds
// the hash of each dependency's zip, which includes that dependency's
// go.sum: no fixed point exists for both ends of a cycle. Prepare orders the
// modules so that every non-test import points backwards and leaves out of
// go.sum only the zip hashes of later modules, which only tests need; the
// go command fetches and verifies them on demand (-mod=mod, or `go mod
// download`). RELEASING.md at the repository root explains the procedure.
package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/symposium-dev/symposium-pm/sdk/internal/modproxy"
)

// RepoPath is the common prefix of this repository's module paths.
const RepoPath = "github.com/symposium-dev/symposium-pm"

// maxPasses bounds the tidy passes Prepare makes before the staged go.mod
// files stop changing.
const maxPasses = 4

// Module is one module of the workspace.
type Module struct {
	// Dir is the module's directory relative to the repository root, with
	// forward slashes ("pm-cargo").
	Dir string
	// Path is the module path.
	Path string
	// Binaries are the names of the commands under cmd/ (cmd/<name>/main.go).
	Binaries []string
	// Imports are the sibling module paths that the module's packages import,
	// directly or not; TestImports those that only its tests need.
	Imports, TestImports []string
}

// Tag is the Git tag of the module at version, in the nested-module scheme
// the go command expects: the module's directory, a slash, the version.
func (m Module) Tag(version string) string { return m.Dir + "/" + version }

// Commands returns the import paths of the module's binaries.
func (m Module) Commands() []string {
	var out []string
	for _, b := range m.Binaries {
		out = append(out, m.Path+"/cmd/"+b)
	}
	return out
}

// Options configures Prepare.
type Options struct {
	// Root is the repository root (the directory holding go.work).
	Root string
	// Version is the release version, a canonical semantic version "vX.Y.Z"
	// (pre-releases allowed) below v2.
	Version string
	// Stage is the directory the released modules are written to, one
	// subdirectory per module; it must not exist or be empty.
	Stage string
	// Env is the environment of the go commands run (default os.Environ()).
	// Prepare overrides GOWORK, GOFLAGS, GOPROXY, GONOSUMDB, GOMODCACHE and
	// GOTOOLCHAIN in it.
	Env []string
	// ModCache is the module cache the go commands use (default: a new
	// temporary one, removed at the end). Prepare removes this repository's
	// modules from it before each go command, as their content changes
	// between commands; every other module in it is reused.
	ModCache string
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// Plan is the result of Prepare.
type Plan struct {
	// Version is the release version.
	Version string
	// Stage is the directory holding the released modules.
	Stage string
	// Modules are the modules in release order: every module's non-test
	// sibling imports come before it.
	Modules []Module
}

// Publish writes the staged modules into the file-based module proxy
// directory dir, as the public proxy will serve them once tagged.
func (p *Plan) Publish(dir string) error {
	var mods []modproxy.Module
	for _, m := range p.Modules {
		mods = append(mods, modproxy.Module{Path: m.Path, Version: p.Version, Dir: filepath.Join(p.Stage, filepath.FromSlash(m.Dir))})
	}
	return modproxy.Write(dir, mods...)
}

// CheckVersion reports whether v can be released: canonical semantic
// version, major version 0 or 1 (v2 and later need a /vN module path).
func CheckVersion(v string) error {
	if semver.IsValid(v) && semver.Build(v) != "" {
		return fmt.Errorf("version %q has build metadata, which Go module versions cannot carry", v)
	}
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.1.0", v)
	}
	if m := semver.Major(v); m != "v0" && m != "v1" {
		return fmt.Errorf("version %q: major version %s needs module paths ending in /%s", v, m, m)
	}
	return nil
}

// Prepare writes the released form of every workspace module into
// opts.Stage and returns the plan. It never modifies opts.Root.
func Prepare(ctx context.Context, opts Options) (*Plan, error) {
	if err := CheckVersion(opts.Version); err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	mods, err := Modules(ctx, opts.Root, env)
	if err != nil {
		return nil, err
	}
	if mods, err = releaseOrder(mods); err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(opts.Stage); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("staging directory %s is not empty", opts.Stage)
	}
	plan := &Plan{Version: opts.Version, Stage: opts.Stage, Modules: mods}
	for _, m := range mods {
		dst := filepath.Join(opts.Stage, filepath.FromSlash(m.Dir))
		if err := copyFiles(ctx, opts.Root, m.Dir, dst); err != nil {
			return nil, fmt.Errorf("staging %s: %w", m.Dir, err)
		}
		if err := addRequires(filepath.Join(dst, "go.mod"), append(slices.Clone(m.Imports), m.TestImports...), opts.Version); err != nil {
			return nil, fmt.Errorf("staging %s: %w", m.Dir, err)
		}
	}

	tmp, err := os.MkdirTemp("", "symposium-release-")
	if err != nil {
		return nil, err
	}
	defer removeAll(tmp)
	proxy, modcache := filepath.Join(tmp, "proxy"), opts.ModCache
	if modcache == "" {
		modcache = filepath.Join(tmp, "modcache")
	}
	if err := plan.Publish(proxy); err != nil {
		return nil, err
	}
	goenv, err := GoEnv(ctx, env, proxy, modcache)
	if err != nil {
		return nil, err
	}

	// Tidy every module in release order, publishing each result before the
	// next module resolves it, until a whole pass changes no go.mod: then
	// every go.mod checksum is final, and so is every zip checksum of an
	// earlier module. Zip checksums of later modules (test-only imports)
	// are dropped; see the package documentation.
	var siblings []string
	for _, m := range mods {
		siblings = append(siblings, m.Path)
	}
	for pass := 1; ; pass++ {
		if pass > maxPasses {
			return nil, fmt.Errorf("go.mod files still change after %d tidy passes", maxPasses)
		}
		changed := false
		for i, m := range mods {
			dir := filepath.Join(opts.Stage, filepath.FromSlash(m.Dir))
			before, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				return nil, err
			}
			// Checksums of siblings from an earlier pass may be stale: tidy
			// records them afresh from the proxy.
			if err := dropSums(filepath.Join(dir, "go.sum"), siblings, ""); err != nil {
				return nil, err
			}
			if err := EvictSiblings(modcache); err != nil {
				return nil, err
			}
			start := time.Now()
			fmt.Fprintf(logw, "pass %d: go mod tidy in %s\n", pass, m.Dir)
			if out, err := runGo(ctx, dir, goenv, "mod", "tidy"); err != nil {
				return nil, fmt.Errorf("go mod tidy in staged %s: %w\n%s", m.Dir, err, out)
			}
			fmt.Fprintf(logw, "pass %d: %s tidy in %v\n", pass, m.Dir, time.Since(start).Round(time.Millisecond))
			after, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				return nil, err
			}
			if err := checkReleased(after, m, opts.Version); err != nil {
				return nil, fmt.Errorf("staged %s/go.mod after tidy: %w", m.Dir, err)
			}
			var later []string
			for _, l := range mods[i+1:] {
				later = append(later, l.Path)
			}
			if err := dropSums(filepath.Join(dir, "go.sum"), later, opts.Version); err != nil {
				return nil, err
			}
			if err := modproxy.Write(proxy, modproxy.Module{Path: m.Path, Version: opts.Version, Dir: dir}); err != nil {
				return nil, err
			}
			changed = changed || !bytes.Equal(before, after)
		}
		if !changed {
			break
		}
	}
	return plan, nil
}

// GoEnv returns env set up for the go command to resolve this repository's
// modules from the file-based proxy directory proxy, outside any workspace,
// with the private module cache modcache: other modules come from the
// machine's module cache and then from its configured proxy (never
// "direct", which would try to clone the unpublished modules).
// Checksums of this repository's modules are not looked up in the checksum
// database; all others are verified as usual.
func GoEnv(ctx context.Context, env []string, proxy, modcache string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMODCACHE", "GOPROXY")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 2 {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	var fallback []string
	for _, p := range strings.FieldsFunc(f[1], func(r rune) bool { return r == ',' || r == '|' }) {
		if p != "direct" && p != "off" {
			fallback = append(fallback, p)
		}
	}
	list := []string{"file://" + filepath.ToSlash(proxy)}
	if f[0] != "" {
		list = append(list, "file://"+filepath.ToSlash(filepath.Join(f[0], "cache", "download")))
	}
	list = append(list, fallback...)
	// The go command indexes the packages of each module cache directory
	// once, as if its content never changed; this repository's modules are
	// published again under the same version with new content, so the index
	// is off.
	godebug := "goindex=0"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok && v != "" {
			godebug = v + "," + godebug
		}
	}
	for k, v := range map[string]string{
		"GODEBUG":     godebug,
		"GOWORK":      "off",
		"GOFLAGS":     "-mod=mod -modcacherw -trimpath",
		"GOPROXY":     strings.Join(list, ","),
		"GONOSUMDB":   RepoPath,
		"GOMODCACHE":  modcache,
		"GOTOOLCHAIN": "local",
	} {
		env = setenv(env, k, v)
	}
	return env, nil
}

func setenv(env []string, k, v string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(out, k+"="+v)
}

func runGo(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd.CombinedOutput()
}

// Modules lists the modules of the workspace at root (its go.work's use
// directives), with their binaries and the sibling modules they import.
func Modules(ctx context.Context, root string, env []string) ([]Module, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, u := range wf.Use {
		dir := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(u.Path)), "./")
		if strings.Contains(dir, "..") || filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("go.work uses %s, outside the repository", u.Path)
		}
		gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		path := modfile.ModulePath(gomod)
		if path != RepoPath+"/"+dir {
			return nil, fmt.Errorf("%s/go.mod declares module %q, want %s/%s", dir, path, RepoPath, dir)
		}
		m := Module{Dir: dir, Path: path}
		mains, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "cmd", "*", "main.go"))
		for _, p := range mains {
			m.Binaries = append(m.Binaries, filepath.Base(filepath.Dir(p)))
		}
		mods = append(mods, m)
	}
	if err := siblingImports(ctx, root, env, mods); err != nil {
		return nil, err
	}
	return mods, nil
}

// siblingImports fills in the Imports and TestImports of mods from one
// `go list` of every package of the workspace at root: a module's imports
// are the sibling modules reachable from its packages' imports, its test
// imports those reachable only through its packages' tests.
func siblingImports(ctx context.Context, root string, env []string, mods []Module) error {
	args := []string{"list", "-e", "-f", "{{.ImportPath}}|{{with .Module}}{{.Path}}{{end}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}"}
	for _, m := range mods {
		args = append(args, "./"+m.Dir+"/...")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = setenv(setenv(env, "GOWORK", filepath.Join(root, "go.work")), "GOFLAGS", "-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing the workspace's packages: %w\n%s", err, stderr.Bytes())
	}
	type pkg struct {
		module       string
		imports, all []string
	}
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			return fmt.Errorf("go list printed %q", line)
		}
		p := pkg{module: f[1], imports: strings.Fields(f[2])}
		p.all = append(slices.Clone(p.imports), strings.Fields(f[3])...)
		pkgs[f[0]] = p
	}
	// reach returns the modules of the workspace packages reachable from
	// the roots through imports.
	reach := func(roots []string) map[string]bool {
		seen, mods := map[string]bool{}, map[string]bool{}
		for len(roots) > 0 {
			ip := roots[len(roots)-1]
			roots = roots[:len(roots)-1]
			p, ok := pkgs[ip]
			if !ok || seen[ip] {
				continue
			}
			seen[ip] = true
			mods[p.module] = true
			roots = append(roots, p.imports...)
		}
		return mods
	}
	for i, m := range mods {
		var build, test []string
		for _, p := range pkgs {
			if p.module == m.Path {
				build = append(build, p.imports...)
				test = append(test, p.all...)
			}
		}
		b, t := reach(build), reach(test)
		for _, o := range mods {
			switch {
			case o.Path == m.Path:
			case b[o.Path]:
				mods[i].Imports = append(mods[i].Imports, o.Path)
			case t[o.Path]:
				mods[i].TestImports = append(mods[i].TestImports, o.Path)
			}
		}
	}
	return nil
}

// releaseOrder sorts mods so that every module comes after the modules its
// non-test packages import (ties by directory name); it fails on a cycle.
func releaseOrder(mods []Module) ([]Module, error) {
	mods = slices.Clone(mods)
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Dir, b.Dir) })
	var out []Module
	done := map[string]bool{}
	for len(out) < len(mods) {
		progress := false
		for _, m := range mods {
			if done[m.Path] {
				continue
			}
			ready := true
			for _, p := range m.Imports {
				ready = ready && done[p]
			}
			if ready {
				out = append(out, m)
				done[m.Path] = true
				progress = true
			}
		}
		if !progress {
			var left []string
			for _, m := range mods {
				if !done[m.Path] {
					left = append(left, m.Dir)
				}
			}
			return nil, fmt.Errorf("the non-test imports of modules %s form a cycle", strings.Join(left, ", "))
		}
	}
	return out, nil
}

// copyFiles copies the files of the module directory dir of the repository
// at root into dst: the files Git tracks or would track (untracked files
// that .gitignore does not exclude), as a commit of the working tree holds
// them; without Git, every regular file.
func copyFiles(ctx context.Context, root, dir, dst string) error {
	var files []string
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, strings.TrimPrefix(f, dir+"/"))
			}
		}
	} else {
		src := filepath.Join(root, filepath.FromSlash(dir))
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(src, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	src := filepath.Join(root, filepath.FromSlash(dir))
	for _, f := range files {
		from := filepath.Join(src, filepath.FromSlash(f))
		fi, err := os.Lstat(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked, deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue // the module zip holds regular files only
		}
		to := filepath.Join(dst, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()|0o200); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "go.mod")); err != nil {
		return fmt.Errorf("no go.mod staged: %w", err)
	}
	return nil
}

// addRequires adds a requirement on every module in paths at version to
// the go.mod file at path, refusing replace directives.
func addRequires(path string, paths []string, version string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return err
	}
	if len(f.Replace) > 0 {
		return fmt.Errorf("%s has replace directives (%s => %s ...): a released module must have none", path, f.Replace[0].Old.Path, f.Replace[0].New.Path)
	}
	for _, p := range paths {
		if err := f.AddRequire(p, version); err != nil {
			return err
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// checkReleased reports whether gomod is the released form of m: no
// replace, and every sibling it imports required at version.
func checkReleased(gomod []byte, m Module, version string) error {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return err
	}
	if len(f.Replace) > 0 {
		return fmt.Errorf("replace directive for %s", f.Replace[0].Old.Path)
	}
	have := map[string]string{}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	for _, p := range append(slices.Clone(m.Imports), m.TestImports...) {
		if have[p] != version {
			return fmt.Errorf("requires %s %q, want %s", p, have[p], version)
		}
	}
	return nil
}

// dropSums removes from the go.sum file at path the zip checksums of the
// modules in paths at version (modules whose content is not final yet), or
// with version "", every checksum of those modules.
func dropSums(path string, paths []string, version string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && (version == "" || f[1] == version) && slices.Contains(paths, f[0]) {
			continue
		}
		out = append(out, l)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "")), 0o644)
}

// EvictSiblings removes this repository's modules from the module cache
// modcache, so that the next go command reads them from the proxy again.
func EvictSiblings(modcache string) error {
	for _, d := range []string{
		filepath.Join(modcache, filepath.FromSlash(RepoPath)),
		filepath.Join(modcache, "cache", "download", filepath.FromSlash(RepoPath)),
	} {
		if err := removeAll(d); err != nil {
			return err
		}
	}
	return nil
}

// removeAll removes dir like os.RemoveAll, first making read-only
// directories (a module cache's) writable.
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
