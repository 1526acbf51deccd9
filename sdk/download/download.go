// Package download copies a response body (a tarball, a wheel, a crate)
// into a file, bounded, and tells the two ways it can fail apart: the
// destination's failure (a full disk, a vanished cache directory) is the
// machine's, reported as the writer gave it, while the body's failure is
// the registry's or the network's. io.Copy returns either as one error.
package download

import "io"

// Copy copies src to dst until src ends or more than limit bytes have been
// read. It returns the number of bytes copied (limit+1 when src holds more
// than limit, which the caller reports as too large), the destination's
// error (werr) and the source's (rerr); at most one is non-nil, werr
// first.
func Copy(dst io.Writer, src io.Reader, limit int64) (n int64, werr, rerr error) {
	tw := &trackedWriter{w: dst}
	n, err := io.Copy(tw, io.LimitReader(src, limit+1))
	if tw.err != nil {
		return n, tw.err, nil
	}
	return n, nil, err
}

// trackedWriter remembers its writer's failure.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}
