package cargopm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/pm-cargo/registry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// localCrate is a crate source directory on disk.
type localCrate struct {
	Name    string
	Version string
	Dir     string
	// Owned marks a crate cargo wrote and owns (see ownedBy): its files
	// are not recorded one by one, its container's listing is.
	Owned bool
}

type pkgInfo struct {
	name, version string
	manifest      *cargotoml.Manifest
}

// readPackage reads the [package] name and version of the crate in dir,
// whose Cargo.toml must be a regular file in the crate (no link out of it)
// of at most pkgfile.MaxManifest (1 MiB).
func readPackage(dir string) (*pkgInfo, error) {
	data, err := pkgfile.ReadFile(dir, "Cargo.toml", pkgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	m, err := cargotoml.Parse(filepath.Join(dir, "Cargo.toml"), data)
	if err != nil {
		return nil, err
	}
	if m.Package == nil {
		return nil, os.ErrNotExist
	}
	v := m.Package.Version
	if v == "" {
		v = "0.0.0"
	}
	return &pkgInfo{name: m.Package.Name, version: v, manifest: m}, nil
}

// sources finds crate sources on disk, in the order they are preferred: the
// workspace's path dependencies, vendored directories named by source
// replacement, then cargo's unpacked registry sources
// ($CARGO_HOME/registry/src/*/<name>-<version>, complete only when cargo
// wrote its .cargo-ok marker). Directory listings are read once per value,
// so one value serves a whole request.
type sources struct {
	p        *PM
	ctx      context.Context   // the request's, for diagnostics
	paths    map[string]string // "name@version" -> dir of non-member path deps
	vendored []string
	srcDirs  []string            // $CARGO_HOME/registry/src/*
	listings map[string][]string // dir -> entry names
	// rec records what the sources were found from (nil: nothing).
	rec *depcache.Recorder
}

func (p *PM) sources(ctx context.Context, paths map[string]string, vendored []string) *sources {
	return p.recordedSources(ctx, paths, vendored, nil)
}

// recordedSources is sources recording in rec every directory listed and
// file read.
func (p *PM) recordedSources(ctx context.Context, paths map[string]string, vendored []string, rec *depcache.Recorder) *sources {
	s := &sources{p: p, ctx: ctx, paths: paths, vendored: vendored, listings: map[string][]string{}, rec: rec}
	if home := p.cargoHome(); home != "" {
		src := filepath.Join(home, "registry", "src")
		for _, e := range s.list(src) {
			s.srcDirs = append(s.srcDirs, filepath.Join(src, e))
		}
	}
	return s
}

// list returns the entry names of dir, read once.
func (s *sources) list(dir string) []string {
	if l, ok := s.listings[dir]; ok {
		return l
	}
	var names []string
	s.rec.ObserveDir(dir)
	if f, err := os.Open(dir); err == nil {
		names, _ = f.Readdirnames(-1)
		f.Close()
	}
	s.listings[dir] = names
	return names
}

// candidates lists the sources of crate name on disk; with an exact version
// only that version is looked for (no directory listing).
func (s *sources) candidates(name, exact string) []localCrate {
	var out []localCrate
	for key, dir := range s.paths {
		n, v, _ := strings.Cut(key, "@")
		if n == name && (exact == "" || v == exact || v == "*") {
			out = append(out, localCrate{Name: n, Version: v, Dir: dir})
		}
	}
	for _, vd := range s.vendored {
		for _, e := range s.list(vd) {
			if e != name && !strings.HasPrefix(e, name+"-") {
				continue
			}
			dir := filepath.Join(vd, e)
			owned := ownedBy(dir, checksumFile)
			if !owned {
				s.rec.Observe(filepath.Join(dir, "Cargo.toml"))
			}
			pi, err := readPackage(dir)
			if err != nil {
				if errors.Is(err, pkgfile.ErrTooLarge) || errors.Is(err, pkgfile.ErrNotRegular) || errors.Is(err, pkgfile.ErrOutside) {
					s.p.warn(s.ctx, pmserver.Diagnostic{Message: fmt.Sprintf("vendored crate %s is skipped: %v", dir, err), File: filepath.Join(dir, "Cargo.toml")},
						"cargo: vendored crate skipped", "crate", name, "err", err)
				}
				continue
			}
			if pi.name != name {
				continue
			}
			out = append(out, localCrate{Name: name, Version: pi.version, Dir: dir, Owned: owned})
		}
	}
	for _, sd := range s.srcDirs {
		if exact != "" {
			dir := filepath.Join(sd, name+"-"+exact)
			if ok, owned := s.unpacked(sd, dir); ok {
				out = append(out, localCrate{Name: name, Version: exact, Dir: dir, Owned: owned})
			}
			continue
		}
		for _, e := range s.list(sd) {
			v, ok := strings.CutPrefix(e, name+"-")
			if !ok {
				continue
			}
			if _, err := versions.Cargo.Compare(v, v); err != nil {
				continue // another crate whose name starts with name-
			}
			dir := filepath.Join(sd, e)
			ok, owned := s.unpacked(sd, dir)
			if !ok {
				continue // not completely unpacked
			}
			out = append(out, localCrate{Name: name, Version: v, Dir: dir, Owned: owned})
		}
	}
	return out
}

// find returns the best source on disk for crate name satisfying req:
// the newest matching version, skipping versions cargo's index cache marks
// yanked unless req pins one exactly.
func (s *sources) find(name, req string) (localCrate, bool) {
	if v, ok := pinnedVersion(req); ok {
		return bestLocal(s.candidates(name, v), req, nil)
	}
	return bestLocal(s.candidates(name, ""), req, s.p.yankedOffline(name, s.rec))
}

// globEscape escapes glob metacharacters (crate names have none, but ids
// come from the wire).
func globEscape(s string) string {
	r := strings.NewReplacer("*", `\*`, "?", `\?`, "[", `\[`, `\`, `\\`)
	return r.Replace(s)
}

// yankedOffline returns the versions of crate name that cargo's on-disk
// index caches mark as yanked ($CARGO_HOME/registry/index/*/.cache/...).
// Unreadable caches are ignored: offline, what cargo has not seen is not
// known to be yanked.
func (p *PM) yankedOffline(name string, rec *depcache.Recorder) map[string]bool {
	home := p.cargoHome()
	if home == "" {
		return nil
	}
	pattern := filepath.Join(home, "registry", "index", "*", ".cache", filepath.FromSlash(registry.IndexPath(globEscape(name))))
	if rec != nil {
		// The index caches that exist, and those that could appear.
		idx := filepath.Join(home, "registry", "index")
		rec.ObserveDir(idx)
		if ents, err := os.ReadDir(idx); err == nil {
			for _, e := range ents {
				rec.Observe(filepath.Join(idx, e.Name(), ".cache", filepath.FromSlash(registry.IndexPath(name))))
			}
		}
	}
	files, _ := filepath.Glob(pattern)
	var yanked map[string]bool
	for _, f := range files {
		data, err := pkgfile.ReadUserFile(f, registry.MaxCacheFile)
		if err != nil {
			continue
		}
		vs, err := registry.ParseCacheFile(f, data)
		if err != nil {
			p.session().Logger.Debug("cargo: unreadable index cache", "file", f, "err", err)
			continue
		}
		for _, v := range vs {
			if v.Yanked && v.Name == name {
				if yanked == nil {
					yanked = map[string]bool{}
				}
				yanked[v.Vers] = true
			}
		}
	}
	return yanked
}

// bestLocal picks the newest local source satisfying req, preferring
// earlier entries for the same version. Versions in yanked are skipped
// unless req pins one exactly (=X.Y.Z), as cargo does.
func bestLocal(cands []localCrate, req string, yanked map[string]bool) (localCrate, bool) {
	var best localCrate
	found := false
	_, pinned := pinnedVersion(req)
	for _, c := range cands {
		if yanked[c.Version] && !pinned {
			continue
		}
		ok, err := versions.Cargo.Matches(req, c.Version)
		if err != nil || !ok {
			continue
		}
		if !found {
			best, found = c, true
			continue
		}
		if cmp, err := versions.Cargo.Compare(c.Version, best.Version); err == nil && cmp > 0 {
			best = c
		}
	}
	return best, found
}
