package pipfilelock

import "github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"

var _ lockfile.Resolver = (*Lock)(nil)

// Resolve returns the versions locked for name (normalized) in every
// category that locks it.
func (l *Lock) Resolve(name string) []lockfile.Locked {
	var out []lockfile.Locked
	for _, p := range l.Packages {
		if p.Name == name {
			out = append(out, lockfile.Locked{Version: p.Version})
		}
	}
	return out
}
