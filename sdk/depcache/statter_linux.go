package depcache

import (
	"github.com/symposium-dev/symposium-pm/sdk/internal/statat"
	"golang.org/x/sys/unix"
)

// statter takes stamps, statting paths relative to the directories many of
// them share (see statat.Dirs): the kernel then walks two or three path
// components rather than the whole path. The stamp is the one Take
// returns: symbolic links are followed, any error is an absent path. A
// statter is not safe for concurrent use; close releases its directories.
type statter struct {
	dirs statat.Dirs
}

// newStatter returns a statter.
func newStatter() *statter { return &statter{} }

// take returns path's current stamp, as Take does but without os.Stat's
// allocations.
func (st *statter) take(path string) Stamp {
	var sys unix.Stat_t
	if st.dirs.Stat(path, &sys) != nil {
		return Stamp{Path: path, Size: -1}
	}
	s := Stamp{Path: path, Size: sys.Size, Mod: sys.Mtim.Nano(), Change: sys.Ctim.Nano(),
		Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Dir: sys.Mode&unix.S_IFMT == unix.S_IFDIR}
	if s.Dir {
		s.Size = 0
	}
	return s
}

// close releases the directories st opened.
func (st *statter) close() { st.dirs.Close() }
