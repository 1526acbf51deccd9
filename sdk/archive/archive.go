// Package archive unpacks package archives (tar, gzip'd tar and zip) and
// listed trees (a git commit's, through [ExtractEntries]) that may be
// hostile, under one rule set shared by every PM, into an [os.Root].
//
// # Rules
//
// An archive is refused as a whole, with an [*Error] naming the archive,
// the entry and the cause, when any entry:
//   - has an empty name, a NUL byte, a backslash, an absolute path (a
//     leading "/" or a drive letter) or a ".." component;
//   - has a name component over 255 bytes or a path over 4095 bytes;
//   - is a symbolic or hard link: links are refused outright, wherever
//     they point, as every PM of this project did before this package
//     (a listed tree may instead keep the symbolic links that resolve to a
//     regular file inside the root, [KeepLinksInside]);
//   - is a device, a FIFO, a socket or of a type this package does not know;
//   - is a sparse tar entry (GNU's type, or PAX GNU.sparse records), whose
//     holes archive/tar fills with zeros it does not read from the archive;
//   - lands on a path another entry already took: the same name twice, a
//     file where another entry needs a directory (or the reverse), or two
//     names differing only in case (which collide on macOS and Windows);
//   - lies outside [Options.Top] when the caller requires one top directory.
//
// # Caps
//
// The caps are counted on the decompressed bytes as they are produced and
// written, never only on what the archive's headers declare (declared sizes
// are also checked first, so an honest bomb is refused before anything is
// written). With [DefaultLimits]:
//   - at most 1 GiB (1,073,741,824 bytes) decompressed in all;
//   - at most 100,000 entries;
//   - at most 100 × the archive's size + 8 MiB decompressed (the
//     compression-ratio cap over the whole archive): a 1 MB archive can
//     never write more than about 108 MiB, a 10 MiB one about 1,008 MiB.
//     The 8 MiB allowance lets small archives of very compressible text
//     through; it is kept under 16 MiB so that a 16 KiB archive of 16 MiB
//     of zeros (a bomb the PMs' test corpora hold) is still refused;
//   - for gzip'd tar, at most 1 MiB of data after the tar archive's end;
//   - when [Limits.MaxFile] is set, at most that many bytes a file.
//
// A listed tree has no compressed size: its caps are absolute (MaxBytes
// on the files' bytes, MaxEntries, MaxFile), with no ratio cap.
//
// For a tar stream "decompressed" counts every byte of the tar stream
// (headers and padding included); for zip, every byte of every entry's data.
//
// # Failure
//
// On any failure the extraction removes everything it created under the
// root, so a refused archive leaves nothing behind. Failures of the archive
// are [*Error]; failures writing (a full disk, a directory removed
// underneath) are returned as they are, wrapped with the path written, so
// a PM reports them as resource failures and not as bad content.
//
// # Why not google/safearchive
//
// github.com/google/safearchive offers drop-in tar and zip readers that
// sanitize hostile names. It was not adopted: its module was not available
// from the module proxy this project builds from (checked when this
// package was written), and its default is to rewrite or skip hostile
// entries, where PMs here must refuse the whole archive and say why;
// the path rules above are short, and writing through os.Root already
// stops any escape the rules might miss.
package archive

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits caps what one archive may expand to.
type Limits struct {
	// MaxBytes caps the total decompressed size.
	MaxBytes int64
	// MaxEntries caps the number of entries.
	MaxEntries int
	// Ratio and Allowance cap the decompressed size relative to the
	// archive's: at most Ratio × archive size + Allowance bytes. Ratio 0
	// disables this cap.
	Ratio     int64
	Allowance int64
	// MaxFile caps one file's size (declared and written); 0 means no cap
	// beyond the others.
	MaxFile int64
}

// DefaultLimits are generous for real packages and stop decompression
// bombs: 1 GiB in all, 100,000 entries, 100 × the archive's size + 8 MiB.
var DefaultLimits = Limits{MaxBytes: 1 << 30, MaxEntries: 100_000, Ratio: 100, Allowance: 8 << 20}

