package packagelock

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// scanLock decodes a lockfile the way Parse's typed pass does, for the
// shape npm writes, in one pass over the bytes: the "packages" entries go
// straight into Package values, every other value is checked and skipped
// without being built. It reports false on anything outside that shape
// (an escaped or differently cased key, a field of another type, a null
// entry, invalid UTF-8, very deep nesting, a syntax error); Parse then
// decodes the document with encoding/json, whose answer is the reference
// (FuzzScanMatchesDecode holds the two to the same result).
func scanLock(data []byte) (lockfileVersion json.RawMessage, packages map[string]Package, deps json.RawMessage, ok bool) {
	// The strings kept are copied into a few large chunks (an arena), not
	// an allocation each, nor a copy of the whole document: most of a
	// lockfile (dependency maps, engines, licenses) is skipped.
	s := scanner{data: data}
	s.space()
	if !s.byte('{') {
		return nil, nil, nil, false
	}
	s.space()
	if s.byte('}') {
		return nil, nil, nil, s.end()
	}
	seenPackages := false
	for {
		key, ok := s.plainString()
		if !ok || !s.colon() || !isASCII(key) {
			return nil, nil, nil, false
		}
		switch {
		case key == "lockfileVersion":
			start := s.i
			if !s.skip(0) {
				return nil, nil, nil, false
			}
			lockfileVersion = json.RawMessage(data[start:s.i])
		case key == "packages":
			if seenPackages {
				return nil, nil, nil, false // encoding/json merges repeated maps
			}
			seenPackages = true
			if s.peek() == 'n' {
				if !s.literal("null") {
					return nil, nil, nil, false
				}
				packages = nil
				break
			}
			if packages, ok = s.packages(); !ok {
				return nil, nil, nil, false
			}
		case key == "dependencies":
			start := s.i
			if !s.skip(0) {
				return nil, nil, nil, false
			}
			deps = json.RawMessage(data[start:s.i])
		case foldsTo(key, "lockfileVersion", "packages", "dependencies"):
			return nil, nil, nil, false // encoding/json matches keys case-insensitively
		default:
			if !s.skip(0) {
				return nil, nil, nil, false
			}
		}
		s.space()
		if s.byte(',') {
			s.space()
			continue
		}
		if s.byte('}') {
			return lockfileVersion, packages, deps, s.end()
		}
		return nil, nil, nil, false
	}
}

// foldsTo reports whether key equals one of names ignoring case, but
// none exactly.
func foldsTo[K string | []byte](key K, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && string(key) != n && asciiFold(key, n) {
			return true
		}
	}
	return false
}

func isASCII[S string | []byte](s S) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func asciiFold[S string | []byte](a S, b string) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// packageFields are the keys of Package, for the case-folding check.
var packageFields = []string{"name", "version", "resolved", "integrity", "link", "dev", "optional"}

type scanner struct {
	data []byte
	i    int
	// arena is the chunk the kept strings are copied into; a chunk is only
	// ever appended to, so the strings made from it never change.
	arena []byte
}

// arenaChunk is the size of one chunk of kept strings: large enough that a
// 50,000-package lockfile needs a few hundred, small enough that a small
// lockfile wastes little.
const arenaChunk = 64 << 10

