package pmserver

import (
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
