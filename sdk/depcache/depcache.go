// Package depcache persists an answer computed from files, keyed on the
// exact state of those files: for each input, its size, modification time,
// change time, device and inode, or its absence. The modification time alone
// is not enough: `touch -d`, `git checkout` of an old tree and tools that
// preserve times can put back an old mtime on new content of the same size,
// but none of them can put back the change time or reuse the inode. A later
// process checks the inputs with one stat each and reuses the answer without
// reading or parsing any of them. It is how a PM keeps list_deps on the hook
// path down to a few stats and one read. A load does not decode the entry:
// it parses each input's line where it was read and stats it at once,
// allocating next to nothing beyond the read (see check.go).
//
// Within a process, a SharedRead shares one read of an entry, hit or
// miss, among the requests that want it.
//
// An entry is a small text file, named for a hash of its key and ending in
// ".cache", written atomically (temporary file and
// rename), so concurrent processes and a cache directory deleted at any
// moment are both safe: a reader sees a whole entry or none. The value is
// opaque bytes, handed back untouched; a PM typically stores its answer
// already encoded for the wire.
//
// The entry layout is
//
//	symposium-depcache <format> <value length>
//	<key, Go-quoted>
//	<size> <mtime-ns> <ctime-ns> <dev>:<ino> <f|d> <path, Go-quoted>   (one line per input)
//	<empty line>
//	<value bytes>
//
// where size is -1 for an input that did not exist. On systems without change
// times and inode numbers those fields are 0. The value's length in the
// first line makes an entry cut short anywhere (on a line boundary of a
// value that is itself lines, say) unusable rather than a shorter answer.
package depcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// format is bumped whenever the entry layout changes. Callers version what
// their values mean through their keys.
const format = 3

// magic opens every entry; the value's length follows it on the first line.
var magic = []byte("symposium-depcache " + strconv.Itoa(format) + " ")

// Stamp is the observed state of one input path.
type Stamp struct {
	Path string
	// Size is the size in bytes, 0 for a directory, or -1 when the path
	// did not exist.
	Size int64
	// Mod is the modification time in nanoseconds since the epoch.
	Mod int64
	// Change is the inode change time (ctime) in nanoseconds since the
	// epoch, which no ordinary tool can set back; 0 where unknown.
	Change int64
	// Dev and Ino identify the file: a file replaced by rename has a new
	// inode even when its size and times match. 0 where unknown.
	Dev, Ino uint64
	// Dir marks a directory; its Mod changes when entries come and go.
	Dir bool
}

// Take stats path (following symbolic links) and returns its stamp.
func Take(path string) Stamp {
	fi, err, _ := stat(path)
	return stampOf(path, fi, err)
}

// stat is os.Stat that also reports a symbolic link leading nowhere (its
// stamp is an absent path's): unlike an absent path, such a link is not
// created by adding an entry to its directory, so its stamp may not be
// left to the directory's (see Recorder.record). It costs an lstat, and a
// stat more for a link.
func stat(path string) (fi fs.FileInfo, err error, dangling bool) {
	fi, err = os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return fi, err, false
	}
	fi, err = os.Stat(path)
	return fi, err, err != nil
}

func stampOf(path string, fi fs.FileInfo, err error) Stamp {
	if err != nil {
		return Stamp{Path: path, Size: -1}
	}
	s := Stamp{Path: path, Size: fi.Size(), Mod: fi.ModTime().UnixNano(), Dir: fi.IsDir()}
	s.Change, s.Dev, s.Ino = sysStamp(fi)
	if s.Dir {
		s.Size = 0 // directory sizes are not meaningful across file systems
	}
	return s
}

// Fresh reports whether path still has the stamp s.
func (s Stamp) Fresh() bool { return Take(s.Path) == s }

// Cache is a directory of entries. A nil Cache, or one with an empty
// directory, stores nothing and finds nothing.
type Cache struct {
	dir      string
	verified *Verified
}

// New returns a cache keeping its entries in dir, which is created on the
// first Store.
func New(dir string) *Cache { return &Cache{dir: dir} }

func (c *Cache) file(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(h[:12])+".cache")
}

// Load returns the value stored under key if every input it was computed
// from is unchanged. A missing, stale or unreadable entry is a miss.
func (c *Cache) Load(key string) ([]byte, bool) {
	if c == nil || c.dir == "" {
		return nil, false
	}
	var ec entryCheck
	if c.verified != nil {
		ec.found = c.verified.note
	}
	value, _, err := c.readEntry(key, ec)
	if err != nil {
		return nil, false
	}
	return value, true
}

