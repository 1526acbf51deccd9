package archive

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ExtractZip unpacks the zip archive in ra, size bytes long, into root;
// with a nil root it only checks the archive, decompressing it through.
// See the package doc for the rules and caps.
func ExtractZip(ctx context.Context, ra io.ReaderAt, size int64, root *os.Root, opts Options) error {
	x := newExtraction(root, opts)
	err := x.zip(ctx, ra, size)
	if err != nil {
		x.cleanup()
	}
	return err
}

func (x *extraction) zip(ctx context.Context, ra io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return &Error{Archive: x.opts.Name, Reason: "is not a readable zip archive: " + err.Error(), Err: err}
	}
	if x.lim.MaxEntries > 0 && len(zr.File) > x.lim.MaxEntries {
		return x.fail("", "has %d entries, over the cap of %d", len(zr.File), x.lim.MaxEntries)
	}
	limit := x.budget(size)
	// Check every entry before writing any: names, types, collisions and
	// the declared sizes.
	type planned struct {
		f   *zip.File
		rel string
		dir bool
	}
	plan := make([]planned, 0, len(zr.File))
	var declared uint64
	for _, f := range zr.File {
		if err := x.count(); err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return x.fail(f.Name, "is a symbolic link; links are not allowed in packages")
		case mode&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			return x.fail(f.Name, "is a device, a special file not allowed in packages")
		case mode&fs.ModeNamedPipe != 0:
			return x.fail(f.Name, "is a FIFO, a special file not allowed in packages")
		case mode&(fs.ModeSocket|fs.ModeIrregular) != 0:
			return x.fail(f.Name, "is a special file not allowed in packages")
		}
		dir := strings.HasSuffix(f.Name, "/") || mode.IsDir()
		if !dir {
			if x.lim.MaxFile > 0 && f.UncompressedSize64 > uint64(x.lim.MaxFile) {
				return x.fail(f.Name, "is %d bytes, over the cap of %d bytes for one file", f.UncompressedSize64, x.lim.MaxFile)
			}
			declared += f.UncompressedSize64
			if declared > uint64(limit) {
				return x.fail(f.Name, "brings the declared size past %d bytes, over the archive's cap (%s): refused as a decompression bomb", limit, x.capText())
			}
		}
		k := kindFile
		if dir {
			k = kindDir
		}
		rel, err := x.target(strings.TrimSuffix(f.Name, "/"), k)
		if err != nil {
			if e, ok := err.(*Error); ok && e.Entry != "" {
				e.Entry = f.Name
			}
			return err
		}
		if rel != "" {
			plan = append(plan, planned{f, rel, dir})
		}
	}
	// Every decompressed byte counts, whatever the headers said.
	m := &meter{ctx: ctx, limit: limit}
	for _, p := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.dir {
			if err := x.mkdir(p.rel); err != nil {
				return err
			}
			continue
		}
		rc, err := p.f.Open()
		if err != nil {
			return &Error{Archive: x.opts.Name, Entry: p.f.Name, Reason: "cannot be read: " + err.Error(), Err: err}
		}
		m.r = rc
		err = x.write(p.rel, entryReader{m, x, p.f.Name, m}, p.f.Mode()&0o111 != 0)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