// maxTrailing caps the decompressed data allowed after a tar archive's end
// (tar tools pad to a 10 KiB record at most).
const maxTrailing = 1 << 20

// Filesystem name limits (Linux's NAME_MAX and PATH_MAX): longer entry
// names are refused as content, not met as write failures.
const (
	maxNameBytes = 255
	maxPathBytes = 4095
)

// Options says how to unpack one archive.
type Options struct {
	// Name names the archive in errors (a file name or a package id).
	Name string
	// Limits are the caps; the zero value means DefaultLimits.
	Limits Limits
	// Top, when set, is the one top-level directory every entry must lie
	// in (as cargo's "<name>-<version>").
	Top string
	// Strip removes that many leading components from every entry name
	// before it is written (npm's "package/"). Entries left with no name
	// (a file at the top level) are checked and counted, then dropped.
	Strip int
	// OnFile, when set, is called after each regular file is written with
	// its path (as written, slash-separated) and the sha256 of its content;
	// an error stops the extraction.
	OnFile func(name string, sha256 [32]byte) error
	// BeforeWrite, when set, is called before every write to a regular
	// file with the file's path (as written, slash-separated) and the
	// number of bytes about to be written; an error it returns fails that
	// write as the file system would (tests simulate a full disk with it).
	BeforeWrite func(name string, n int) error
	// Links says what becomes of symbolic links; only [ExtractEntries]
	// can keep them (archives' links are always refused).
	Links LinkPolicy
	// OnDrop, when set, is told of every entry [ExtractEntries] leaves
	// out without refusing the tree (a symbolic link that does not stay
	// inside the root), with the reason, so that nothing is dropped
	// silently.
	OnDrop func(name, reason string)
}

func (o *Options) limits() Limits {
	if o.Limits == (Limits{}) {
		return DefaultLimits
	}
	return o.Limits
}

// Error reports an archive refused for its content: corrupt, unsafe or
// over a cap. It is the one error type for bad archive content; PMs answer
// it with invalid-content (-32014).
type Error struct {
	// Archive names the archive (Options.Name), or "".
	Archive string
	// Entry is the entry's name as the archive spells it, or "" when the
	// problem is the archive as a whole.
	Entry string
	// Reason says what is wrong; it reads after "entry <name>" when Entry
	// is set.
	Reason string
	// Err is the underlying cause (a decoder's error), or nil.
	Err error
}