// Store writes value under key with the stamps of the inputs it was computed
// from, atomically. A value read from an input modified or changed within
// RacyWindow is not written: Store returns an error wrapping ErrRecent,
// and the value is computed again next time.
func (c *Cache) Store(key string, stamps []Stamp, value []byte) error {
	if c == nil || c.dir == "" {
		return nil
	}
	if err := racy(stamps, time.Now()); err != nil {
		return err
	}
	data := Entry{Key: key, Stamps: stamps, Value: value}.Encode()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("depcache: %w", err)
	}
	if err := atomicfile.WriteFile(c.file(key), data, 0o644); err != nil {
		return fmt.Errorf("depcache: %w", err)
	}
	return nil
}

// Entry is one cache entry as stored.
type Entry struct {
	Key    string
	Stamps []Stamp
	Value  []byte
}

// Encode returns the stored form of e.
func (e Entry) Encode() []byte {
	b := make([]byte, 0, len(magic)+21+len(e.Key)+3+len(e.Stamps)*128+1+len(e.Value))
	b = append(b, magic...)
	b = strconv.AppendInt(b, int64(len(e.Value)), 10)
	b = append(b, '\n')
	b = strconv.AppendQuote(b, e.Key)
	b = append(b, '\n')
	for _, s := range e.Stamps {
		b = strconv.AppendInt(b, s.Size, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, s.Mod, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, s.Change, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, s.Dev, 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, s.Ino, 10)
		if s.Dir {
			b = append(b, " d "...)
		} else {
			b = append(b, " f "...)
		}
		b = strconv.AppendQuote(b, s.Path)
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, e.Value...)
}

// Decode parses the stored form of an entry, for tools and tests (a load
// checks an entry without decoding it). The value aliases data; the key
// and paths share one allocation.
func Decode(data []byte) (Entry, error) {
	var e Entry
	header, value, err := splitEntry(data)
	if err != nil {
		return e, err
	}
	key, lines, err := splitHeader(string(header))
	if err != nil {
		return e, err
	}
	e.Key = key
	e.Stamps = make([]Stamp, 0, strings.Count(lines, "\n")+1)
	for n := 1; lines != ""; n++ {
		var s Stamp
		if s, lines, err = nextStamp(lines, n); err != nil {
			return e, err
		}
		e.Stamps = append(e.Stamps, s)
	}
	if len(e.Stamps) == 0 {
		e.Stamps = nil
	}
	e.Value = value
	return e, nil
}

func parseStamp(line string) (Stamp, error) {
	var s Stamp
	size, line, _ := strings.Cut(line, " ")
	mod, line, _ := strings.Cut(line, " ")
	change, line, _ := strings.Cut(line, " ")
	id, line, _ := strings.Cut(line, " ")
	kind, path, _ := strings.Cut(line, " ")
	var err error
	if s.Size, err = strconv.ParseInt(size, 10, 64); err != nil || s.Size < -1 {
		return s, fmt.Errorf("bad size %q", size)
	}
	if s.Mod, err = strconv.ParseInt(mod, 10, 64); err != nil {
		return s, fmt.Errorf("bad modification time %q", mod)
	}
	if s.Change, err = strconv.ParseInt(change, 10, 64); err != nil {
		return s, fmt.Errorf("bad change time %q", change)
	}
	dev, ino, ok := strings.Cut(id, ":")
	if !ok {
		return s, fmt.Errorf("bad file identity %q", id)
	}
	if s.Dev, err = strconv.ParseUint(dev, 10, 64); err != nil {
		return s, fmt.Errorf("bad device %q", dev)
	}
	if s.Ino, err = strconv.ParseUint(ino, 10, 64); err != nil {
		return s, fmt.Errorf("bad inode %q", ino)
	}
	switch kind {
	case "d":
		s.Dir = true
	case "f":
	default:
		return s, fmt.Errorf("bad kind %q", kind)
	}
	if s.Path, err = strconv.Unquote(path); err != nil || s.Path == "" {
		return s, fmt.Errorf("bad path %q", path)
	}
	return s, nil
}

// Recorder collects the stamps of the inputs a computation reads, once per
// path, in the order they were first observed. The stamp is taken before the
// input is read, so a change racing with the read makes the entry stale
// rather than wrong. A Recorder is not safe for concurrent use. A nil
// *Recorder records nothing: code shared by cached and uncached paths takes
// one and passes nil where nothing is persisted.
type Recorder struct {
	seen     map[string]int  // path → index in stamps
	dangling map[string]bool // recorded links leading nowhere
	stamps   []Stamp
	tainted  bool
}

