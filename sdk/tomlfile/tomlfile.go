// Package tomlfile is the one place TOML files are decoded and located:
// a package's SYMPOSIUM.toml, the host's config files, Cargo.toml and
// Cargo.lock, pyproject.toml, Pipfile, lockfiles. It builds on
// github.com/pelletier/go-toml/v2 and its parser's byte ranges:
//
//   - [Unmarshal] decodes a file and reports failures as [*Error] (a syntax
//     error) or [Errors] (every value of the wrong type, in line order),
//     with the file, line, column and key path, in TOML's words rather than
//     Go's ("package.name: expected a string, found an integer");
//   - [Index] maps key paths to where they are written, for problems found
//     after decoding (a missing key, a bad value).
package tomlfile

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Error is a problem with a TOML file, located by key path and position
// when known.
type Error struct {
	// File names the file, as the caller gave it.
	File string
	// Line is the 1-based line of the problem, or 0 when unknown.
	Line int
	// Column is the 1-based column (in bytes) of the problem, or 0.
	Column int
	// Key is the key path the problem is about, as the file spells it
	// ("package.name", "hooks[1].command"), or empty.
	Key string
	// Msg describes the problem, without the file, position or key.
	Msg string
	// Err is the decoder's error, when the problem comes from one.
	Err error

	path []string // the key path Check found the problem at
}

// Error returns "file:line: key: msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the decoder's error.
func (e *Error) Unwrap() error { return e.Err }

// At returns an Error about the key path (as in [Positions]) of the file
// whose positions are pos, located at the path or its nearest written
// ancestor.
func At(file string, pos *Positions, msg string, path ...string) *Error {
	p := pos.Near(path...)
	return &Error{File: file, Line: p.Line, Column: p.Column, Key: KeyString(path...), Msg: msg}
}

// Errors are several problems with files, in the order they are written.
type Errors []*Error

// Error returns each problem on a line of its own.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Sort orders the problems by file, then line and column (unknown
// positions last), keeping the existing order among equals.
func (es Errors) Sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(unknownLast(a.Line), unknownLast(b.Line)), cmp.Compare(a.Column, b.Column))
	})
}

func unknownLast(n int) int {
	if n <= 0 {
		return 1 << 30
	}
	return n
}

// Err returns nil for no problems, the problem itself for one, and es for
// more.
func (es Errors) Err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return es
}

// Unmarshal decodes data, the contents of the file named file, into v, as
// toml.Unmarshal does. A syntax error is an [*Error]; values of the wrong
// type for their keys are all reported, in line order, each an [*Error]
// naming the key ([Errors] when there are several).
func Unmarshal(file string, data []byte, v any) error {
	err := toml.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	return Explain(file, data, v, err)
}

// Explain turns err, returned by toml.Unmarshal(data, v), into the errors
// [Unmarshal] returns.
func Explain(file string, data []byte, v any, err error) error {
	var tree map[string]any
	if serr := toml.Unmarshal(data, &tree); serr != nil {
		return syntaxError(file, serr)
	}
	if es := Check(file, data, tree, v); len(es) > 0 {
		for _, e := range es {
			e.Err = err
		}
		return es.Err()
	}
	return decodeError(file, err)
}

// syntaxError words an error of the parser.
func syntaxError(file string, err error) *Error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{File: file, Msg: "invalid TOML: " + Words(strings.TrimPrefix(err.Error(), "toml: ")), Err: err}
	}
	line, col := de.Position()
	return &Error{File: file, Line: line, Column: col, Msg: "invalid TOML: " + Words(strings.TrimPrefix(de.Error(), "toml: ")), Err: err}
}

// decodeError words an error of the decoder that [Check] did not foresee
// (a number out of range for its field, a text its type rejects).
func decodeError(file string, err error) *Error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{File: file, Msg: Words(strings.TrimPrefix(err.Error(), "toml: ")), Err: err}
	}
	line, col := de.Position()
	e := &Error{File: file, Line: line, Column: col, Msg: Words(strings.TrimPrefix(de.Error(), "toml: ")), Err: err}
	if key := de.Key(); len(key) > 0 {
		e.Key = KeyString(key...)
	}
	return e
}

// goMessages are the go-toml messages Words rewrites. They are compiled
// on first use, not when the package is initialised: most processes
// (every cached hook) never meet a TOML mistake.
var goMessages = sync.OnceValue(func() *goMessagePatterns {
	return &goMessagePatterns{
		mismatch: regexp.MustCompile(`^cannot decode TOML (.+?) into (?:struct field \S+ of type )?(.+)$`),
		store:    regexp.MustCompile(`^(?:negative )?integer value (-?\d+) cannot be stored in \S+$`),
		float:    regexp.MustCompile(`^float value \S+ cannot be stored in \S+$`),
		tableIn:  regexp.MustCompile(`^cannot store (a table|an array table) in an? \S+$`),
		twice:    regexp.MustCompile(`^table (\S+) already exists$`),
		array:    regexp.MustCompile(`^table (\S+) already exists as an array of tables$`),
		keyAgain: regexp.MustCompile(`^key (\S+) is already defined$`),
	}
})

// goMessagePatterns match the go-toml messages Words rewrites.
type goMessagePatterns struct {
	mismatch, store, float, tableIn, twice, array, keyAgain *regexp.Regexp
}

// Words rewrites a go-toml message that names Go types in the file's
// terms, and returns other messages unchanged.
func Words(msg string) string {
	re := goMessages()
	if m := re.mismatch.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("expected %s, found %s", goWords(m[2]), article(m[1]))
	}
	if m := re.store.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("the integer %s is out of range here", m[1])
	}
	if re.float.MatchString(msg) {
		return "the number is out of range here"
	}
	if m := re.tableIn.FindStringSubmatch(msg); m != nil {
		return m[1] + " is not allowed here"
	}
	if m := re.twice.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("[%s] is written a second time: a table has one header, so put these keys under the first [%s]", m[1], m[1])
	}
	if m := re.array.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("[%s] is already an array of tables: write [[%s]] for another entry", m[1], m[1])
	}
	if msg == "unexpected character U+000A at start of value" || msg == "unexpected character U+000D at start of value" {
		return "the value is missing: nothing follows = on this line"
	}
	if m := re.keyAgain.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("key %s is already defined: a key is set once in its table", m[1])
	}
	return msg
}

// article puts "a" or "an" before a TOML type name.
func article(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + s
	}
	return "a " + s
}

// goWords names what a Go type, as printed by reflect, holds.
func goWords(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "["):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "a table"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case strings.HasPrefix(t, "uint"):
		return "a non-negative integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "time.Time":
		return "a date-time"
	case t == "toml.LocalDate":
		return "a date"
	case t == "toml.LocalTime":
		return "a time"
	case t == "toml.LocalDateTime":
		return "a local date-time"
	}
	return "another kind of value"
}
