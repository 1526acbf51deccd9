package pydist

import (
	"fmt"
	"path/filepath"
	"strings"
)

// EntryPointGroup is the entry-point group in which a distribution
// declares its Symposium plugins: each entry names the import package
// that is a plugin root.
const EntryPointGroup = "symposium"

// EntryPoint is one entry of entry_points.txt.
type EntryPoint struct {
	// Name is the entry's name; Value what follows "=", trimmed.
	Name  string
	Value string
	// Line is the 1-based line it is on.
	Line int
}

// Module returns the module part of the entry point's value ("pkg.sub" of
// "pkg.sub:attr [extra]").
func (e EntryPoint) Module() string {
	v, _, _ := strings.Cut(e.Value, "[")
	mod, _, _ := strings.Cut(v, ":")
	return strings.TrimSpace(mod)
}

// ModuleDir returns the directory of an import package ("a.b") relative to
// the directory it is imported from ("a/b", in the system's form), and
// false when the module is empty or the path would not be local.
func ModuleDir(module string) (string, bool) {
	if module == "" {
		return "", false
	}
	rel := filepath.FromSlash(strings.ReplaceAll(module, ".", "/"))
	if !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// EntryPointsError is a line of entry_points.txt that does not parse.
type EntryPointsError struct {
	// Line is the 1-based line.
	Line int
	// Msg says what is wrong with it.
	Msg string
}

// Error returns "entry_points.txt:LINE: MSG".
func (e *EntryPointsError) Error() string {
	return fmt.Sprintf("%s:%d: %s", EntryPointsFile, e.Line, e.Msg)
}

// ParseEntryPoints reads entry_points.txt: INI sections naming groups,
// "name = value" lines, "#" and ";" comments. A line that does not parse,
// in any group, is an *EntryPointsError, and the file is not used at all.
func ParseEntryPoints(data []byte) (map[string][]EntryPoint, error) {
	groups := map[string][]EntryPoint{}
	group := ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, &EntryPointsError{Line: i + 1, Msg: "unclosed section header"}
			}
			group = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, &EntryPointsError{Line: i + 1, Msg: "expected name = value"}
		}
		if group == "" {
			return nil, &EntryPointsError{Line: i + 1, Msg: "entry outside a [group]"}
		}
		groups[group] = append(groups[group], EntryPoint{Name: strings.TrimSpace(k), Value: strings.TrimSpace(v), Line: i + 1})
	}
	return groups, nil
}