// Observe records path's current stamp, unless it was recorded already.
func (r *Recorder) Observe(path string) {
	if r == nil {
		return
	}
	if _, ok := r.seen[path]; ok {
		return
	}
	fi, err, dangling := stat(path)
	r.record(stampOf(path, fi, err), dangling)
}

func (r *Recorder) record(s Stamp, dangling bool) {
	if r == nil {
		return
	}
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	if _, ok := r.seen[s.Path]; ok {
		return
	}
	if s.Size < 0 && !dangling {
		// An absent path whose parent directory was recorded before it
		// needs no stamp of its own: creating it changes the parent's
		// modification time (or, for a parent that was absent or a file,
		// the parent's whole stamp). It halves what a hit validates for
		// packages that lack most optional files. A link leading nowhere
		// is not absent: its target can appear elsewhere, leaving its
		// directory as it was, so it keeps its stamp.
		if _, ok := r.seen[filepath.Dir(s.Path)]; ok {
			r.seen[s.Path] = -1
			return
		}
	}
	if dangling {
		if r.dangling == nil {
			r.dangling = map[string]bool{}
		}
		r.dangling[s.Path] = true
	}
	r.seen[s.Path] = len(r.stamps)
	r.stamps = append(r.stamps, s)
}

// Stat is os.Stat that records path's stamp.
func (r *Recorder) Stat(path string) (fs.FileInfo, error) {
	fi, err, dangling := stat(path)
	r.record(stampOf(path, fi, err), dangling)
	return fi, err
}

// ReadFile records path's stamp, then reads the file as one the user owns
// with pkgfile.ReadUserFile: links are followed, and a FIFO, a device or
// a file over limit bytes is an error naming it (a *pkgfile.Error; an
// absent file's wraps fs.ErrNotExist) instead of a read that blocks or
// never ends. A workspace's manifest takes pkgfile.MaxManifest, its
// lockfile pkgfile.MaxLockfile.
func (r *Recorder) ReadFile(path string, limit int64) ([]byte, error) {
	r.Observe(path)
	return pkgfile.ReadUserFile(path, limit)
}

// OpenFile records path's stamp, then opens the file as ReadFile reads it
// (pkgfile.OpenUserFile), for a caller that reads it a part at a time, a
// large lockfile say: it returns the file and its size when opened, past
// which the caller does not read (io.NewSectionReader).
func (r *Recorder) OpenFile(path string, limit int64) (*os.File, int64, error) {
	r.Observe(path)
	return pkgfile.OpenUserFile(path, limit)
}

// ReadPackageFile records path's stamp, then reads the file as one inside
// a package (an installed dependency's package.json, say) with
// pkgfile.ReadFile in path's directory: besides ReadFile's bounds, the
// file may not be a link leading out of that directory.
func (r *Recorder) ReadPackageFile(path string, limit int64) ([]byte, error) {
	r.Observe(path)
	return pkgfile.ReadFile(filepath.Dir(path), filepath.Base(path), limit)
}

// Stamps returns the recorded stamps.
func (r *Recorder) Stamps() []Stamp {
	if r == nil {
		return nil
	}
	return r.stamps
}

// AppendDeps appends deps to b in the compact form a cached list_deps answer
// takes, one "name version" line each, which decodes several times faster
// than JSON. It reports false, leaving b as it was, when a name or version
// holds a space or a line break, which only hostile input produces; such an
// answer should simply not be cached.
func AppendDeps(b []byte, deps []protocol.PackageID) ([]byte, bool) {
	n := len(b)
	for _, d := range deps {
		if strings.ContainsAny(d.Name, " \r\n") || strings.ContainsAny(d.Version, " \r\n") || d.Name == "" {
			return b[:n], false
		}
		b = append(append(append(append(b, d.Name...), ' '), d.Version...), '\n')
	}
	return b, true
}

// ParseDeps parses what AppendDeps wrote, minting the ids under pm. It never
// returns nil. The names and versions share one allocation.
func ParseDeps(data []byte, pm string) ([]protocol.PackageID, error) {
	text := string(data)
	deps := make([]protocol.PackageID, 0, strings.Count(text, "\n")+1)
	for n := 1; len(text) > 0; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		name, version, ok := strings.Cut(line, " ")
		if !ok || name == "" || strings.Contains(name, "\r") || strings.ContainsAny(version, " \r") {
			return nil, fmt.Errorf("depcache: bad dependency line %d: %q", n, line)
		}
		deps = append(deps, protocol.PackageID{PM: pm, Name: name, Version: version})
	}
	return deps, nil
}
