package statat

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// minShared is how many paths must share a base directory before Dirs
// opens it: below it, opening and closing the directory costs more than
// the path components it saves.
const minShared = 4

// recentBases is how many base directories Dirs keeps count of, and at
// most keeps open: paths come grouped by package, so the few bases shared
// by many (node_modules, the workspace) stay among the most recently used,
// while a directory only one path lies below (a package's own, for its
// skills/s) is soon forgotten. A table this small is searched faster than
// a map is hashed.
const recentBases = 8

// Dirs stats paths. Once enough paths share the directory two levels above
// them (node_modules for node_modules/<pkg>/package.json, site-packages
// for a .dist-info file, a vendor directory for a crate's Cargo.toml), or
// failing that three levels above (node_modules for
// node_modules/<pkg>/skills/s), the next ones are statted relative to that
// directory, opened once (O_PATH). The directory is resolved when opened,
// as a stat of the whole path resolves it then: a link among its
// components is followed; a path is never cleaned, so ".." in it is
// resolved by the kernel as it would be whole. The zero Dirs is ready to
// use; it is not safe for concurrent use, and Close releases the
// directories it opened.
type Dirs struct {
	bases [recentBases]base
	clock uint64 // ticks once per use of a base, for least recently used
}

// base is a directory paths were statted below.
type base struct {
	dir    string
	n      int    // paths statted below it since it was last counted afresh
	fd     int    // open descriptor, when opened
	opened bool   // an open was tried: fd is the descriptor, or -1
	used   uint64 // the clock at its last use
}

// Stat stats path as unix.Stat does (following links).
func (d *Dirs) Stat(path string, st *unix.Stat_t) error {
	return d.statAt(path, st, 0)
}

// Lstat stats path as unix.Lstat does (a link at its end is not
// followed).
func (d *Dirs) Lstat(path string, st *unix.Stat_t) error {
	return d.statAt(path, st, unix.AT_SYMLINK_NOFOLLOW)
}

func (d *Dirs) statAt(path string, st *unix.Stat_t, flags int) error {
	fd, rel := d.at(path)
	for {
		err := unix.Fstatat(fd, rel, st, flags)
		if err != unix.EINTR {
			return err
		}
	}
}

// at returns the directory path is best statted relative to (or
// unix.AT_FDCWD) and path below it.
func (d *Dirs) at(path string) (int, string) {
	b, rel, ok := d.base(path)
	if !ok {
		return unix.AT_FDCWD, path
	}
	if !b.opened {
		b.opened, b.fd = true, -1
		for {
			fd, err := unix.Open(b.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != unix.EINTR {
				if err == nil {
					b.fd = fd
				}
				break
			}
		}
	}
	if b.fd < 0 {
		return unix.AT_FDCWD, path
	}
	return b.fd, rel
}

// Close releases the directories d opened; d may be used again.
func (d *Dirs) Close() {
	for i := range d.bases {
		if b := &d.bases[i]; b.opened && b.fd >= 0 {
			unix.Close(b.fd)
		}
		d.bases[i] = base{}
	}
}

// count counts one more path below dir and returns dir's entry, replacing
// the least recently used one when dir has none.
func (d *Dirs) count(dir string) *base {
	d.clock++
	old := &d.bases[0]
	for i := range d.bases {
		b := &d.bases[i]
		if b.n > 0 && b.dir == dir {
			b.n++
			b.used = d.clock
			return b
		}
		if b.used < old.used {
			old = b
		}
	}
	if old.opened && old.fd >= 0 {
		unix.Close(old.fd)
	}
	*old = base{dir: dir, n: 1, used: d.clock}
	return old
}

// base counts path below the directories two and three levels above it
// and returns the entry of the one path is best statted relative to, and
// path below it, or false when path is statted whole.
func (d *Dirs) base(path string) (*base, string, bool) {
	b2 := parent(parent(path))
	b := d.count(b2)
	if b.n < minShared {
		up := parent(b2)
		if up == b2 {
			return nil, "", false
		}
		if b = d.count(up); b.n < minShared {
			return nil, "", false
		}
	}
	rel, ok := relativeTo(b.dir, path)
	return b, rel, ok
}

// parent is the directory path names, without cleaning path (a string
// of the path, never a copy): the kernel resolves parent(path), then the
// rest of path from there, as it resolves path.
func parent(path string) string {
	i := strings.LastIndexByte(path, '/')
	switch {
	case i < 0:
		return ""
	case i == 0:
		return "/"
	}
	return path[:i]
}

// relativeTo returns path below base, when base is an absolute directory
// path is under.
func relativeTo(base, path string) (string, bool) {
	if !filepath.IsAbs(base) {
		return "", false
	}
	rel, ok := strings.CutPrefix(path, base)
	if !ok || rel == "" {
		return "", false
	}
	if base[len(base)-1] != '/' {
		if rel[0] != '/' {
			return "", false
		}
		rel = rel[1:]
	}
	return rel, rel != ""
}
