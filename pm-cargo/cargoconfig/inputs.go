package cargoconfig

import "path/filepath"

// Candidates lists every file Load would read, present or not, for dir and
// cargoHome: .cargo/config.toml and .cargo/config in dir and each of its
// parents, then in cargoHome. A caller caching what it derived from the
// configuration keys it on these paths' states.
func Candidates(dir, cargoHome string) []string {
	var out []string
	for d := dir; ; {
		out = append(out, filepath.Join(d, ".cargo", "config.toml"), filepath.Join(d, ".cargo", "config"))
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if cargoHome != "" {
		out = append(out, filepath.Join(cargoHome, "config.toml"), filepath.Join(cargoHome, "config"))
	}
	return out
}
