package gitregistry

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// The persisted index of a commit is one file beside the commit's directory
// (commits/<sha>.index) in three sections, each checked by its own checksum
// before anything in it is used:
//
//	indexMagic
//	8 bytes  length of the head, big-endian
//	head:    uvarint indexFormat, string commit, string problem,
//	         uvarint count of stamps, then per stamp: string dir (relative
//	         to the commit's directory, "" for itself, "../<commit>/..."
//	         in the directory of a commit it shares entries with), uvarint inode,
//	         varint mtime (ns);
//	         uvarint count of flagged entries (those with a problem or a
//	         note), then per entry: string path, string problem, string note,
//	         string home (the commit whose directory holds the entry when
//	         another's does, share.go; else empty);
//	         string answer's registry name, string answer's directory,
//	         uvarint answer's length, 4 bytes answer's CRC-32C, big-endian
//	         (two empty strings, 0 and 0 when no answer is kept)
//	4 bytes  CRC-32C (Castagnoli) of everything before, big-endian
//	answer:  the active_plugins answer (a JSON array of offers) encoded for
//	         that registry name and commit directory, of the length the
//	         head gives, checked by the CRC-32C the head gives
//	entries: string commit, uvarint count of entries, then per entry:
//	         string path, byte kind (1 plugin, 2 skill), string name, string
//	         description, string manifest (wire JSON), string problem, string
//	         note, uvarint count of skill descriptions, then each as a
//	         string, uvarint count of group directories, then each as a string
//	4 bytes  CRC-32C of the entries section, big-endian
//
// where a string is a uvarint length and that many bytes. Decoding copies
// no manifest and no answer: they are slices of the bytes read. The hook
// path reads and checks only the head (readIndexHead, decodeHead), a few
// hundred bytes whatever the registry's size, and has the harness stream
// the answer from the file, checked against the head's CRC-32C of it
// (rawanswer.go). A file that is truncated, corrupted, of another format
// or for another commit is refused (and the index built again), never
// served.

// indexMagic starts every persisted index.
const indexMagic = "symposium-gitregistry-index\n"

// indexSuffix names the persisted index beside a commit's directory.
const indexSuffix = "index"

// maxStamps bounds the directories stamped: the commit's directory and the
// first directories holding entries, in entry order.
const maxStamps = 256

// maxIndexFile bounds the persisted index read back.
const maxIndexFile = 1 << 30

// castagnoli returns the CRC-32C table, built on first use (crc32 keeps
// it) rather than at package initialization: a process that never reads
// or writes an index (--help, --version, a configuration error) does not
// pay the 0.25 ms it takes to build here.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// stamp identifies one directory of a commit's tree as it was when the index
// was written: a directory removed, replaced or emptied of an entry has
// another inode or modification time.
type stamp struct {
	Dir   string
	Inode uint64
	Mtime int64
}

