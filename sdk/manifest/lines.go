package manifest

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// scanTOMLLines maps field paths (as in Problem.Field: `hooks[1].command`,
// `subcommand.greet.description`) to the 1-based line where each key, table
// header or array element starts, from tomlfile's index of the document.
func scanTOMLLines(data []byte) map[string]int {
	lines := map[string]int{}
	tomlfile.Index(data).Walk(func(path []string, pos tomlfile.Position) {
		var b strings.Builder
		for i, part := range path {
			if _, err := strconv.Atoi(part); err == nil && i > 0 && part[0] != '-' && part[0] != '+' {
				b.WriteString("[" + part + "]")
				continue
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(part)
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
