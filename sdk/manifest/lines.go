package manifest

import (
	"cmp"
	"slices"
	"strings"

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
	idx := tomlfile.Index(data)
	var b strings.Builder
	idx.Walk(func(path []string, pos tomlfile.Position) {
		b.Reset()
		for i, part := range path {
			switch {
			case i > 0 && idx.IsArray(path[:i]...):
				b.WriteString("[" + part + "]")
			case i > 0:
				b.WriteByte('.')
				fallthrough
			default:
				b.WriteString(part)
			}
		}
		lines[b.String()] = pos.Line
	})
	return lines
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
