package manifest

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// scanTOMLLines maps field paths (as in Problem.Field: `hooks[1].command`,
// `subcommand.greet.description`) to the 1-based line where each key, table
// header or array element starts, from tomlfile's index of the document.
// tomlfile writes an array position as a decimal part, as a digit-only key
// is written; a part is rendered as an index (`[42]`) only when what it
// follows is an array, and as a key (`.42`) otherwise.
func scanTOMLLines(data []byte) map[string]int {
	lines := map[string]int{}
	arrays := tomlArrays(data)
	var b, key strings.Builder
	tomlfile.Index(data).Walk(func(path []string, pos tomlfile.Position) {
		b.Reset()
		key.Reset()
		for i, part := range path {
			switch {
			case i > 0 && arrays[key.String()]:
				b.WriteString("[" + part + "]")
			case i > 0:
				b.WriteByte('.')
				fallthrough
			default:
				b.WriteString(part)
			}
			if i > 0 {
				key.WriteByte(0)
			}
			key.WriteString(part)
		}
		lines[b.String()] = pos.Line
	})
	return lines
}

// tomlArrays returns the key paths of data that hold arrays (arrays of
// tables, and array values, also inside arrays and inline tables), spelled
// as tomlfile spells them: parts joined by NUL, an element's index as a
// decimal part. It resolves table headers against arrays of tables as
// tomlfile.Index does: [a.b] after [[a]] means the last a's b.
func tomlArrays(data []byte) map[string]bool {
	arrays := map[string]bool{}
	counts := map[string]int{} // array-of-tables path -> elements seen
	var parser unstable.Parser
	parser.Reset(data)
	var prefix []string
	for parser.NextExpression() {
		n := parser.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts := tomlKeyParts(n.Key())
			if len(parts) == 0 {
				continue
			}
			prefix = prefix[:0:0]
			for _, part := range parts[:len(parts)-1] {
				prefix = append(prefix, part)
				if c := counts[strings.Join(prefix, "\x00")]; c > 0 {
					prefix = append(prefix, strconv.Itoa(c-1))
				}
			}
			prefix = append(prefix, parts[len(parts)-1])
			if n.Kind == unstable.ArrayTable {
				k := strings.Join(prefix, "\x00")
				arrays[k] = true
				prefix = append(prefix, strconv.Itoa(counts[k]))
				counts[k]++
			}
		case unstable.KeyValue:
			tomlKeyValueArrays(arrays, prefix, n)
		}
	}
	return arrays
}

// tomlKeyValueArrays records the arrays of a key = value under prefix.
func tomlKeyValueArrays(arrays map[string]bool, prefix []string, n *unstable.Node) {
	path := append(slices.Clip(prefix), tomlKeyParts(n.Key())...)
	tomlValueArrays(arrays, path, n.Value())
}

func tomlValueArrays(arrays map[string]bool, path []string, v *unstable.Node) {
	if v == nil {
		return
	}
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				tomlKeyValueArrays(arrays, path, c)
			}
		}
	case unstable.Array:
		arrays[strings.Join(path, "\x00")] = true
		it := v.Children()
		i := 0
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			if c.Kind == unstable.Array || c.Kind == unstable.InlineTable {
				tomlValueArrays(arrays, append(slices.Clip(path), strconv.Itoa(i)), c)
			}
			i++
		}
	}
}

// tomlKeyParts returns the decoded parts of a key.
func tomlKeyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// lookupLine returns the line of field or of its nearest recorded ancestor.
func lookupLine(lines map[string]int, field string) int {
	for field != "" {
		if l, ok := lines[field]; ok {
			return l
		}
		i := max(strings.LastIndexByte(field, '.'), strings.LastIndexByte(field, '['))
		if i <= 0 {
			break
		}
		field = field[:i]
	}
	if l, ok := lines[field]; ok {
		return l
	}
	return 0
}

// sortProblemsByLine orders problems by line (unknown lines last), keeping
// the existing order among equals.
func sortProblemsByLine(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = 1 << 30
		}
		if lb == 0 {
			lb = 1 << 30
		}
		return cmp.Compare(la, lb)
	})
}