// keep returns b as a string copied into the arena.
func (s *scanner) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaChunk/4 {
		return string(b) // a long string gets its own allocation
	}
	if cap(s.arena)-len(s.arena) < len(b) {
		s.arena = make([]byte, 0, arenaChunk)
	}
	start := len(s.arena)
	s.arena = append(s.arena, b...)
	// The bytes at start are never written again (the chunk is only
	// appended to, and replaced when full), so the string stays valid.
	return unsafe.String(&s.arena[start], len(b))
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) colon() bool {
	s.space()
	if !s.byte(':') {
		return false
	}
	s.space()
	return true
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.data)
}

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.i >= len(lit) && string(s.data[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// plainString reads a string without escapes, of valid UTF-8 and without
// control characters; anything else is not plain.
func (s *scanner) plainString() (string, bool) {
	raw, ok := s.plainBytes()
	if !ok {
		return "", false
	}
	return s.keep(raw), true
}

// plainBytes is plainString without keeping the string: its bytes in data.
func (s *scanner) plainBytes() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	// The common case, printable ASCII up to the closing quote, in a
	// tight loop; the loop below handles the rest from where it stops.
	for s.i < len(s.data) && plainASCII[s.data[s.i]] {
		s.i++
	}
	ascii := true
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			raw := s.data[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(raw) {
				return nil, false
			}
			return raw, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// plainASCII holds the bytes a plain string holds as they are: printable
// ASCII but the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// stringValue reads a string, decoding escapes through encoding/json.
func (s *scanner) stringValue() (string, bool) {
	start := s.i
	if v, ok := s.plainString(); ok {
		return v, true
	}
	s.i = start
	if !s.skipString() {
		return "", false
	}
	var v string
	if json.Unmarshal(s.data[start:s.i], &v) != nil {
		return "", false
	}
	return v, true
}

// skipString checks and skips a string, escapes included.
func (s *scanner) skipString() bool {
	if !s.byte('"') {
		return false
	}
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if !isHex(s.peek()) {
						return false
					}
					s.i++
				}
			default:
				return false
			}
			continue
		}
		s.i++
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber checks and skips a number by JSON's grammar.
func (s *scanner) skipNumber() bool {
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.peek() >= '1' && s.peek() <= '9':
		for s.peek() >= '0' && s.peek() <= '9' {
			s.i++
		}
	default:
		return false
	}
	if s.byte('.') {
		if !(s.peek() >= '0' && s.peek() <= '9') {
			return false
		}
		for s.peek() >= '0' && s.peek() <= '9' {
			s.i++
		}
	}
	if s.peek() == 'e' || s.peek() == 'E' {
		s.i++
		if !s.byte('+') {
			s.byte('-')
		}
		if !(s.peek() >= '0' && s.peek() <= '9') {
			return false
		}
		for s.peek() >= '0' && s.peek() <= '9' {
			s.i++
		}
	}
	return true
}

// maxScanDepth bounds the nesting skip follows; deeper documents are left
// to encoding/json.
const maxScanDepth = 512

// skip checks and skips one value.
func (s *scanner) skip(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '"':
		return s.skipString()
	case c == '{':
		s.i++
		s.space()
		if s.byte('}') {
			return true
		}
		for {
			if !s.skipString() || !s.colon() || !s.skip(depth+1) {
				return false
			}
			s.space()
			if s.byte(',') {
				s.space()
				continue
			}
			return s.byte('}')
		}
	case c == '[':
		s.i++
		s.space()
		if s.byte(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.byte(',') {
				s.space()
				continue
			}
			return s.byte(']')
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.skipNumber()
	}
}

// packages reads the "packages" object, made at its size (sizedMap).
func (s *scanner) packages() (map[string]Package, bool) {
	if !s.byte('{') {
		return nil, false
	}
	m := sizedMap[Package]{start: s.i}
	s.space()
	if s.byte('}') {
		return map[string]Package{}, true
	}
	for {
		key, ok := s.stringValue()
		if !ok || !s.colon() {
			return nil, false
		}
		p, ok := s.pkg()
		if !ok {
			return nil, false
		}
		m.set(s, key, p)
		s.space()
		if s.byte(',') {
			s.space()
			continue
		}
		if s.byte('}') {
			return m.done(), true
		}
		return nil, false
	}
}

// sizedMap builds a large map read entry by entry, as packages and the
// top of a v1 tree do: its first sampleEntries entries are held in a
// slice; the map is then made once, at the size the bytes they took
// predict for the rest of the document (sizeHint), instead of grown and
// rehashed a dozen times on a large lockfile. The entries go into the map
// in order: a repeated key's last entry wins, as it would have.
type sizedMap[V any] struct {
	out    map[string]V
	sample []sampled[V]
	start  int // where the map's first entry starts in the scanner's data
}

// sampled is one entry of the sample a sizedMap holds before it makes its
// map; del stands for the key's removal.
type sampled[V any] struct {
	key string
	v   V
	del bool
}

