package pmserver

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpliceRegion: a region of an open file reaches a pipe whole and
// byte for byte through splice; a destination that is not a pipe is
// declined with nothing written (the caller writes the region itself);
// a file that ends inside the region stops it short with the bytes that
// were there sent.
func TestSpliceRegion(t *testing.T) {
	region := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16) // several times a pipe's default capacity
	path := filepath.Join(t.TempDir(), "kept")
	if err := os.WriteFile(path, append(append([]byte("head\n"), region...), "tail"...), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const off = int64(len("head\n"))

	t.Run("to a pipe", func(t *testing.T) {
		got, sent, ok, err := spliceToPipe(t, src, off, int64(len(region)))
		if !ok || err != nil || sent != int64(len(region)) || !bytes.Equal(got, region) {
			t.Errorf("sent %d of %d bytes (ok %v, %v); the pipe got them intact: %v", sent, len(region), ok, err, bytes.Equal(got, region))
		}
	})
	t.Run("past the end of the file", func(t *testing.T) {
		want := int64(len(region) + len("tail"))
		got, sent, ok, err := spliceToPipe(t, src, off, want+100)
		if !ok || !errors.Is(err, io.ErrUnexpectedEOF) || sent != want || int64(len(got)) != want {
			t.Errorf("sent %d bytes, the pipe got %d (ok %v, %v); want %d and io.ErrUnexpectedEOF", sent, len(got), ok, err, want)
		}
	})
	t.Run("to a file", func(t *testing.T) {
		dst, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		sent, ok, err := spliceRegion(dst, src, off, int64(len(region)))
		if fi, _ := dst.Stat(); ok || sent != 0 || err != nil || fi.Size() != 0 {
			t.Errorf("ok %v, sent %d, %v, %d bytes written; want it declined with nothing written", ok, sent, err, fi.Size())
		}
	})
	t.Run("from memory", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		if sent, ok, err := spliceRegion(w, strings.NewReader(string(region)), 0, 10); ok || sent != 0 || err != nil {
			t.Errorf("ok %v, sent %d, %v; want it declined", ok, sent, err)
		}
	})
}

// spliceToPipe splices n bytes of src at off into a new pipe and returns
// what came out of its other end.
func spliceToPipe(t *testing.T, src *os.File, off, n int64) (got []byte, sent int64, ok bool, err error) {
	t.Helper()
	r, w, perr := os.Pipe()
	if perr != nil {
		t.Fatal(perr)
	}
	defer r.Close()
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	sent, ok, err = spliceRegion(w, src, off, n)
	w.Close()
	return <-read, sent, ok, err
}
