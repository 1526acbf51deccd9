// Package jsonfile decodes JSON files (package.json, lockfiles, wheel
// metadata) and JSON-RPC params with encoding/json, reporting failures in
// the document's terms rather than Go's: a syntax error or a value of the
// wrong type carries the file, line and column, and the key path
// ("deps: expected an array, found a string", not "json: cannot unmarshal
// string into Go struct field …").
package jsonfile

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Error is a problem with a JSON document.
type Error struct {
	// File names the document, or is empty (JSON-RPC params).
	File string
	// Line and Column (1-based, columns in bytes) locate the problem, or
	// are 0 when unknown.
	Line, Column int
	// Key is the path of the value the problem is about, as dotted keys
	// ("symposium.skills"), or empty.
	Key string
	// Msg describes the problem.
	Msg string
	// Err is encoding/json's error.
	Err error
}

// Error returns "file:line:column: key: msg", leaving out what is unknown;
// without a file, the position reads "line L, column C".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Column) + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns encoding/json's error.
func (e *Error) Unwrap() error { return e.Err }

// Unmarshal decodes data, the contents of the file named file, into v as
// json.Unmarshal does, and words its errors with [Explain].
func Unmarshal(file string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return Explain(file, data, err)
	}
	return nil
}

// Explain turns err, returned by encoding/json while decoding data (the
// contents of file), into an [*Error]. Errors that are not about the
// document (a nil target) are returned unchanged.
func Explain(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := Position(data, int(se.Offset)-1)
		msg := se.Error()
		if strings.HasPrefix(msg, "unexpected end of JSON input") {
			msg = "unexpected end of file"
			line, col = Position(data, len(data))
		}
		return &Error{File: file, Line: line, Column: col, Msg: "invalid JSON: " + msg, Err: err}
	case errors.As(err, &te):
		// encoding/json reports the offset just past a scalar, or at the
		// start of an array or object: either is on the value's line.
		off := max(int(te.Offset)-1, 0)
		line, col := Position(data, off)
		return &Error{File: file, Line: line, Column: col, Key: te.Field,
			Msg: "expected " + goWords(te.Type) + ", found " + jsonWords(te.Value), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		line, col := Position(data, len(data))
		return &Error{File: file, Line: line, Column: col, Msg: "invalid JSON: unexpected end of file", Err: err}
	}
	if strings.HasPrefix(err.Error(), "json: ") {
		return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	}
	return err
}

// Position converts a byte offset in data into a 1-based line and column;
// an offset past the end is the end.
func Position(data []byte, offset int) (line, col int) {
	if offset < 0 {
		offset = 0
	}
	if offset > len(data) {
		offset = len(data)
	}
	line, start := 1, 0
	for i := 0; i < offset; i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, offset - start + 1
}

// jsonWords names the kind of JSON value encoding/json reports in an
// UnmarshalTypeError ("string", "number", "number 1.5", "object" …).
func jsonWords(v string) string {
	switch {
	case v == "string":
		return "a string"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "object":
		return "an object"
	case v == "array":
		return "an array"
	case v == "bool":
		return "true or false"
	case v == "null":
		return "null"
	}
	return "another kind of value"
}

// goWords names what a Go type holds, in JSON's terms.
func goWords(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "time" && t.Name() == "Time" {
		return "a date-time string"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

// ExplainValue words err, returned by encoding/json while decoding data, a
// value received whole rather than a file (JSON-RPC params or a result):
// by key path and JSON kind, without a position.
func ExplainValue(data []byte, err error) error {
	var je *Error
	if errors.As(Explain("", data, err), &je) {
		if je.Key != "" || !strings.HasPrefix(je.Msg, "invalid JSON") {
			je.Line, je.Column = 0, 0
		}
		return je
	}
	return err
}