// takeStamps stamps the commit's directory and the directories holding its
// entries, and for the entries another commit's directory holds
// (share.go), that directory (at most maxStamps in all). Commit directories are never written
// after they are published, so the stamps hold until something outside the
// PM changes the directory.
func (idx *index) takeStamps(dir string) ([]stamp, error) {
	dirs := []string{""}
	seen := map[string]bool{"": true}
	for _, e := range idx.Entries {
		if e.Home != "" && !seen["../"+e.Home] && len(dirs) < maxStamps {
			seen["../"+e.Home] = true
			dirs = append(dirs, "../"+e.Home)
		}
		parent := path.Dir(e.loc())
		if parent == "." {
			parent = ""
		}
		if !seen[parent] && len(dirs) < maxStamps {
			seen[parent] = true
			dirs = append(dirs, parent)
		}
	}
	out := make([]stamp, 0, len(dirs))
	for _, d := range dirs {
		s, err := stampOf(dir, d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// stampOf stamps the directory rel below dir.
func stampOf(dir, rel string) (stamp, error) {
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return stamp{}, err
	}
	return stamp{Dir: rel, Inode: inode(fi), Mtime: fi.ModTime().UnixNano()}, nil
}

// stampsHold reports whether every stamp still matches its directory below
// dir: one stat per stamped directory, none per entry.
func stampsHold(dir string, stamps []stamp) bool {
	if len(stamps) == 0 {
		return false
	}
	for _, s := range stamps {
		now, err := stampOf(dir, s.Dir)
		if err != nil || now != s {
			return false
		}
	}
	return true
}

// encodeIndex serializes idx with its stamps.
func encodeIndex(idx *index, stamps []stamp) []byte {
	size := len(indexMagic) + 64 + len(idx.Commit) + len(idx.Problem)
	for _, s := range stamps {
		size += len(s.Dir) + 24
	}
	size += len(idx.Answer.Name) + len(idx.Answer.Dir) + len(idx.Answer.JSON) + 32
	for _, e := range idx.Entries {
		size += len(e.Path) + len(e.Name) + len(e.Description) + len(e.Manifest) + 2*(len(e.Problem)+len(e.Note)+len(e.Path)) + 40
		for _, d := range e.Skills {
			size += len(d) + 4
		}
		for _, d := range e.Groups {
			size += len(d) + 4
		}
	}
	b := make([]byte, 0, size+16)
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b = append(b, indexMagic...)
	b = binary.BigEndian.AppendUint64(b, 0) // the head's length, below
	headStart := len(b)
	b = binary.AppendUvarint(b, indexFormat)
	str(idx.Commit)
	str(idx.Problem)
	b = binary.AppendUvarint(b, uint64(len(stamps)))
	for _, s := range stamps {
		str(s.Dir)
		b = binary.AppendUvarint(b, s.Inode)
		b = binary.AppendVarint(b, s.Mtime)
	}
	flagged := 0
	for _, e := range idx.Entries {
		if e.Problem != "" || e.Note != "" {
			flagged++
		}
	}
	b = binary.AppendUvarint(b, uint64(flagged))
	for _, e := range idx.Entries {
		if e.Problem != "" || e.Note != "" {
			str(e.Path)
			str(e.Problem)
			str(e.Note)
			str(e.Home)
		}
	}
	str(idx.Answer.Name)
	str(idx.Answer.Dir)
	b = binary.AppendUvarint(b, uint64(len(idx.Answer.JSON)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(idx.Answer.JSON, castagnoli()))
	binary.BigEndian.PutUint64(b[len(indexMagic):], uint64(len(b)-headStart))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	b = append(b, idx.Answer.JSON...)
	entriesStart := len(b)
	str(idx.Commit)
	b = binary.AppendUvarint(b, uint64(len(idx.Entries)))
	for _, e := range idx.Entries {
		str(e.Path)
		kind := byte(0)
		switch e.Kind {
		case "plugin":
			kind = 1
		case "skill":
			kind = 2
		}
		b = append(b, kind)
		str(e.Name)
		str(e.Description)
		str(string(e.Manifest))
		str(e.Problem)
		str(e.Note)
		b = binary.AppendUvarint(b, uint64(len(e.Skills)))
		for _, d := range e.Skills {
			str(d)
		}
		b = binary.AppendUvarint(b, uint64(len(e.Groups)))
		for _, d := range e.Groups {
			str(d)
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[entriesStart:], castagnoli()))
}

// errBadIndex reports a persisted index that cannot be used.
var errBadIndex = errors.New("persisted index is damaged")

// indexReader decodes the fields of a persisted index, bounds-checked.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadIndex
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadIndex
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes returns the next string's bytes, a slice of the input.
func (r *indexReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errBadIndex
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *indexReader) str() string { return string(r.bytes()) }

func (r *indexReader) uint32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errBadIndex
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *indexReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errBadIndex
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// count reads a count of items of at least min bytes each, refusing one the
// remaining input cannot hold: it then returns 0, so a damaged count
// allocates nothing.
func (r *indexReader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errBadIndex
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// decodeIndex parses a persisted index of commit. It refuses, with an error
// wrapping errBadIndex, anything but a complete, intact index of this format
// for this commit.
func decodeIndex(data []byte, commit string) (*index, []stamp, error) {
	head, rest, err := splitHead(data)
	if err != nil {
		return nil, nil, err
	}
	idx, stamps, err := parseHead(head, commit)
	if err != nil {
		return nil, nil, err
	}
	if a := &idx.Answer; a.Size > 0 {
		if int64(len(rest)) < a.Size || crc32.Checksum(rest[:a.Size], castagnoli()) != a.Sum {
			return nil, nil, fmt.Errorf("%w: checksum mismatch in the kept answer (truncated or corrupted)", errBadIndex)
		}
		a.JSON, rest = rest[:a.Size:a.Size], rest[a.Size:]
	}
	if len(rest) < 4 || crc32.Checksum(rest[:len(rest)-4], castagnoli()) != binary.BigEndian.Uint32(rest[len(rest)-4:]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch in the entries (truncated or corrupted)", errBadIndex)
	}
	if idx.Entries, err = parseEntries(rest[:len(rest)-4], commit); err != nil {
		return nil, nil, err
	}
	return idx, stamps, nil
}

// decodeHead decodes the head of a persisted index of commit from data,
// the file or its beginning as readIndexHead reads it: the index's problem,
// its flagged entries (Entries holds them, with their path, problem and
// note only), its stamps and where its answer is (Size and Sum, JSON
// nil). The head's checksum is checked; the answer and the entries are
// neither read nor checked.
func decodeHead(data []byte, commit string) (*index, []stamp, error) {
	head, _, err := splitHead(data)
	if err != nil {
		return nil, nil, err
	}
	return parseHead(head, commit)
}

// headLen returns the length of the head a file starting with data
// declares (its magic and length read, not yet checked).
func headLen(data []byte) (int, error) {
	if len(data) < len(indexMagic)+8 || string(data[:len(indexMagic)]) != indexMagic {
		return 0, fmt.Errorf("%w: not an index of this PM", errBadIndex)
	}
	n := binary.BigEndian.Uint64(data[len(indexMagic):])
	if n > maxIndexFile {
		return 0, fmt.Errorf("%w: head of %d bytes", errBadIndex, n)
	}
	return int(n), nil
}

// splitHead checks the magic, the head's length and the head's checksum,
// and returns the head and what follows its checksum.
func splitHead(data []byte) (head, rest []byte, err error) {
	n, err := headLen(data)
	if err != nil {
		return nil, nil, err
	}
	end := len(indexMagic) + 8 + n
	if len(data) < end+4 {
		return nil, nil, fmt.Errorf("%w: truncated head", errBadIndex)
	}
	if crc32.Checksum(data[:end], castagnoli()) != binary.BigEndian.Uint32(data[end:]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch in the head (truncated or corrupted)", errBadIndex)
	}
	return data[len(indexMagic)+8 : end], data[end+4:], nil
}

// parseHead decodes the head of a persisted index, its checksum checked;
// every length and count is checked against what remains. Entries holds
// the flagged entries.
func parseHead(b []byte, commit string) (*index, []stamp, error) {
	r := &indexReader{b: b}
	if f := r.uvarint(); r.err == nil && f != indexFormat {
		return nil, nil, fmt.Errorf("%w: format %d, want %d", errBadIndex, f, indexFormat)
	}
	idx := &index{Format: indexFormat}
	idx.Commit = r.str()
	idx.Problem = r.str()
	if r.err == nil && idx.Commit != commit {
		return nil, nil, fmt.Errorf("%w: index of commit %q, want %s", errBadIndex, idx.Commit, commit)
	}
	stamps := make([]stamp, r.count(3))
	for i := range stamps {
		stamps[i] = stamp{Dir: r.str(), Inode: r.uvarint(), Mtime: r.varint()}
	}
	flagged := make([]entry, r.count(3))
	for i := range flagged {
		flagged[i] = entry{Path: r.str(), Problem: r.str(), Note: r.str(), Home: r.str()}
		if h := flagged[i].Home; r.err == nil && h != "" && !gitcache.IsDirName(h) {
			r.err = fmt.Errorf("%w: entry %q held by %q, not a commit directory's name", errBadIndex, flagged[i].Path, h)
		}
	}
	idx.Entries = flagged
	idx.Answer.Name = r.str()
	idx.Answer.Dir = r.str()
	if n := r.uvarint(); r.err == nil && n > maxIndexFile {
		r.err = fmt.Errorf("%w: kept answer of %d bytes", errBadIndex, n)
	} else {
		idx.Answer.Size = int64(n)
	}
	idx.Answer.Sum = r.uint32()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the head", errBadIndex, len(r.b))
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return idx, stamps, nil
}

// parseEntries decodes the entries section of a persisted index of commit,
// its checksum checked and removed.
func parseEntries(b []byte, commit string) ([]entry, error) {
	r := &indexReader{b: b}
	if c := r.str(); r.err == nil && c != commit {
		return nil, fmt.Errorf("%w: entries of commit %q, want %s", errBadIndex, c, commit)
	}
	entries := make([]entry, r.count(9))
	for i := range entries {
		e := &entries[i]
		e.Path = r.str()
		switch r.byte() {
		case 1:
			e.Kind = "plugin"
		case 2:
			e.Kind = "skill"
		}
		e.Name = r.str()
		e.Description = r.str()
		if m := r.bytes(); len(m) > 0 {
			e.Manifest = json.RawMessage(m)
		}
		e.Problem = r.str()
		e.Note = r.str()
		if n := r.count(1); n > 0 {
			e.Skills = make([]string, n)
			for j := range e.Skills {
				e.Skills[j] = r.str()
			}
		}
		if n := r.count(1); n > 0 {
			e.Groups = make([]string, n)
			for j := range e.Groups {
				e.Groups[j] = r.str()
			}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the last entry", errBadIndex, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return entries, nil
}

// readIndexHead reads the beginning of a persisted index up to the end of
// its head's checksum, with two reads (the length, then the head), bounded
// by the file's size; decodeHead checks it.
func readIndexHead(p string) ([]byte, error) {
	f, size, err := openIndex(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHead(f, size, p)
}

// readHead is readIndexHead from f, open on p, of the given size.
func readHead(f *os.File, size int64, p string) ([]byte, error) {
	pre := make([]byte, len(indexMagic)+8)
	if _, err := f.ReadAt(pre, 0); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errBadIndex, p, err)
	}
	n, err := headLen(pre)
	if err != nil {
		return nil, err
	}
	total := int64(len(pre)) + int64(n) + 4
	if total > size {
		return nil, fmt.Errorf("%w: %s: truncated head", errBadIndex, p)
	}
	data := make([]byte, total)
	copy(data, pre)
	if m, err := f.ReadAt(data[len(pre):], int64(len(pre))); err != nil && m != len(data)-len(pre) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// readIndexFile reads a persisted index with one read, bounded.
func readIndexFile(p string) ([]byte, error) {
	f, size, err := openIndex(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	n, err := f.ReadAt(data, 0)
	if err != nil && n != len(data) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, nil
}

// openIndex opens a persisted index and returns its size, refusing one
// larger than maxIndexFile and anything but a regular file (a FIFO, a
// device or a link to one, which the cache directory can hold if another
// process put it there) with a pkgfile error naming the file: it is opened
// without blocking and checked once open (pkgfile.OpenOwnFile, the cost of
// os.Open and one fstat), so neither the head nor the whole file is read
// from a file past the bound and no FIFO is waited on.
func openIndex(p string) (*os.File, int64, error) {
	return pkgfile.OpenOwnFile(p, maxIndexFile)
}
