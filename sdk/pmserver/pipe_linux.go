package pmserver

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxPipe is the largest capacity growPipe asks for: Linux's default
// bound for unprivileged processes (/proc/sys/fs/pipe-max-size).
const maxPipe = 1 << 20

// growPipe raises the capacity of w, when it is a pipe, to hold n bytes
// (at most maxPipe) before a large answer is written to it: the default
// 64 KiB makes the PM and the host take turns every 64 KiB, a switch
// between processes each time, which on a busy machine costs more than
// writing the answer. The capacity only grows; failures (not a pipe, a
// lower system bound) leave the pipe as it was.
func growPipe(w io.Writer, n int64) {
	f, ok := w.(*os.File)
	if !ok || n <= 64<<10 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	want := int(min(n, maxPipe))
	rc.Control(func(fd uintptr) {
		if cur, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && cur < want {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, want)
		}
	})
}

// spliceRegion sends the n bytes of from at off to w with splice(2) when w
// is a pipe and from an open file: the kernel hands the file's cached
// pages to the pipe instead of the process copying them in and out, which
// at a few MiB is most of what writing the answer costs. ok is false, with
// nothing sent, when splice cannot serve here (w or from is not such a
// file, or the kernel or file system refuses it on the first call); the
// caller then writes the region itself. Otherwise sent is what reached
// the pipe and err what stopped it short of n: io.ErrUnexpectedEOF when
// the file ended first, or the system call's error.
func spliceRegion(w io.Writer, from io.ReaderAt, off, n int64) (sent int64, ok bool, err error) {
	dst, isFile := w.(*os.File)
	src, srcFile := from.(*os.File)
	if !isFile || !srcFile || n <= 0 {
		return 0, false, nil
	}
	dc, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	sc, err := src.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var serr error
	cerr := sc.Control(func(sfd uintptr) {
		werr := dc.Write(func(dfd uintptr) bool {
			for sent < n {
				pos := off + sent
				m, e := unix.Splice(int(sfd), &pos, int(dfd), nil, int(min(n-sent, 1<<30)), 0)
				switch {
				case e == unix.EINTR:
					continue
				case e == unix.EAGAIN:
					return false // a non-blocking pipe that is full: wait for room
				case e != nil:
					serr = e
					return true
				case m == 0:
					serr = io.ErrUnexpectedEOF
					return true
				}
				sent += m
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
	})
	if cerr != nil {
		return 0, false, nil
	}
	if sent == 0 && (errors.Is(serr, unix.EINVAL) || errors.Is(serr, unix.ENOSYS) || errors.Is(serr, unix.EOPNOTSUPP)) {
		return 0, false, nil // w is not a pipe, or from's file system cannot splice
	}
	return sent, true, serr
}
