package npmpm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// diskReader is how active_plugins looks into node_modules directories:
// the operating system, or a counting reader in tests.
type diskReader interface {
	// ReadDir lists a directory.
	ReadDir(dir string) ([]fs.DirEntry, error)
	// ReadFile reads a file (a package.json).
	ReadFile(file string) ([]byte, error)
}

// osDisk reads the real filesystem.
type osDisk struct{}

func (osDisk) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }

// ReadFile reads a package's file as a package file is read everywhere:
// a regular file inside its directory, at most pkgfile.MaxManifest bytes.
func (osDisk) ReadFile(file string) ([]byte, error) {
	return pkgfile.ReadFile(filepath.Dir(file), filepath.Base(file), pkgfile.MaxManifest)
}

// disk returns the reader active_plugins uses.
func (p *PM) disk() diskReader {
	if p.diskReader != nil {
		return p.diskReader
	}
	return osDisk{}
}

// installIndex records which node_modules directories hold which of the
// wanted packages, so that each dependency's installed copies are found
// without probing every directory for every dependency.
type installIndex struct {
	parents []string               // directories whose node_modules are searched, in order
	where   map[string][]installed // package name → where it is installed, in search order
	realNM  map[int]string         // parent index → its node_modules with links resolved
	// member marks the parents that are workspace members; workspace is
	// the index of the workspace itself (-1 if absent).
	member    []bool
	workspace int
	// recorded marks the parents whose node_modules hold an installer
	// record (see installrecord.go).
	recorded []bool
}

// parentDirs is what installedParents returns: the directories, in search
// order, and which of them are workspace members.
type parentDirs struct {
	dirs   []string
	member []bool
}

// installed is one node_modules entry of a wanted package.
type installed struct {
	parent int  // index into parents
	link   bool // the entry (or its scope directory) is a symbolic link
}

// installedParents returns the directories whose node_modules hold
// installed packages, in the order they are searched: every workspace
// member (root "workspaces" globs and pnpm-workspace.yaml), then the
// workspace and each of its parents up to the filesystem root, as Node's
// resolution climbs. Each directory appears once.
func (p *PM) installedParents(rec *depcache.Recorder) parentDirs {
	var out parentDirs
	seen := map[string]bool{}
	add := func(d string, member bool) {
		if !seen[d] {
			seen[d] = true
			out.dirs = append(out.dirs, d)
			out.member = append(out.member, member)
		}
	}
	var patterns []string
	rec.Observe(filepath.Join(p.workspace, "package.json"))
	if pkg, err := packagejson.Read(filepath.Join(p.workspace, "package.json")); err == nil {
		patterns = pkg.Workspaces
	}
	rec.Observe(filepath.Join(p.workspace, "pnpm-workspace.yaml"))
	if pw, err := pkgfile.ReadUserFile(filepath.Join(p.workspace, "pnpm-workspace.yaml"), pkgfile.MaxManifest); err == nil {
		patterns = append(patterns, pnpmWorkspacePatterns(pw)...)
	}
	if len(patterns) > 0 {
		ex := packagejson.ExpandWorkspaces(p.workspace, patterns)
		// Members come and go with the listings the globs read and with
		// the package.json of each match.
		for _, d := range ex.Listed {
			rec.ObserveDir(d)
		}
		// A literal path segment is not listed but checked: record each
		// directory down to the first wildcard, present or not.
		for _, pat := range patterns {
			dir := p.workspace
			for _, seg := range strings.Split(strings.TrimPrefix(filepath.ToSlash(pat), "!"), "/") {
				if seg == "" || seg == "." {
					continue
				}
				if seg == ".." || strings.ContainsAny(seg, "*?[\\") {
					break
				}
				dir = filepath.Join(dir, seg)
				rec.ObserveDir(dir)
			}
		}
		for _, d := range ex.Matched {
			rec.Observe(filepath.Join(p.workspace, filepath.FromSlash(d), "package.json"))
		}
		for _, d := range ex.Dirs {
			if d != "" {
				add(filepath.Join(p.workspace, filepath.FromSlash(d)), true)
			}
		}
	}
	for d := p.workspace; ; {
		add(d, false)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return out
}

// indexInstalled lists each parent's node_modules once (and the scope
// directories holding a wanted scoped name) and records where the wanted
// names are. It costs one directory listing per parent plus one per
// relevant scope, whatever the number of wanted names. The installer
// record a node_modules holds, if any, is recorded in rec.
func (p *PM) indexInstalled(rec *depcache.Recorder, pd parentDirs, want map[string]bool) *installIndex {
	parents := pd.dirs
	idx := &installIndex{parents: parents, where: map[string][]installed{}, realNM: map[int]string{},
		member: pd.member, workspace: slices.Index(parents, p.workspace), recorded: make([]bool, len(parents))}
	if len(want) == 0 {
		return idx
	}
	scopes := map[string]bool{}
	for n := range want {
		if s, _, ok := strings.Cut(n, "/"); ok && strings.HasPrefix(s, "@") {
			scopes[s] = true
		}
	}
	disk := p.disk()
	for i, d := range parents {
		nm := filepath.Join(d, "node_modules")
		rec.ObserveDir(nm)
		ents, err := disk.ReadDir(nm)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if isInstallerRecord(name) && e.Type().IsRegular() {
				rec.Observe(filepath.Join(nm, name))
				idx.recorded[i] = true
				continue
			}
			link := e.Type()&fs.ModeSymlink != 0
			if scopes[name] {
				rec.ObserveDir(filepath.Join(nm, name))
				subs, err := disk.ReadDir(filepath.Join(nm, name))
				if err != nil {
					continue
				}
				for _, s := range subs {
					if full := name + "/" + s.Name(); want[full] {
						idx.where[full] = append(idx.where[full], installed{i, link || s.Type()&fs.ModeSymlink != 0})
					}
				}
				continue
			}
			if want[name] {
				idx.where[name] = append(idx.where[name], installed{i, link})
			}
		}
	}
	return idx
}

