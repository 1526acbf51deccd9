package uvlock

import (
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
)

var (
	_ lockfile.Resolver        = (*Lock)(nil)
	_ lockfile.WorkspaceReader = (*Lock)(nil)
)

// Resolve returns the versions uv.lock locked for the normalized name (the
// workspace's own root project excluded). When it locks several, split by
// markers, the candidates are the versions the workspace's own dependency
// references name, with their markers, when they name any; else each
// locked version with its resolution-markers.
func (l *Lock) Resolve(name string) []lockfile.Locked {
	var pkgs []Package
	for _, p := range l.Packages {
		if p.Name == name && !p.IsRoot() {
			pkgs = append(pkgs, p)
		}
	}
	switch len(pkgs) {
	case 0:
		return nil
	case 1:
		return []lockfile.Locked{{Version: pkgs[0].Version}}
	}
	members := map[string]bool{}
	for _, m := range l.Members {
		members[m] = true
	}
	var out []lockfile.Locked
	for _, p := range l.Packages {
		if !p.IsRoot() && !members[p.Name] {
			continue
		}
		for _, e := range p.Edges {
			if e.Name != name || e.Version == "" {
				continue
			}
			c := lockfile.Locked{Version: e.Version}
			if e.Marker != "" {
				c.Markers = []string{e.Marker}
			}
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, p := range pkgs {
		out = append(out, lockfile.Locked{Version: p.Version, Markers: p.ResolutionMarkers})
	}
	return out
}

// Workspace returns the [manifest] members and the source trees of the
// locked packages that are directories on disk (editable, directory, path
// or virtual sources other than the root project and built archives).
func (l *Lock) Workspace() lockfile.Workspace {
	ws := lockfile.Workspace{Members: l.Members}
	for _, p := range l.Packages {
		if p.IsRoot() || p.Source == nil {
			continue
		}
		for _, dir := range []string{p.Source.Editable, p.Source.Directory, p.Source.Path, p.Source.Virtual} {
			if dir != "" && !strings.HasSuffix(dir, ".whl") && !strings.HasSuffix(dir, ".tar.gz") {
				ws.Sources = append(ws.Sources, lockfile.Source{Name: p.Name, Path: dir})
			}
		}
	}
	return ws
}
