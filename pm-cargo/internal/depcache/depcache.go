// Package depcache persists a computed answer keyed on the exact state of the
// files it was computed from: for each input, its size and modification time
// (or its absence). A later process checks the inputs with one stat each and
// reuses the answer without reading or parsing any of them.
//
// Entries are small JSON files written atomically (temp file + rename), so
// concurrent processes and a cache directory deleted at any moment are both
// safe: a reader sees a whole entry or none.
package depcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// formatVersion is bumped whenever the entry layout or the meaning of a
// cached value changes.
const formatVersion = 2

// Stamp is the observed state of one input path.
type Stamp struct {
	Path string `json:"p"`
	// Size is the size in bytes, or -1 when the path did not exist.
	Size int64 `json:"s"`
	// Mod is the modification time in nanoseconds since the epoch.
	Mod int64 `json:"m,omitempty"`
	// Dir marks a directory.
	Dir bool `json:"d,omitempty"`
}

// Take stats path and returns its stamp.
func Take(path string) Stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{Path: path, Size: -1}
	}
	s := Stamp{Path: path, Size: fi.Size(), Mod: fi.ModTime().UnixNano(), Dir: fi.IsDir()}
	if s.Dir {
		s.Size = 0 // directory sizes are not meaningful across filesystems
	}
	return s
}

// Fresh reports whether path still has the stamp s.
func (s Stamp) Fresh() bool { return Take(s.Path) == s }

// header is the first line of an entry file; the value follows it, so a
// reader decodes only the stamps before deciding the entry is fresh, and
// hands the value bytes on untouched.
type header struct {
	Format int    `json:"format"`
	Key    string `json:"key"`
	// Stamps are the inputs the value was computed from.
	Stamps []Stamp `json:"stamps"`
}

// Cache is a directory of entries.
type Cache struct {
	dir string
}

// New returns a cache keeping its entries in dir (created on first store).
func New(dir string) *Cache { return &Cache{dir: dir} }

func (c *Cache) file(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(h[:12])+".json")
}

// Load returns the value stored under key if every input it was computed
// from is unchanged. Any problem reading the entry is a miss.
func (c *Cache) Load(key string) (json.RawMessage, bool) {
	if c == nil || c.dir == "" {
		return nil, false
	}
	data, err := os.ReadFile(c.file(key))
	if err != nil {
		return nil, false
	}
	line, value, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, false
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil || h.Format != formatVersion || h.Key != key {
		return nil, false
	}
	for _, s := range h.Stamps {
		if !s.Fresh() {
			return nil, false
		}
	}
	return value, true
}

// Store writes value under key with the stamps of its inputs, atomically.
func (c *Cache) Store(key string, stamps []Stamp, value any) error {
	if c == nil || c.dir == "" {
		return nil
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("depcache: encoding value: %w", err)
	}
	h, err := json.Marshal(header{Format: formatVersion, Key: key, Stamps: stamps})
	if err != nil {
		return fmt.Errorf("depcache: encoding entry: %w", err)
	}
	data := append(append(h, '\n'), raw...)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("depcache: %w", err)
	}
	f, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("depcache: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp)
		return fmt.Errorf("depcache: writing %s: %v", tmp, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp, c.file(key)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("depcache: %w", err)
	}
	return nil
}

// Recorder collects stamps in observation order, once per path. The stamp
// is taken when the path is first observed, before it is read, so a change
// racing with the read makes the entry stale rather than wrong.
type Recorder struct {
	seen   map[string]bool
	stamps []Stamp
}

// Observe records path's current stamp if it was not recorded yet.
func (r *Recorder) Observe(path string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[path] {
		return
	}
	r.seen[path] = true
	r.stamps = append(r.stamps, Take(path))
}

// Stamps returns the recorded stamps.
func (r *Recorder) Stamps() []Stamp { return r.stamps }
