package pylock

import "github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"

var _ lockfile.Resolver = (*Lock)(nil)

// Resolve returns the versions of the [[packages]] entries named name
// (normalized), each with its marker when the lock has several.
func (l *Lock) Resolve(name string) []lockfile.Locked {
	var out []lockfile.Locked
	for _, p := range l.Packages {
		if p.Name != name {
			continue
		}
		c := lockfile.Locked{Version: p.Version}
		if p.Marker != "" {
			c.Markers = []string{p.Marker}
		}
		out = append(out, c)
	}
	if len(out) == 1 {
		out[0].Markers = nil
	}
	return out
}
