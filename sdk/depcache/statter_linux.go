package depcache

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxBaseDirs bounds the directories one statter keeps open.
const maxBaseDirs = 64

// minShared is how many paths must share a base directory before the
// statter opens it: below it, opening and closing the directory costs more
// than the path components it saves.
const minShared = 4

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
	shared map[string]int // base directory → paths taken under it
	fds    map[string]int // base directory → open descriptor, or -1
}

// newStatter returns a statter.
func newStatter() *statter {
	return &statter{shared: map[string]int{}}
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

// base counts path under the directories two and three levels above it
// and returns the one path is best statted relative to, and path below
// it, or false when path is statted whole.
func (st *statter) base(path string) (base, rel string, ok bool) {
	base = parent(parent(path))
	up := parent(base)
	st.shared[base]++
	if up != base {
		st.shared[up]++
	}
	if st.shared[base] < minShared {
		base = up
		if st.shared[base] < minShared {
			return "", "", false
		}
	}
	rel, ok = relativeTo(base, path)
	return base, rel, ok
}

// take returns path's current stamp.
func (st *statter) take(path string) Stamp {
	base, rel, ok := st.base(path)
	if !ok {
		return stampAt(unix.AT_FDCWD, path, path)
	}
	fd, opened := st.fds[base]
	if !opened {
		fd = -1
		if len(st.fds) < maxBaseDirs {
			for {
				var err error
				fd, err = unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != unix.EINTR {
					if err != nil {
						fd = -1
					}
					break
				}
			}
		}
		if st.fds == nil {
			st.fds = map[string]int{}
		}
		st.fds[base] = fd
	}
	if fd < 0 {
		return stampAt(unix.AT_FDCWD, path, path)
	}
	return stampAt(fd, rel, path)
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
	for _, fd := range st.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	st.fds = nil
}
