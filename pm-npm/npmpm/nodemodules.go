package npmpm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/pm-npm/registry"
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
	where   map[string][]installed // package name → where it may be installed, in search order
	realNM  map[int]string         // parent index → its node_modules with links resolved
	// member marks the parents that are workspace members; workspace is
	// the index of the project root (-1 if absent).
	member    []bool
	workspace int
	// recorded marks the parents whose node_modules hold an installer
	// record (see installrecord.go).
	recorded []bool
}

// parentDirs is what installedParents returns: where a project's
// installed packages are looked for.
type parentDirs struct {
	dirs   []string // directories whose node_modules are searched, in order
	member []bool   // which of dirs are workspace members
	root   string   // the project root, one of dirs
	// renamed are the node_modules entries the project's package.json
	// files declare for a package of another name: an alias's entry
	// ("lefty": "npm:plug@1" installs plug at node_modules/lefty) → its
	// real name; a git or tarball URL dependency's → "", as only the
	// installed package.json names its package.
	renamed map[string]string
}

// entries returns the node_modules entry names a package called name may
// be installed under: its own, then each declared for it (or for a package
// only its package.json names).
func (pd parentDirs) entries(name string) []string {
	out := []string{name}
	for e, real := range pd.renamed {
		if e != name && (real == name || real == "") {
			out = append(out, e)
		}
	}
	slices.Sort(out[1:])
	return out
}

// installed is one node_modules entry that may hold a wanted package.
type installed struct {
	parent int    // index into parents
	entry  string // the entry's name: the package's, or one declared for it
	link   bool   // the entry (or its scope directory) is a symbolic link
}

// installedParents returns where the installed packages of the project
// are looked for, the project being found from the workspace as npm finds
// it (findProject), as list_deps finds it: the workspace members whose
// dependencies list_deps answers with (every member of the root's
// "workspaces" globs and pnpm-workspace.yaml; only the member the
// workspace is in when it is inside one), each directory between such a
// member and the root, as Node's resolution climbs, then the root and each
// of its parents up to the filesystem root. Each directory appears once.
// The aliases and URL dependencies the root's and those members'
// package.json declare are collected in renamed. Every file and directory
// consulted is recorded in rec.
func (p *PM) installedParents(rec *depcache.Recorder) parentDirs {
	proj := findProject(rec, p.workspace)
	root := proj.root
	out := parentDirs{root: root, renamed: map[string]string{}}
	seen := map[string]bool{}
	add := func(d string, member bool) {
		if !seen[d] {
			seen[d] = true
			out.dirs = append(out.dirs, d)
			out.member = append(out.member, member)
		}
	}
	readDeclared := func(pj string) *packagejson.Manifest {
		data, err := rec.ReadFile(pj, pkgfile.MaxManifest)
		if err != nil {
			return nil
		}
		pkg, err := packagejson.Parse(data)
		if err != nil {
			return nil
		}
		out.declare(pkg)
		return pkg
	}
	patterns := projectWorkspaces(rec, root, readDeclared(filepath.Join(root, "package.json")))
	var members []string
	if len(patterns) > 0 {
		ex := packagejson.ExpandWorkspaces(root, patterns)
		// Members come and go with the listings the globs read and with
		// the package.json of each match.
		for _, d := range ex.Listed {
			rec.ObserveDir(d)
		}
		// A literal path segment is not listed but checked: record each
		// directory down to the first wildcard, present or not.
		for _, pat := range patterns {
			dir := root
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
			rec.Observe(filepath.Join(root, filepath.FromSlash(d), "package.json"))
		}
		for _, d := range ex.Dirs {
			if d != "" && inScope(proj, d) {
				members = append(members, d)
				dir := filepath.Join(root, filepath.FromSlash(d))
				add(dir, true)
				readDeclared(filepath.Join(dir, "package.json"))
			}
		}
	}
	// The directories between each member and the root, where list_deps
	// (installedVersion) and Node look too.
	for _, d := range members {
		for up := path.Dir(d); up != "." && up != "/"; up = path.Dir(up) {
			add(filepath.Join(root, filepath.FromSlash(up)), false)
		}
	}
	for d := root; ; {
		add(d, false)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return out
}

// declare records in renamed the entries pkg declares for packages of
// other names. An entry declared for two different packages is read as
// one whose package only its package.json names.
func (pd parentDirs) declare(pkg *packagejson.Manifest) {
	for _, d := range pkg.Deps {
		real := d.Name
		switch spec := packagejson.ParseSpec(d.Name, d.Spec); spec.Kind {
		case packagejson.Alias:
			real = spec.Name
		case packagejson.URL, packagejson.Git:
			real = ""
		}
		if real == d.Name {
			continue
		}
		if prev, ok := pd.renamed[d.Name]; ok && prev != real {
			real = ""
		}
		pd.renamed[d.Name] = real
	}
}

// indexInstalled lists each parent's node_modules once (and the scope
// directories holding a wanted scoped name) and records where the wanted
// names may be: in an entry of their name, or in one the project declares
// for them (pd.renamed). It costs one directory listing per parent plus
// one per relevant scope, whatever the number of wanted names, and one
// package.json read per installed URL or git dependency, whose entry does
// not say what it holds. The installer record a node_modules holds, if
// any, is recorded in rec.
func (p *PM) indexInstalled(rec *depcache.Recorder, pd parentDirs, want map[string]bool) *installIndex {
	parents := pd.dirs
	idx := &installIndex{parents: parents, where: map[string][]installed{}, realNM: map[int]string{},
		member: pd.member, workspace: slices.Index(parents, pd.root), recorded: make([]bool, len(parents))}
	if len(want) == 0 {
		return idx
	}
	// wanted reports, for a node_modules entry, the wanted names it may
	// hold (nil for none), reading its package.json when only that says.
	disk := p.disk()
	wanted := func(nm, entry string) []string {
		var out []string
		if want[entry] {
			out = append(out, entry)
		}
		real, ok := pd.renamed[entry]
		if ok && real == "" {
			f := filepath.Join(nm, filepath.FromSlash(entry), "package.json")
			rec.Observe(f)
			if data, err := disk.ReadFile(f); err == nil {
				if m, err := packagejson.Parse(data); err == nil {
					real = m.Name
				}
			}
		}
		if ok && real != entry && want[real] {
			out = append(out, real)
		}
		return out
	}
	scopes := map[string]bool{}
	for n := range want {
		if s, _, ok := strings.Cut(n, "/"); ok && strings.HasPrefix(s, "@") {
			scopes[s] = true
		}
	}
	for e, real := range pd.renamed {
		if s, _, ok := strings.Cut(e, "/"); ok && strings.HasPrefix(s, "@") && (real == "" || want[real]) {
			scopes[s] = true
		}
	}
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
					full := name + "/" + s.Name()
					for _, w := range wanted(nm, full) {
						idx.where[w] = append(idx.where[w], installed{i, full, link || s.Type()&fs.ModeSymlink != 0})
					}
				}
				continue
			}
			for _, w := range wanted(nm, name) {
				idx.where[w] = append(idx.where[w], installed{i, name, link})
			}
		}
	}
	return idx
}

