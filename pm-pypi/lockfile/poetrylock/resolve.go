package poetrylock

import "github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"

var _ lockfile.Resolver = (*Lock)(nil)

// Resolve returns the versions of the [[package]] entries named name
// (normalized). A name locked at several versions returns each with the
// markers its entry carries (lock-version 2.1 writes them; older files
// keep markers only on the requirements of the packages that depend on
// one, and give none); a name locked once returns no markers.
func (l *Lock) Resolve(name string) []lockfile.Locked {
	var out []lockfile.Locked
	for _, p := range l.Packages {
		if p.Name == name {
			out = append(out, lockfile.Locked{Version: p.Version, Markers: p.Markers})
		}
	}
	if len(out) == 1 {
		out[0].Markers = nil
	}
	return out
}
