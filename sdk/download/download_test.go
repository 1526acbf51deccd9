package download

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type failWriter struct{ after int }

var errDisk = errors.New("no space left on device")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.after {
		return f.after, errDisk
	}
	f.after -= len(p)
	return len(p), nil
}

var errNet = errors.New("connection reset")

func TestCopy(t *testing.T) {
	for _, tt := range []struct {
		name       string
		src        io.Reader
		dst        io.Writer
		limit      int64
		n          int64
		werr, rerr error
	}{
		{"fits", strings.NewReader("hello"), &bytes.Buffer{}, 5, 5, nil, nil},
		{"over the limit", strings.NewReader("hello!"), &bytes.Buffer{}, 5, 6, nil, nil},
		{"empty", strings.NewReader(""), &bytes.Buffer{}, 0, 0, nil, nil},
		{"writer fails", strings.NewReader("hello"), &failWriter{after: 2}, 10, 2, errDisk, nil},
		{"reader fails", iotest.ErrReader(errNet), &bytes.Buffer{}, 10, 0, nil, errNet},
		{"reader fails after data", io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errNet)), &bytes.Buffer{}, 10, 2, nil, errNet},
	} {
		n, werr, rerr := Copy(tt.dst, tt.src, tt.limit)
		if n != tt.n || !errors.Is(werr, tt.werr) || !errors.Is(rerr, tt.rerr) || (tt.werr == nil) != (werr == nil) || (tt.rerr == nil) != (rerr == nil) {
			t.Errorf("%s: Copy = %d, %v, %v; want %d, %v, %v", tt.name, n, werr, rerr, tt.n, tt.werr, tt.rerr)
		}
	}
}