// holds reports whether a package.json naming pkgName, found in the
// node_modules entry entry, is the package name: an entry of another name
// (an alias's, a URL dependency's) holds name only when its package.json
// says so; one of the same name unless its package.json names another.
func holds(entry, pkgName, name string) bool {
	return pkgName == name || (entry == name && pkgName == "")
}

// installedCopy returns the first copy of name in the index whose version
// passes ok, nearest first: in an entry of its name, or in one declared
// for it whose package.json names it.
// A copy that cannot be used is skipped with a diagnostic of the request
// ctx belongs to. Each package.json looked at is recorded in rec, unless
// the copy is content its installer owns (installerOwned): the installer's
// record stands for it, and the candidate says so.
func (p *PM) installedCopy(ctx context.Context, rec *depcache.Recorder, idx *installIndex, name string, ok func(version string) bool) (candidate, bool) {
	disk := p.disk()
	for _, at := range idx.where[name] {
		nm := filepath.Join(idx.parents[at.parent], "node_modules")
		dir := filepath.Join(nm, filepath.FromSlash(at.entry))
		// The root is the real directory. A plain entry lies in its
		// node_modules' real directory, resolved once per node_modules; a
		// linked one (pnpm, workspaces) is resolved itself.
		real := filepath.Join(idx.realNodeModules(at.parent), filepath.FromSlash(at.entry))
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
		if !holds(at.entry, pkg.Name, name) || !ok(pkg.Version) {
			continue
		}
		version, valid := registry.CanonicalVersion(pkg.Version)
		if !valid {
			continue
		}
		return candidate{version: version, root: real, pkg: pkg, installerOwned: owned}, true
	}
	return candidate{}, false
}
