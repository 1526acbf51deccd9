package discovery

import (
	"github.com/symposium-dev/symposium-pm/sdk/internal/statat"
	"golang.org/x/sys/unix"
)

// pathStats looks at the paths offers name (a root's source.path), many
// below a few directories every offer of a PM shares (node_modules,
// vendor, site-packages), relative to those directories opened once (see
// statat.Dirs): on a thousand offers the whole-path lstat was a third of
// judging. The nil *pathStats looks at each path whole. It is not safe for
// concurrent use: each goroutine judging offers has its own.
type pathStats struct {
	dirs statat.Dirs
}

// lstat reports whether path is a symbolic link, as os.Lstat would see it;
// the error is os.Lstat's cause (an errno, matched with errors.Is).
func (ps *pathStats) lstat(path string) (link bool, err error) {
	if ps == nil {
		return lstatWhole(path)
	}
	var st unix.Stat_t
	if err := ps.dirs.Lstat(path, &st); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}

func (ps *pathStats) close() {
	if ps != nil {
		ps.dirs.Close()
	}
}