// Error describes the problem with the archive, entry and reason.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Archive != "" {
		b.WriteString(e.Archive)
		b.WriteString(": ")
	}
	if e.Entry != "" {
		fmt.Fprintf(&b, "entry %q ", e.Entry)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// IsContent reports whether err is (or wraps) an *Error: a problem of the
// archive's content rather than of the machine.
func IsContent(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// kind is what an entry is, as far as the rules care.
type kind int

const (
	kindFile kind = iota
	kindDir
)

// extraction is the state of one archive being unpacked.
type extraction struct {
	opts    Options
	lim     Limits
	root    *os.Root // nil: check only
	created []string // top-level names this extraction created, in order
	made    map[string]bool
	paths   pathSet
	entries int
	// strict is set for listed entries (ExtractEntries): every directory
	// is listed, so one the file system already holds is a collision.
	strict bool
	// create opens a new file for writing; tests replace it to inject
	// write failures. nil means the root's OpenFile.
	create func(rel string, mode os.FileMode) (io.WriteCloser, error)
}

func newExtraction(root *os.Root, opts Options) *extraction {
	return &extraction{opts: opts, lim: opts.limits(), root: root, made: map[string]bool{}, paths: newPathSet()}
}

// fail builds an *Error for the entry called raw ("" for the archive).
func (x *extraction) fail(raw, format string, args ...any) *Error {
	return &Error{Archive: x.opts.Name, Entry: raw, Reason: fmt.Sprintf(format, args...)}
}

// budget is the decompressed-size cap for an archive of size bytes.
func (x *extraction) budget(size int64) int64 { return x.lim.Budget(size) }

// Budget is the most an archive of size bytes may expand to under l: the
// lesser of MaxBytes and Ratio × size + Allowance (MaxBytes alone when the
// ratio cap is off or the size is unknown, -1). No extraction writes more.
func (l Limits) Budget(size int64) int64 {
	b := l.MaxBytes
	if l.Ratio > 0 && size >= 0 {
		if r := l.Ratio*size + l.Allowance; r < b {
			b = r
		}
	}
	return b
}

// count counts one entry against the entry cap.
func (x *extraction) count() error {
	x.entries++
	if x.lim.MaxEntries > 0 && x.entries > x.lim.MaxEntries {
		return x.fail("", "has more than %d entries, over the cap", x.lim.MaxEntries)
	}
	return nil
}

// target checks the entry called raw of kind k and returns where it is
// written (slash-separated, relative to the root), or "" when it is
// dropped (the top directory itself, or a top-level file under Strip).
func (x *extraction) target(raw string, k kind) (string, error) {
	if err := x.checkName(raw); err != nil {
		return "", err
	}
	return x.place(raw, k)
}

// checkName applies the name rules to the entry called raw.
func (x *extraction) checkName(raw string) error {
	if raw == "" {
		return x.fail("", "has an entry with an empty name")
	}
	if strings.ContainsRune(raw, 0) {
		return x.fail(raw, "has a NUL byte in its name")
	}
	slashed := strings.ReplaceAll(raw, `\`, "/")
	if strings.HasPrefix(slashed, "/") || (len(slashed) > 1 && slashed[1] == ':') {
		return x.fail(raw, "has an absolute path")
	}
	for _, c := range strings.Split(slashed, "/") {
		if c == ".." {
			return x.fail(raw, "escapes the root (a \"..\" component)")
		}
		if len(c) > maxNameBytes {
			return x.fail(raw, "has a name component over %d bytes", maxNameBytes)
		}
	}
	if slashed != raw {
		return x.fail(raw, "has a backslash in its name, a path separator on Windows")
	}
	if len(raw) > maxPathBytes {
		return x.fail(raw, "has a path over %d bytes", maxPathBytes)
	}
	return nil
}

// place returns where the entry called raw (already checked) of kind k is
// written, claiming that path, or "" when it is dropped.
func (x *extraction) place(raw string, k kind) (string, error) {
	clean := path.Clean(raw)
	if clean == "." {
		return "", nil
	}
	parts := strings.Split(clean, "/")
	if x.opts.Top != "" && parts[0] != x.opts.Top {
		return "", x.fail(raw, "is not under %q, the archive's one top directory", x.opts.Top+"/")
	}
	if len(parts) <= x.opts.Strip {
		return "", nil
	}
	rel := strings.Join(parts[x.opts.Strip:], "/")
	if err := x.paths.add(x, raw, rel, k == kindDir); err != nil {
		return "", err
	}
	return rel, nil
}

// note records that rel's top-level component now exists because of this
// extraction, unless it existed before.
func (x *extraction) note(rel string) {
	top, _, _ := strings.Cut(rel, "/")
	if x.made[top] {
		return
	}
	x.made[top] = true
	if _, err := x.root.Lstat(top); err == nil {
		return // there before us: not ours to remove
	}
	x.created = append(x.created, top)
}

// mkdir creates the directory rel and its parents.
func (x *extraction) mkdir(rel string) error {
	if x.root == nil {
		return nil
	}
	x.note(rel)
	if err := x.root.MkdirAll(rel, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", x.where(rel), err)
	}
	return nil
}

// where is rel's full path, for errors.
func (x *extraction) where(rel string) string {
	return filepath.Join(x.root.Name(), filepath.FromSlash(rel))
}

// write writes the file rel from r, which yields its content (read errors
// from r are the archive's and already *Error). exec keeps it executable.
func (x *extraction) write(rel string, r io.Reader, exec bool) error {
	if x.root == nil {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if d := path.Dir(rel); d != "." {
		if err := x.mkdir(d); err != nil {
			return err
		}
	}
	x.note(rel)
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	var f io.WriteCloser
	var err error
	if x.create != nil {
		f, err = x.create(rel, mode)
	} else {
		f, err = x.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	}
	if err != nil {
		if x.strict && errors.Is(err, fs.ErrExist) {
			return x.collides(rel)
		}
		return fmt.Errorf("creating %s: %w", x.where(rel), err)
	}
	var h hash.Hash
	var w io.Writer = f
	if x.opts.BeforeWrite != nil {
		w = hookWriter{w: f, name: rel, hook: x.opts.BeforeWrite}
	}
	if x.opts.OnFile != nil {
		h = sha256.New()
		w = io.MultiWriter(w, h)
	}
	_, err = io.Copy(w, r)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing %s: %w", x.where(rel), cerr)
	}
	if err != nil {
		var se *SourceError
		if IsContent(err) || errors.As(err, &se) {
			return err
		}
		// io.Copy reports the writer's failures unwrapped.
		return fmt.Errorf("writing %s: %w", x.where(rel), err)
	}
	if x.opts.OnFile != nil {
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		return x.opts.OnFile(rel, sum)
	}
	return nil
}

// collides refuses rel, which the file system already holds although no
// other entry claimed it: a name it takes for another (Unicode
// normalization, or case on a case-insensitive one).
func (x *extraction) collides(rel string) *Error {
	return x.fail(rel, "collides with another name on this file system (one it takes for the same, as with Unicode normalization)")
}

// hookWriter calls Options.BeforeWrite before each write.
type hookWriter struct {
	w    io.Writer
	name string
	hook func(name string, n int) error
}

func (h hookWriter) Write(p []byte) (int, error) {
	if err := h.hook(h.name, len(p)); err != nil {
		return 0, err
	}
	return h.w.Write(p)
}

// cleanup removes what a failed extraction created.
func (x *extraction) cleanup() {
	if x.root == nil {
		return
	}
	for i := len(x.created) - 1; i >= 0; i-- {
		_ = x.root.RemoveAll(x.created[i])
	}
}

// pathSet records the paths an archive has written (and the directories
// they imply) so that entries colliding on one path are refused.
type pathSet struct {
	isDir map[string]bool   // path → whether it is a directory
	fold  map[string]string // lower-cased path → the path as first spelled
}

func newPathSet() pathSet {
	return pathSet{isDir: map[string]bool{}, fold: map[string]string{}}
}

// add claims rel for the entry called raw, as a directory or a file, with
// every parent as a directory. A directory may be listed twice; anything
// else on a path already claimed is refused.
func (s pathSet) add(x *extraction, raw, rel string, dir bool) error {
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			if err := s.claim(x, raw, rel[:i], true); err != nil {
				return err
			}
		}
	}
	return s.claim(x, raw, rel, dir)
}

func (s pathSet) claim(x *extraction, raw, p string, dir bool) error {
	if wasDir, ok := s.isDir[p]; ok {
		switch {
		case wasDir && dir:
			return nil
		case wasDir:
			return x.fail(raw, "is a file where the archive already has the directory %q", p)
		case dir:
			return x.fail(raw, "needs %q to be a directory, but the archive already has a file there", p)
		default:
			return x.fail(raw, "appears more than once in the archive (as %q)", p)
		}
	}
	low := strings.ToLower(p)
	if other, ok := s.fold[low]; ok {
		return x.fail(raw, "collides with %q: names differing only in case cannot both be unpacked on every system", other)
	}
	s.isDir[p] = dir
	s.fold[low] = p
	return nil
}
