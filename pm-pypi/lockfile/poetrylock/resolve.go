package poetrylock

import "github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"

var _ lockfile.Resolver = (*Lock)(nil)

// Resolve returns the versions of the [[package]] entries named name
// (normalized). poetry.lock keeps markers on the requirements of the
// packages that depend on one, not on its entry, so none are returned.
func (l *Lock) Resolve(name string) []lockfile.Locked {
	var out []lockfile.Locked
	for _, p := range l.Packages {
		if p.Name == name {
			out = append(out, lockfile.Locked{Version: p.Version})
		}
	}
	return out
}
