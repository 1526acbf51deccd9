package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps the keys of a TOML document to the lines they are written
// on, from go-toml's parser: a key path is its parts joined by "\x00", with
// the index of an array-of-tables element or array item as a part
// ("package-manager\x000\x00name"). The first mention of a path wins.
type positions struct {
	file  string
	lines map[string]int
	// starts are the offsets at which lines begin.
	starts []int
}

// newPositions indexes data, a document toml.Unmarshal accepted. A
// document the parser rejects anyway yields the positions found before the
// problem; lookups fall back to the file without a line.
func newPositions(file string, data []byte) *positions {
	p := &positions{file: file, lines: map[string]int{}, starts: []int{0}}
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
			parts, line := keyParts(n.Key(), p)
			if len(parts) == 0 {
				continue
			}
			// The last part names this table itself, not an element of an
			// array before it.
			prefix = append(p.resolve(parts[:len(parts)-1], arrays), parts[len(parts)-1])
			if n.Kind == unstable.ArrayTable {
				k := join(prefix)
				p.set(k, line)
				prefix = append(prefix, strconv.Itoa(arrays[k]))
				arrays[k]++
			}
			p.set(join(prefix), line)
		case unstable.KeyValue:
			p.keyValue(prefix, n)
		}
	}
	return p
}

// resolve inserts, after each part naming an array of tables already seen,
// the index of its last element: [pm.env] after [[pm]] means the last pm's env.
func (p *positions) resolve(parts []string, arrays map[string]int) []string {
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
func (p *positions) keyValue(prefix []string, n *unstable.Node) {
	parts, line := keyParts(n.Key(), p)
	path := append(append([]string{}, prefix...), parts...)
	for i := len(prefix) + 1; i <= len(path); i++ {
		p.set(join(path[:i]), line)
	}
	p.value(path, n.Value())
}

func (p *positions) value(path []string, v *unstable.Node) {
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
		it := v.Children()
		i := 0
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			item := append(append([]string{}, path...), strconv.Itoa(i))
			p.set(join(item), p.lineOf(c))
			p.value(item, c)
			i++
		}
	}
}

// keyParts returns the decoded parts of a key and the line of its first part.
func keyParts(it unstable.Iterator, p *positions) ([]string, int) {
	var parts []string
	line := 0
	for it.Next() {
		k := it.Node()
		if line == 0 {
			line = p.line(int(k.Raw.Offset))
		}
		parts = append(parts, string(k.Data))
	}
	return parts, line
}

// lineOf returns the line of a value node: its own range when it has one,
// else its first child's (arrays and inline tables carry no range).
func (p *positions) lineOf(n *unstable.Node) int {
	for n != nil {
		if n.Raw.Length > 0 || n.Raw.Offset > 0 {
			return p.line(int(n.Raw.Offset))
		}
		if n.Kind == unstable.KeyValue {
			parts, line := keyParts(n.Key(), p)
			if len(parts) > 0 {
				return line
			}
		}
		n = n.Child()
	}
	return 0
}

func (p *positions) line(offset int) int {
	return sort.Search(len(p.starts), func(i int) bool { return p.starts[i] > offset })
}

func (p *positions) set(key string, line int) {
	if _, ok := p.lines[key]; !ok && line > 0 {
		p.lines[key] = line
	}
}

// at returns the position of the key path, or of its nearest recorded
// parent, or the file alone.
func (p *positions) at(path ...string) Pos {
	for n := len(path); n > 0; n-- {
		if l, ok := p.lines[join(path[:n])]; ok {
			return Pos{p.file, l}
		}
	}
	return Pos{File: p.file}
}

// item returns the position of element i of the array at path.
func (p *positions) item(i int, path ...string) Pos {
	return p.at(append(path, strconv.Itoa(i))...)
}

func join(parts []string) string { return strings.Join(parts, "\x00") }
