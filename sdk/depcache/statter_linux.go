package depcache

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxBaseDirs bounds the directories one statter keeps open.
const maxBaseDirs = 64

// minShared is how many stamps must share a base directory before the
// statter opens it: below it, opening and closing the directory costs more
// than the path components it saves.
const minShared = 4

// statter takes stamps. Paths that share the directory two levels above
// them (node_modules for node_modules/<pkg>/package.json, site-packages
// for a .dist-info file, a vendor directory for a crate's Cargo.toml) are
// statted relative to that directory, opened once: the kernel then walks
// two path components rather than the whole path. The stamp is the one
// Take returns: symbolic links are followed, any error is an absent path.
// A statter is not safe for concurrent use; close releases its
// directories.
type statter struct {
	shared map[string]int // base directory → stamps under it
	fds    map[string]int // base directory → open descriptor, or -1
}

// newStatter returns a statter for stamps.
func newStatter(stamps []Stamp) *statter {
	st := &statter{shared: map[string]int{}}
	for _, s := range stamps {
		st.shared[baseOf(s.Path)]++
	}
	return st
}

// baseOf is the directory two levels above path.
func baseOf(path string) string { return filepath.Dir(filepath.Dir(path)) }

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
	if base[len(base)-1] != filepath.Separator {
		if rel[0] != filepath.Separator {
			return "", false
		}
		rel = rel[1:]
	}
	return rel, rel != ""
}

// take returns path's current stamp.
func (st *statter) take(path string) Stamp {
	base := baseOf(path)
	rel, ok := relativeTo(base, path)
	if !ok || st.shared[base] < minShared {
		return Take(path)
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
		return Take(path)
	}
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
