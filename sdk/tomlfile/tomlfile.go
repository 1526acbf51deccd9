// Package tomlfile decodes the TOML files PMs read (a package's
// SYMPOSIUM.toml, pyproject.toml, Pipfile, lockfiles) with
// github.com/pelletier/go-toml/v2, reporting failures with the file name and
// the line they were found on, as "file:line: message".
package tomlfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Error is a TOML file that could not be decoded.
type Error struct {
	// File names the file, as the caller gave it.
	File string
	// Line is the 1-based line of the problem, or 0 when unknown.
	Line int
	// Msg describes the problem.
	Msg string
	// Err is the decoder's error.
	Err error
}

// Error returns "file:line: msg", or "file: msg" without a line.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Unwrap returns the decoder's error.
func (e *Error) Unwrap() error { return e.Err }

// Unmarshal decodes data, the contents of the file named file, into v. A
// syntax error or a value of the wrong type for its key is an *Error
// naming file and the line.
func Unmarshal(file string, data []byte, v any) error {
	err := toml.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{File: file, Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: "), Err: err}
	}
	line, _ := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if key := de.Key(); len(key) > 0 && strings.HasPrefix(msg, "cannot decode") {
		// "cannot decode TOML integer into struct field T.F of type string"
		// names Go types the reader of a pyproject.toml has no use for.
		if i, j := strings.Index(msg, " into struct field "), strings.LastIndex(msg, " of type "); i >= 0 && j > i {
			msg = msg[:i] + " into " + msg[j+len(" of type "):]
		}
		msg = "invalid value for " + strings.Join(key, ".") + ": " + msg
	} else {
		msg = "invalid TOML: " + msg
	}
	return &Error{File: file, Line: line, Msg: msg, Err: err}
}
