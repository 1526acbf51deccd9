package tomlfile

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Position is a place in a file: 1-based line and column (in bytes), or
// zero when unknown.
type Position struct {
	Line, Column int
}

// Positions maps the key paths of a TOML document to where each key, table
// header or array item is written, from go-toml's parser. A key path is the
// sequence of its keys, with the index of an array-of-tables element or of
// an array item as a decimal part: ("package", "2", "name") is the name of
// the third [[package]]. The first mention of a path wins.
type Positions struct {
	offsets map[string]int
	// arrays holds the paths that are arrays (of tables, or array values),
	// whose decimal parts are indices rather than digit-only keys.
	arrays map[string]bool
	// starts are the offsets at which lines begin.
	starts []int
	data   []byte
}

// Index indexes data. A document the parser rejects yields the positions
// found before the problem; lookups of the rest fall back to an ancestor,
// or to no position.
func Index(data []byte) *Positions {
	p := &Positions{offsets: map[string]int{}, arrays: map[string]bool{}, starts: []int{0}, data: data}
	for i, b := range data {
		if b == '\n' {
			p.starts = append(p.starts, i+1)
		}
	}
	var parser unstable.Parser
	parser.Reset(data)
	var prefix []string
	arrays := map[string]int{} // array-of-tables path -> elements seen
	for parser.NextExpression() {
		n := parser.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, off := p.keyParts(n.Key())
			if len(parts) == 0 {
				continue
			}
			// The last part names this table itself, not an element of an
			// array before it.
			prefix = append(resolve(parts[:len(parts)-1], arrays), parts[len(parts)-1])
			for i := 1; i < len(prefix); i++ {
				p.set(join(prefix[:i]), off) // implicit parents: [a.b] writes a
			}
			if n.Kind == unstable.ArrayTable {
				k := join(prefix)
				p.arrays[k] = true
				p.set(k, off)
				prefix = append(prefix, strconv.Itoa(arrays[k]))
				arrays[k]++
			}
			p.set(join(prefix), off)
		case unstable.KeyValue:
			p.keyValue(prefix, n)
		}
	}
	return p
}

// resolve inserts, after each part naming an array of tables already seen,
// the index of its last element: [pm.env] after [[pm]] means the last pm's env.
func resolve(parts []string, arrays map[string]int) []string {
	var out []string
	for _, part := range parts {
		out = append(out, part)
		if n, ok := arrays[join(out)]; ok && n > 0 {
			out = append(out, strconv.Itoa(n-1))
		}
	}
	return out
}

// keyValue records a key = value line under prefix, and the keys and items
// of its value.
func (p *Positions) keyValue(prefix []string, n *unstable.Node) {
	parts, off := p.keyParts(n.Key())
	path := append(append([]string{}, prefix...), parts...)
	for i := len(prefix) + 1; i <= len(path); i++ {
		p.set(join(path[:i]), off)
	}
	p.value(path, n.Value())
}

func (p *Positions) value(path []string, v *unstable.Node) {
	if v == nil {
		return
	}
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				p.keyValue(path, c)
			}
		}
	case unstable.Array:
		p.arrays[join(path)] = true
		it := v.Children()
		i := 0
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			item := append(append([]string{}, path...), strconv.Itoa(i))
			p.set(join(item), p.offsetOf(c))
			p.value(item, c)
			i++
		}
	}
}

// keyParts returns the decoded parts of a key and the offset of its first
// part, or -1.
func (p *Positions) keyParts(it unstable.Iterator) ([]string, int) {
	var parts []string
	off := -1
	for it.Next() {
		k := it.Node()
		if off < 0 {
			off = int(k.Raw.Offset)
		}
		parts = append(parts, string(k.Data))
	}
	return parts, off
}

// offsetOf returns the offset of a value node: its own range when it has
// one, else its first child's (arrays and inline tables carry no range).
func (p *Positions) offsetOf(n *unstable.Node) int {
	for n != nil {
		if n.Raw.Length > 0 || n.Raw.Offset > 0 {
			return int(n.Raw.Offset)
		}
		if n.Kind == unstable.KeyValue {
			if parts, off := p.keyParts(n.Key()); len(parts) > 0 {
				return off
			}
		}
		n = n.Child()
	}
	return -1
}

func (p *Positions) set(key string, off int) {
	if _, ok := p.offsets[key]; !ok && off >= 0 && off <= len(p.data) {
		p.offsets[key] = off
	}
}

// Offset returns the byte offset at which path is written, and whether it
// is recorded.
func (p *Positions) Offset(path ...string) (int, bool) {
	off, ok := p.offsets[join(path)]
	return off, ok
}

// Find returns the position of path, and whether it is recorded.
func (p *Positions) Find(path ...string) (Position, bool) {
	off, ok := p.Offset(path...)
	if !ok {
		return Position{}, false
	}
	return p.At(off), true
}

// Near returns the position of path, or of its nearest recorded ancestor,
// or the zero Position.
func (p *Positions) Near(path ...string) Position {
	for n := len(path); n > 0; n-- {
		if pos, ok := p.Find(path[:n]...); ok {
			return pos
		}
	}
	return Position{}
}

// At converts a byte offset into the document into a position; an offset
// out of range is the zero Position.
func (p *Positions) At(offset int) Position {
	if offset < 0 || offset > len(p.data) {
		return Position{}
	}
	line := sort.Search(len(p.starts), func(i int) bool { return p.starts[i] > offset })
	return Position{Line: line, Column: offset - p.starts[line-1] + 1}
}

func join(parts []string) string { return strings.Join(parts, "\x00") }

// KeyString renders a key path as a user writes it in the file's terms:
// keys joined by dots, quoted when they are not bare, and array indices in
// brackets ("package[2].name", `target."cfg(unix)".dependencies`).
func KeyString(path ...string) string {
	var b strings.Builder
	for i, part := range path {
		if _, err := strconv.Atoi(part); err == nil && i > 0 && part != "" && part[0] != '-' && part[0] != '+' {
			b.WriteString("[" + part + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		if bare(part) {
			b.WriteString(part)
		} else {
			b.WriteString(strconv.Quote(part))
		}
	}
	return b.String()
}

func bare(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// IsArray reports whether path is an array of tables or an array value:
// what a decimal part after it is the index of, where after anything else
// it is a key made of digits.
func (p *Positions) IsArray(path ...string) bool { return p.arrays[join(path)] }

// Walk calls fn with every recorded key path and its position, in no
// particular order.
func (p *Positions) Walk(fn func(path []string, pos Position)) {
	for k, off := range p.offsets {
		fn(strings.Split(k, "\x00"), p.At(off))
	}
}