// set records key's entry, read up to s's position.
func (m *sizedMap[V]) set(s *scanner, key string, v V) {
	m.put(s, sampled[V]{key: key, v: v})
}

// delete records key's removal, read up to s's position.
func (m *sizedMap[V]) delete(s *scanner, key string) {
	m.put(s, sampled[V]{key: key, del: true})
}

// put records e: into the sample until it is full, then into the map.
func (m *sizedMap[V]) put(s *scanner, e sampled[V]) {
	if m.out == nil {
		if m.sample = append(m.sample, e); len(m.sample) < sampleEntries {
			return
		}
		m.fill(sizeHint(len(m.sample), s.i-m.start, len(s.data)-s.i))
		return
	}
	if e.del {
		delete(m.out, e.key)
	} else {
		m.out[e.key] = e.v
	}
}

// fill makes the map, for hint entries, and moves the sample into it.
func (m *sizedMap[V]) fill(hint int) {
	m.out = make(map[string]V, hint)
	for _, e := range m.sample {
		if e.del {
			delete(m.out, e.key)
		} else {
			m.out[e.key] = e.v
		}
	}
	m.sample = nil
}

// done returns the map, every entry read.
func (m *sizedMap[V]) done() map[string]V {
	if m.out == nil {
		m.fill(len(m.sample))
	}
	return m.out
}

// sampleEntries is how many entries a sizedMap reads before sizing its map.
const sampleEntries = 64

// sizeHint predicts the number of entries of a map whose first n entries
// took used bytes, with left bytes of the document after them: n plus as
// many again per used bytes in what is left. What is left may hold
// something else after the map (the v1 tree of a v2 lockfile, about as
// large again, or anything a hostile file holds): the map is then made
// larger than it needed, but never for more than maxHint entries; past
// that it grows as it fills.
func sizeHint(n, used, left int) int {
	if used <= 0 {
		return n
	}
	return n + min(left/used*n+left%used*n/used, maxHint)
}

// maxHint bounds the entries a map is made for ahead of reading them: a
// few megabytes of map whatever the document.
const maxHint = 1 << 16

// pkg reads one entry; a repeated key's entry replaces the earlier one,
// as encoding/json decodes each map element from zero.
func (s *scanner) pkg() (Package, bool) {
	var p Package
	if !s.byte('{') {
		return p, false // null or another type: left to encoding/json
	}
	s.space()
	if s.byte('}') {
		return p, true
	}
	for {
		key, ok := s.plainBytes()
		if !ok || !s.colon() || !isASCII(key) {
			return p, false // non-ASCII keys may fold to a field's name
		}
		var str *string
		var flag *bool
		switch string(key) {
		case "name":
			str = &p.Name
		case "version":
			str = &p.Version
		case "resolved":
			str = &p.Resolved
		case "integrity":
			str = &p.Integrity
		case "link":
			flag = &p.Link
		case "dev":
			flag = &p.Dev
		case "optional":
			flag = &p.Optional
		default:
			if foldsTo(key, packageFields...) || !s.skip(1) {
				return p, false
			}
		}
		switch {
		case str != nil:
			if s.peek() != '"' {
				return p, false
			}
			v, ok := s.stringValue()
			if !ok {
				return p, false
			}
			*str = v
		case flag != nil:
			switch {
			case s.literal("true"):
				*flag = true
			case s.literal("false"):
				*flag = false
			default:
				return p, false
			}
		}
		s.space()
		if s.byte(',') {
			s.space()
			continue
		}
		return p, s.byte('}')
	}
}

// scanV1 reads a v1 "dependencies" tree with the object semantics of
// JSON.parse, which npm reads it with: a member is taken only under its
// exact name, escapes decoded ("Version" is not "version", "\u0076ersion"
// is), and a repeated name's last value replaces the earlier one whole (a
// second "dependencies" of an entry is its tree, not merged into the
// first; a repeated entry is the last one). Within that, what npm writes
// is kept and the rest skipped: an entry that is not an object is left
// out (a null one is kept empty, as a null "packages" entry is), and a
// field of another type than npm writes is read as absent. ok is false
// when raw is not an object.
//
// raw must be a valid JSON value, as Parse hands it over (checked by
// scanLock's skip or by encoding/json): values are skipped by their
// brackets, and nesting is followed to any depth.
func scanV1(raw []byte) (map[string]V1Dep, bool) {
	s := scanner{data: raw}
	s.space()
	if s.peek() != '{' {
		return nil, false
	}
	return s.v1Deps(true)
}

