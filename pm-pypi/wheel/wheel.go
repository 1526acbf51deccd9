// Package wheel reads and unpacks distribution archives safely: wheels (zip,
// PEP 427) and sdists (.tar.gz, read without building). Every entry is
// checked before anything is written: no absolute paths, no "..", no links or
// devices, caps on entry count, per-file and total size, and on compression
// ratio (zip bombs). Files are written through os.Root into a fresh temporary
// directory that is renamed into place only when everything succeeded, so a
// failure leaves nothing behind.
package wheel

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/distinfo"
	"github.com/symposium-dev/symposium-pm/pm-pypi/pyname"
)

// Limits caps what an archive may contain.
type Limits struct {
	MaxEntries  int
	MaxFileSize int64
	MaxTotal    int64
	// MaxRatio is the largest uncompressed/compressed ratio allowed for an
	// entry bigger than 1 MiB.
	MaxRatio int64
}

// DefaultLimits are generous for real distributions (the largest wheels on
// PyPI hold a few GiB of native code; plugin packages hold text).
var DefaultLimits = Limits{MaxEntries: 100_000, MaxFileSize: 512 << 20, MaxTotal: 2 << 30, MaxRatio: 200}

// ContentError reports unusable archive content: what the PM answers with
// invalid-content (-32014).
type ContentError struct {
	Archive string
	Detail  string
}

// Error describes the problem, naming the archive.
func (e *ContentError) Error() string { return e.Archive + ": " + e.Detail }

func contentErr(archive, format string, args ...any) error {
	return &ContentError{Archive: archive, Detail: fmt.Sprintf(format, args...)}
}

// Info describes an unpacked distribution.
type Info struct {
	// Metadata is the wheel's METADATA (or the sdist's PKG-INFO).
	Metadata distinfo.Metadata
	// EntryPoints are the wheel's entry points (nil for sdists).
	EntryPoints map[string][]distinfo.EntryPoint
	// DistInfo is the dist-info directory name ("" for sdists).
	DistInfo string
	// Base is the directory, relative to the unpacked root, that holds the
	// distribution's files: "." for wheels, "<name>-<version>" for sdists.
	Base string
}

