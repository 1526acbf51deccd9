package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a manifest: the field it concerns, a
// message, and where it is when known.
type Problem struct {
	// File is the file the manifest came from, when the caller set it.
	File string `json:"file,omitempty"`
	// Line is the 1-based TOML line of the field, or 0 when unknown.
	Line int `json:"line,omitempty"`
	// Field is the path of the field, e.g. `hooks[1].command` or
	// `subcommand.greet.description`; empty for the document as a whole.
	Field string `json:"field,omitempty"`
	// Message says what is wrong and, for retired syntax, how to migrate.
	Message string `json:"message"`
	// Warning marks a problem that does not make the manifest invalid (for
	// example a dormant registry plugin).
	Warning bool `json:"warning,omitempty"`
}

// Error renders the problem as `file:line: field: message`, leaving out
// the parts that are unknown.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	} else if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is a list of problems; as an error it reports every one, in
// order, up to [MaxRendered].
type Problems []Problem

// MaxRendered is how many problems [Problems.Error] spells out; it says
// how many more there are.
const MaxRendered = 10

// Error renders the problems in order, separated by "; ": all of them up
// to [MaxRendered], then how many more there are.
func (ps Problems) Error() string {
	if len(ps) == 0 {
		return "no problems"
	}
	var b strings.Builder
	for i, p := range ps {
		if i == MaxRendered {
			fmt.Fprintf(&b, " (and %d more)", len(ps)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// joinPath appends key to a field path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends an array index to a field path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