// v1Deps reads one "dependencies" object, name → entry; the top of the
// tree, which holds most of a lockfile's entries, is made at its size
// (sizedMap), the rest grown as they fill (a nested map is small, and the
// bytes after it do not predict its size).
func (s *scanner) v1Deps(top bool) (map[string]V1Dep, bool) {
	if !s.byte('{') {
		return nil, false
	}
	m := sizedMap[V1Dep]{start: s.i}
	if !top {
		m.out = map[string]V1Dep{}
	}
	s.space()
	if s.byte('}') {
		return m.done(), true
	}
	for {
		name, ok := s.stringValue()
		if !ok || !s.colon() {
			return nil, false
		}
		switch s.peek() {
		case '{':
			d, ok := s.v1Dep()
			if !ok {
				return nil, false
			}
			m.set(s, name, d)
		case 'n':
			if !s.literal("null") {
				return nil, false
			}
			m.set(s, name, V1Dep{})
		default:
			if !s.skipValid() {
				return nil, false
			}
			m.delete(s, name) // the last value is no entry
		}
		s.space()
		if s.byte(',') {
			s.space()
			continue
		}
		if s.byte('}') {
			return m.done(), true
		}
		return nil, false
	}
}

// v1Dep reads one entry of a v1 tree, an object.
func (s *scanner) v1Dep() (V1Dep, bool) {
	var d V1Dep
	s.byte('{')
	s.space()
	if s.byte('}') {
		return d, true
	}
	for {
		key, ok := s.memberName()
		if !ok || !s.colon() {
			return d, false
		}
		switch string(key) {
		case "version":
			d.Version, ok = s.v1String()
		case "resolved":
			d.Resolved, ok = s.v1String()
		case "integrity":
			d.Integrity, ok = s.v1String()
		case "dev":
			d.Dev, ok = s.v1Flag()
		case "optional":
			d.Optional, ok = s.v1Flag()
		case "dependencies":
			d.Dependencies = nil
			if s.peek() == '{' {
				d.Dependencies, ok = s.v1Deps(false)
			} else {
				ok = s.skipValid()
			}
		default:
			ok = s.skipValid()
		}
		if !ok {
			return d, false
		}
		s.space()
		if s.byte(',') {
			s.space()
			continue
		}
		return d, s.byte('}')
	}
}

// memberName reads a member's name as JSON.parse decodes it, for comparing
// with the names of fields: its bytes in data when it is written plainly,
// else decoded (escapes resolved).
func (s *scanner) memberName() ([]byte, bool) {
	start := s.i
	if raw, ok := s.plainBytes(); ok {
		return raw, true
	}
	s.i = start
	if !s.skipString() {
		return nil, false
	}
	var name string
	if json.Unmarshal(s.data[start:s.i], &name) != nil {
		return nil, false
	}
	return []byte(name), true
}

// v1String reads a string field: its value, or "" for a value of another
// type, skipped.
func (s *scanner) v1String() (string, bool) {
	if s.peek() == '"' {
		return s.stringValue()
	}
	return "", s.skipValid()
}

// v1Flag reads a boolean field: its value, or false for a value of another
// type, skipped.
func (s *scanner) v1Flag() (bool, bool) {
	switch {
	case s.literal("true"):
		return true, true
	case s.literal("false"):
		return false, true
	}
	return false, s.skipValid()
}

// skipValid skips one value of a document known to be valid JSON, at any
// depth: strings are skipped by their quotes, containers by their
// brackets, anything else up to the next delimiter.
func (s *scanner) skipValid() bool {
	switch s.peek() {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r', ',', ']', '}':
			return s.i > start
		}
		s.i++
	}
	return s.i > start
}
