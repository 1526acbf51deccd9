package archive

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// meter counts the decompressed bytes read through it and fails once they
// pass limit; it also stops on a cancelled context. Read errors of the
// underlying stream become *Error: they are the archive's fault.
type meter struct {
	ctx   context.Context
	r     io.Reader
	n     int64
	limit int64
	over  bool
}

// errOverCap marks the meter's refusal inside decoders that wrap errors.
var errOverCap = errors.New("over the decompressed-size cap")

func (m *meter) Read(p []byte) (int, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, err
	}
	if m.over {
		return 0, errOverCap
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.n > m.limit {
		m.over = true
		return n, errOverCap
	}
	return n, err
}

func (m *meter) remaining() int64 { return m.limit - m.n }

// overErr is the refusal once the meter passed its cap.
func (x *extraction) overErr(entry string, limit int64) *Error {
	return x.fail(entry, "expands past %d bytes, over the archive's cap (%s): refused as a decompression bomb", limit, x.capText())
}

func (x *extraction) capText() string {
	if x.lim.Ratio > 0 {
		return fmt.Sprintf("at most %d bytes in all and %d × the archive's size + %d bytes", x.lim.MaxBytes, x.lim.Ratio, x.lim.Allowance)
	}
	return fmt.Sprintf("at most %d bytes in all", x.lim.MaxBytes)
}

// ExtractTarGz unpacks the gzip'd tar archive read from r, size bytes long
// (-1 when unknown: the ratio cap then applies to MaxBytes only), into
// root; with a nil root it only checks the archive, reading it through.
// See the package doc for the rules and caps.
func ExtractTarGz(ctx context.Context, r io.Reader, size int64, root *os.Root, opts Options) error {
	x := newExtraction(root, opts)
	zr, err := gzip.NewReader(r)
	if err != nil {
		return &Error{Archive: opts.Name, Reason: "is not a gzip stream: " + err.Error(), Err: err}
	}
	defer zr.Close()
	err = x.tar(ctx, zr, size, true)
	if err != nil {
		x.cleanup()
	}
	return err
}

// ExtractTar unpacks the uncompressed tar archive read from r into root
// (nil: check only), as ExtractTarGz.
func ExtractTar(ctx context.Context, r io.Reader, size int64, root *os.Root, opts Options) error {
	x := newExtraction(root, opts)
	err := x.tar(ctx, r, size, false)
	if err != nil {
		x.cleanup()
	}
	return err
}

// sparse reports whether h is a sparse file: GNU's own entry type, or
// a PAX header in one of GNU's sparse formats (on a regular entry).
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func (x *extraction) tar(ctx context.Context, r io.Reader, size int64, gz bool) error {
	m := &meter{ctx: ctx, r: r, limit: x.budget(size)}
	tr := tar.NewReader(m)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if m.over {
			return x.overErr("", m.limit)
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return &Error{Archive: x.opts.Name, Reason: "is not a readable tar archive: " + err.Error(), Err: err}
		}
		if err := x.count(); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if sparse(h) {
			// archive/tar fills a sparse file's holes with zeros it never
			// reads from the stream, past every cap counted on the
			// stream: a few hundred bytes could write gigabytes. No
			// packager of cargo, npm or PyPI writes one.
			return x.fail(h.Name, "is a sparse file, which packages do not hold")
		}
		k := kindFile
		switch h.Typeflag {
		case tar.TypeDir:
			k = kindDir
		case tar.TypeReg, '\x00':
		case tar.TypeSymlink:
			return x.fail(h.Name, "is a symbolic link (to %q); links are not allowed in packages", h.Linkname)
		case tar.TypeLink:
			return x.fail(h.Name, "is a hard link (to %q); links are not allowed in packages", h.Linkname)
		case tar.TypeChar, tar.TypeBlock:
			return x.fail(h.Name, "is a device, a special file not allowed in packages")
		case tar.TypeFifo:
			return x.fail(h.Name, "is a FIFO, a special file not allowed in packages")
		default:
			return x.fail(h.Name, "has type %q, a special file not allowed in packages", string(h.Typeflag))
		}
		if k == kindFile {
			if h.Size < 0 {
				return x.fail(h.Name, "has a negative size")
			}
			// The declared size must fit what is left: an honest bomb is
			// refused before a byte of it is written.
			if x.lim.MaxFile > 0 && h.Size > x.lim.MaxFile {
				return x.fail(h.Name, "is %d bytes, over the cap of %d bytes for one file", h.Size, x.lim.MaxFile)
			}
			if h.Size > m.remaining() {
				return x.fail(h.Name, "declares %d bytes, over what is left of the archive's cap (%s): refused as a decompression bomb", h.Size, x.capText())
			}
		}
		rel, err := x.target(h.Name, k)
		if err != nil {
			return err
		}
		if rel == "" {
			continue // dropped; its bytes are still read and counted by Next
		}
		if k == kindDir {
			if err := x.mkdir(rel); err != nil {
				return err
			}
			continue
		}
		if err := x.write(rel, entryReader{tr, x, h.Name, m}, h.Mode&0o111 != 0); err != nil {
			return err
		}
	}
	if gz {
		// Drain the padding so a truncated gzip stream is noticed, but no
		// more than a tar tool pads with.
		n, err := io.Copy(io.Discard, io.LimitReader(m, maxTrailing+1))
		switch {
		case m.over:
			return x.overErr("", m.limit)
		case err != nil:
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return &Error{Archive: x.opts.Name, Reason: "has a corrupt gzip stream: " + err.Error(), Err: err}
		case n > maxTrailing:
			return x.fail("", "has more than %d bytes of data after the end of the tar archive", maxTrailing)
		}
	}
	return ctx.Err()
}

// entryReader reads one entry's content, turning decoder failures into
// *Error (so they are told apart from write failures).
type entryReader struct {
	r    io.Reader
	x    *extraction
	name string
	m    *meter
}

func (e entryReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if e.m.over {
		return n, e.x.overErr(e.name, e.m.limit)
	}
	if cerr := e.m.ctx.Err(); cerr != nil {
		return n, cerr
	}
	return n, &Error{Archive: e.x.opts.Name, Entry: e.name, Reason: "cannot be read: " + err.Error(), Err: err}
}