// installedCopy returns the first copy of name in the index whose version
// passes ok, nearest first.
// A copy that cannot be used is skipped with a diagnostic of the request
// ctx belongs to. Each package.json looked at is recorded in rec, unless
// the copy is content its installer owns (installerOwned): the installer's
// record stands for it, and the candidate says so.
func (p *PM) installedCopy(ctx context.Context, rec *depcache.Recorder, idx *installIndex, name string, ok func(version string) bool) (candidate, bool) {
	disk := p.disk()
	for _, at := range idx.where[name] {
		nm := filepath.Join(idx.parents[at.parent], "node_modules")
		dir := filepath.Join(nm, filepath.FromSlash(name))
		// The root is the real directory. A plain entry lies in its
		// node_modules' real directory, resolved once per node_modules; a
		// linked one (pnpm, workspaces) is resolved itself.
		real := filepath.Join(idx.realNodeModules(at.parent), filepath.FromSlash(name))
		if at.link {
			real = dir
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				real = r
			}
		}
		owned := idx.installerOwned(at, real)
		prec := rec
		if owned {
			prec = nil
		}
		prec.Observe(filepath.Join(dir, "package.json"))
		data, err := disk.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				// This one package is unusable; the others are still offered.
				p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%v; this installed copy of %s is skipped", err, name),
					File: filepath.Join(dir, "package.json"), Package: pkgID(name, "")},
					"skipping a package whose package.json cannot be used", "package", name, "err", err)
			}
			continue
		}
		pkg, err := packagejson.ParseFile(filepath.Join(dir, "package.json"), data)
		if err != nil {
			// ParseFile's error names the file, with the line and column.
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%v; this installed copy of %s is skipped", err, name),
				File: filepath.Join(dir, "package.json"), Package: pkgID(name, "")},
				"skipping a package whose package.json cannot be used", "package", name, "err", err)
			continue
		}
		if !validVersion(pkg.Version) || !ok(pkg.Version) {
			continue
		}
		return candidate{version: pkg.Version, root: real, pkg: pkg, installerOwned: owned}, true
	}
	return candidate{}, false
}
