package depcache

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// minShared is how many paths must share a base directory before the
// statter opens it: below it, opening and closing the directory costs more
// than the path components it saves.
const minShared = 4

// recentBases is how many base directories a statter keeps count of, and
// at most keeps open: paths recorded as a computation read them come
// grouped by package, so the few bases shared by many (node_modules, the
// workspace) stay among the most recently used, while a directory only
// one path lies below (a package's own, for its skills/s) is soon
// forgotten. A table this small is searched faster than a map is hashed.
const recentBases = 8

// statter takes stamps. Once enough paths taken share the directory two
// levels above them (node_modules for node_modules/<pkg>/package.json,
// site-packages for a .dist-info file, a vendor directory for a crate's
// Cargo.toml), or failing that three levels above (node_modules for
// node_modules/<pkg>/skills/s), the next ones are statted relative to that
// directory, opened once: the kernel then walks two or three path
// components rather than the whole path. The stamp is the one Take
// returns: symbolic links are followed, any error is an absent path. A
// statter is not safe for concurrent use; close releases its directories.
type statter struct {
	bases [recentBases]baseDir
	clock uint64 // ticks once per use of a base, for least recently used
}

// baseDir is a directory paths were taken below.
type baseDir struct {
	dir    string
	n      int    // paths taken below it since it was last counted afresh
	fd     int    // open descriptor, when opened
	opened bool   // an open was tried: fd is the descriptor, or -1
	used   uint64 // the clock at its last use
}

// newStatter returns a statter.
func newStatter() *statter { return &statter{} }

// count counts one more path below dir and returns dir's entry, replacing
// the least recently used one when dir has none.
func (st *statter) count(dir string) *baseDir {
	st.clock++
	old := &st.bases[0]
	for i := range st.bases {
		b := &st.bases[i]
		if b.n > 0 && b.dir == dir {
			b.n++
			b.used = st.clock
			return b
		}
		if b.used < old.used {
			old = b
		}
	}
	if old.opened && old.fd >= 0 {
		unix.Close(old.fd)
	}
	*old = baseDir{dir: dir, n: 1, used: st.clock}
	return old
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

// base counts path below the directories two and three levels above it
// and returns the entry of the one path is best statted relative to, and
// path below it, or false when path is statted whole.
func (st *statter) base(path string) (*baseDir, string, bool) {
	b2 := parent(parent(path))
	b := st.count(b2)
	if b.n < minShared {
		up := parent(b2)
		if up == b2 {
			return nil, "", false
		}
		if b = st.count(up); b.n < minShared {
			return nil, "", false
		}
	}
	rel, ok := relativeTo(b.dir, path)
	return b, rel, ok
}

// take returns path's current stamp.
func (st *statter) take(path string) Stamp {
	b, rel, ok := st.base(path)
	if !ok {
		return stampAt(unix.AT_FDCWD, path, path)
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
		return stampAt(unix.AT_FDCWD, path, path)
	}
	return stampAt(b.fd, rel, path)
}

// stampAt returns the stamp of path, which is rel below the directory fd
// (or unix.AT_FDCWD) refers to, as Take does but without os.Stat's
// allocations.
func stampAt(fd int, rel, path string) Stamp {
	var sys unix.Stat_t
	for {
		err := unix.Fstatat(fd, rel, &sys, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stamp{Path: path, Size: -1}
		}
		break
	}
	s := Stamp{Path: path, Size: sys.Size, Mod: sys.Mtim.Nano(), Change: sys.Ctim.Nano(),
		Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Dir: sys.Mode&unix.S_IFMT == unix.S_IFDIR}
	if s.Dir {
		s.Size = 0
	}
	return s
}

// close releases the directories st opened.
func (st *statter) close() {
	for i := range st.bases {
		if b := &st.bases[i]; b.opened && b.fd >= 0 {
			unix.Close(b.fd)
		}
		st.bases[i] = baseDir{}
	}
}