// checkName validates an archive member name and returns it slash-clean.
func checkName(archive, name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, `\`) {
		return "", contentErr(archive, "unsafe entry name %q", name)
	}
	clean := strings.TrimSuffix(name, "/")
	if path.IsAbs(clean) || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", contentErr(archive, "unsafe path %q escapes the archive root", name)
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == ".." {
			return "", contentErr(archive, "unsafe path %q escapes the archive root", name)
		}
	}
	return path.Clean(clean), nil
}

// caseSet records every path an archive creates (its entries and their
// parent directories) by lower-cased name: two spellings of one name
// unpack differently on case-insensitive file systems (one silently
// replacing or merging into the other), so they are refused.
type caseSet map[string]string

func (cs caseSet) add(archive, name string) error {
	for p := name; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		k := strings.ToLower(p)
		prev, seen := cs[k]
		if !seen {
			cs[k] = p
			continue
		}
		if prev != p {
			return contentErr(archive, "entries %q and %q differ only in case", prev, p)
		}
		if p != name {
			break // its ancestors were recorded with it
		}
	}
	return nil
}

// bombGuard counts decompressed bytes and fails past limit.
type bombGuard struct {
	r        io.Reader
	n, limit int64
}

var errBomb = errors.New("decompressed size exceeds the compression ratio limit")

func (b *bombGuard) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return n, errBomb
	}
	return n, err
}

// member is one regular file or directory to write.
type member struct {
	exec bool // keep the owner's execute bit (scripts)
	name string
	dir  bool
	size int64
	open func() (io.ReadCloser, error)
}

// ExtractWheel checks the wheel at src and unpacks it into dest, which must
// not exist; its parent must. The wheel must hold exactly one top-level
// *.dist-info/METADATA, and every file RECORD lists with a hash must match it.
func ExtractWheel(ctx context.Context, src, dest string, lim Limits) (*Info, error) {
	archive := filepath.Base(src)
	zr, err := zip.OpenReader(src)
	if err != nil {
		return nil, contentErr(archive, "not a readable zip archive: %v", err)
	}
	defer zr.Close()
	if len(zr.File) > lim.MaxEntries {
		return nil, contentErr(archive, "%d entries exceed the limit of %d", len(zr.File), lim.MaxEntries)
	}
	var members []member
	var total int64
	files := map[string]*zip.File{}
	distInfos := map[string]bool{}
	cases := caseSet{}
	for _, f := range zr.File {
		name, err := checkName(archive, f.Name)
		if err != nil {
			return nil, err
		}
		if err := cases.add(archive, name); err != nil {
			return nil, err
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, contentErr(archive, "entry %q is a symbolic link", f.Name)
		case mode&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeCharDevice|fs.ModeIrregular) != 0:
			return nil, contentErr(archive, "entry %q is not a regular file", f.Name)
		}
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") {
			members = append(members, member{name: name, dir: true})
			continue
		}
		size := int64(f.UncompressedSize64)
		if f.UncompressedSize64 > uint64(lim.MaxFileSize) {
			return nil, contentErr(archive, "entry %q is %d bytes, over the limit of %d", f.Name, f.UncompressedSize64, lim.MaxFileSize)
		}
		if size > 1<<20 && (f.CompressedSize64 == 0 || size/int64(max(f.CompressedSize64, 1)) > lim.MaxRatio) {
			return nil, contentErr(archive, "entry %q expands %d bytes to %d: a compression bomb", f.Name, f.CompressedSize64, size)
		}
		total += size
		if total > lim.MaxTotal {
			return nil, contentErr(archive, "contents exceed the limit of %d bytes", lim.MaxTotal)
		}
		if _, dup := files[name]; dup {
			return nil, contentErr(archive, "entry %q appears twice", f.Name)
		}
		files[name] = f
		if top, rest, ok := strings.Cut(name, "/"); ok && rest == "METADATA" && strings.HasSuffix(top, ".dist-info") {
			distInfos[top] = true
		}
		members = append(members, member{name: name, size: size, open: f.Open, exec: mode&0o100 != 0})
	}
	if len(distInfos) != 1 {
		return nil, contentErr(archive, "wheel must hold exactly one *.dist-info/METADATA, found %d", len(distInfos))
	}
	var di string
	for k := range distInfos {
		di = k
	}
	info := &Info{DistInfo: di, Base: "."}
	readSmall := func(name string) ([]byte, error) {
		f, ok := files[name]
		if !ok {
			return nil, os.ErrNotExist
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(io.LimitReader(rc, 16<<20))
	}
	meta, err := readSmall(di + "/METADATA")
	if err != nil {
		return nil, contentErr(archive, "reading METADATA: %v", err)
	}
	if info.Metadata, err = distinfo.ParseMetadata(meta); err != nil {
		return nil, contentErr(archive, "%v", err)
	}
	if want := pyname.WheelEscape(info.Metadata.Name); !strings.EqualFold(strings.SplitN(di, "-", 2)[0], want) &&
		pyname.Normalize(strings.SplitN(di, "-", 2)[0]) != info.Metadata.Normalized() {
		return nil, contentErr(archive, "dist-info directory %q does not match METADATA name %q", di, info.Metadata.Name)
	}
	if eps, err := readSmall(di + "/entry_points.txt"); err == nil {
		if info.EntryPoints, err = distinfo.ParseEntryPoints(eps); err != nil {
			return nil, contentErr(archive, "%v", err)
		}
	}
	hashes := map[string]string{}
	if rec, err := readSmall(di + "/RECORD"); err == nil {
		entries, err := distinfo.ParseRecord(rec)
		if err != nil {
			return nil, contentErr(archive, "%v", err)
		}
		for _, e := range entries {
			if algo, digest, ok := strings.Cut(e.Hash, "="); ok && algo == "sha256" {
				hashes[path.Clean(e.Path)] = digest
			}
		}
	}
	err = writeTree(ctx, archive, dest, members, lim, func(name string, sum []byte) error {
		want, ok := hashes[name]
		if !ok {
			return nil
		}
		if got := base64.RawURLEncoding.EncodeToString(sum); got != strings.TrimRight(want, "=") {
			return contentErr(archive, "%s: RECORD says sha256=%s, file has sha256=%s", name, want, got)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// ExtractSdist checks the .tar.gz source distribution at src and unpacks
// it into dest without building anything. It must hold <name>-<version>/PKG-INFO.
func ExtractSdist(ctx context.Context, src, dest string, lim Limits) (*Info, error) {
	archive := filepath.Base(src)
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// The whole stream may expand at most MaxRatio times (gzip bombs),
	// with 1 MiB allowed whatever the ratio, as for wheel entries.
	expand := max(st.Size()*lim.MaxRatio, 1<<20)
	// First pass: check every header and remember the regular files.
	var total int64
	var pkgInfo []byte
	topDirs := map[string]bool{}
	scan := func(visit func(h *tar.Header, name string, r io.Reader) error) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			return contentErr(archive, "not a gzip stream: %v", err)
		}
		defer gz.Close()
		guard := &bombGuard{r: gz, limit: expand}
		tr := tar.NewReader(guard)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if errors.Is(err, errBomb) || guard.n > guard.limit {
				return contentErr(archive, "%d compressed bytes expand past %d: a compression bomb", st.Size(), guard.limit)
			}
			if err != nil {
				return contentErr(archive, "corrupt tar stream: %v", err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeXHeader {
				continue
			}
			name, err := checkName(archive, h.Name)
			if err != nil {
				return err
			}
			if err := visit(h, name, tr); err != nil {
				return err
			}
		}
	}
	count := 0
	cases := caseSet{}
	regular := map[string]bool{}
	err = scan(func(h *tar.Header, name string, r io.Reader) error {
		count++
		if count > lim.MaxEntries {
			return contentErr(archive, "more than %d entries", lim.MaxEntries)
		}
		if err := cases.add(archive, name); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			return nil
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeSymlink, tar.TypeLink:
			return contentErr(archive, "entry %q is a link", h.Name)
		default:
			return contentErr(archive, "entry %q is not a regular file (type %q)", h.Name, h.Typeflag)
		}
		if h.Size > lim.MaxFileSize {
			return contentErr(archive, "entry %q is %d bytes, over the limit of %d", h.Name, h.Size, lim.MaxFileSize)
		}
		total += h.Size
		if total > lim.MaxTotal {
			return contentErr(archive, "contents exceed the limit of %d bytes", lim.MaxTotal)
		}
		if regular[name] {
			return contentErr(archive, "entry %q appears twice", h.Name)
		}
		regular[name] = true
		top, rest, _ := strings.Cut(name, "/")
		topDirs[top] = true
		if rest == "PKG-INFO" {
			b, err := io.ReadAll(io.LimitReader(r, 1<<20))
			if err != nil {
				return contentErr(archive, "reading PKG-INFO: %v", err)
			}
			pkgInfo = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pkgInfo == nil || len(topDirs) != 1 {
		return nil, contentErr(archive, "sdist must hold one top directory with PKG-INFO")
	}
	info := &Info{}
	for k := range topDirs {
		info.Base = k
	}
	if info.Metadata, err = distinfo.ParseMetadata(pkgInfo); err != nil {
		return nil, contentErr(archive, "%v", err)
	}
	// Second pass: write through the same checks, streaming from the tar.
	tmp, root, err := startTree(dest)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		root.Close()
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	err = scan(func(h *tar.Header, name string, r io.Reader) error {
		if h.Typeflag == tar.TypeDir {
			return root.MkdirAll(name, 0o755)
		}
		_, err := writeFile(root, archive, name, h.Size, r, h.Mode&0o100 != 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := finishTree(tmp, dest); err != nil {
		return nil, err
	}
	ok = true
	return info, nil
}

func startTree(dest string) (string, *os.Root, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".tmp-"+filepath.Base(dest)+"-")
	if err != nil {
		return "", nil, err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, root, nil
}

// finishTree renames the finished temporary tree into place. When another
// process won the race, its (identical) tree is kept.
func finishTree(tmp, dest string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		if st, serr := os.Stat(dest); serr == nil && st.IsDir() {
			os.RemoveAll(tmp)
			return nil
		}
		return err
	}
	return nil
}

func writeTree(ctx context.Context, archive, dest string, members []member, lim Limits, check func(name string, sum []byte) error) error {
	tmp, root, err := startTree(dest)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		root.Close()
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	for _, m := range members {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.dir {
			if err := root.MkdirAll(m.name, 0o755); err != nil {
				return contentErr(archive, "creating %q: %v", m.name, err)
			}
			continue
		}
		rc, err := m.open()
		if err != nil {
			return contentErr(archive, "opening %q: %v", m.name, err)
		}
		sum, err := writeFile(root, archive, m.name, m.size, rc, m.exec)
		rc.Close()
		if err != nil {
			return err
		}
		if err := check(m.name, sum); err != nil {
			return err
		}
	}
	if err := finishTree(tmp, dest); err != nil {
		return err
	}
	ok = true
	return nil
}

// writeFile writes exactly size bytes from r to name under root and returns
// their sha256. Modes are normalized: 0644, or 0755 for executables.
func writeFile(root *os.Root, archive, name string, size int64, r io.Reader, exec bool) ([]byte, error) {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, contentErr(archive, "creating %q: %v", dir, err)
		}
	}
	perm := os.FileMode(0o644)
	if exec {
		perm = 0o755
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, contentErr(archive, "entry %q appears twice", name)
		}
		return nil, contentErr(archive, "creating %q: %v", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(r, size+1))
	cerr := out.Close()
	switch {
	case err != nil:
		return nil, contentErr(archive, "reading %q: %v", name, err)
	case n != size:
		return nil, contentErr(archive, "entry %q holds %d bytes, its header says %d", name, n, size)
	case cerr != nil:
		return nil, cerr
	}
	return h.Sum(nil), nil
}

// ParseFilename splits a wheel file name into its distribution name,
// version and compatibility tags (PEP 427), or reports false.
func ParseFilename(name string) (dist, version string, tags []string, ok bool) {
	stem, found := strings.CutSuffix(name, ".whl")
	if !found {
		return "", "", nil, false
	}
	parts := strings.Split(stem, "-")
	switch len(parts) {
	case 5:
		return parts[0], parts[1], parts[2:], true
	case 6: // with a build tag
		return parts[0], parts[1], parts[3:], true
	}
	return "", "", nil, false
}

// ParseSdistFilename splits "<name>-<version>.tar.gz" (PEP 625).
func ParseSdistFilename(name string) (dist, version string, ok bool) {
	stem, found := strings.CutSuffix(name, ".tar.gz")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(stem, "-")
	if i <= 0 || i == len(stem)-1 {
		return "", "", false
	}
	return stem[:i], stem[i+1:], true
}

// Rank reports whether a wheel's tags say it is pure Python for Python 3
// (a none ABI and the any platform), and how preferable it is: 0 for
// py3-none-any, 1 for other pure wheels, 2 for everything else.
func Rank(tags []string) int {
	if len(tags) != 3 {
		return 2
	}
	py, abi, plat := tags[0], tags[1], tags[2]
	if abi != "none" || plat != "any" {
		return 2
	}
	for _, p := range strings.Split(py, ".") {
		if p == "py3" {
			return 0
		}
	}
	return 1
}
