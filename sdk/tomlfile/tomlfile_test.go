package tomlfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

type project struct {
	Project struct {
		Name         string   `toml:"name"`
		Dependencies []string `toml:"dependencies"`
	} `toml:"project"`
}

func TestUnmarshalErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		line       int
		msg        string
	}{
		{"unclosed table", "[project\nname = 1", 1, "invalid TOML: expected ']' to close table name"},
		{"duplicate key", "a = 1\na = 2\n", 2, "invalid TOML: key a is already defined: a key is set once in its table"},
		{"unfinished array", "x = 1\ny = [1, \n", 2, "invalid TOML: array is incomplete"},
		{"wrong type", "[project]\n\ndependencies = \"x\"\n", 3, "project.dependencies: expected an array, found a string"},
		{"wrong scalar", "[project]\nname = 3\n", 2, "project.name: expected a string, found an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v project
			err := Unmarshal("pyproject.toml", []byte(tc.body), &v)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if e.File != "pyproject.toml" || e.Line != tc.line || !strings.HasSuffix(e.Error(), tc.msg) {
				t.Errorf("got %q line %d %q, want line %d %q", e.File, e.Line, e.Error(), tc.line, tc.msg)
			}
			if want := fmt.Sprintf("pyproject.toml:%d: %s", tc.line, tc.msg); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err, want)
			}
			var de *toml.DecodeError
			if !errors.As(err, &de) {
				t.Errorf("the decoder's error is not reachable through %v", err)
			}
		})
	}
}

func TestUnmarshalValues(t *testing.T) {
	var v project
	if err := Unmarshal("pyproject.toml", []byte("[project]\nname = \"a\"\ndependencies = [\"b\", \"c\"]\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Project.Name != "a" || strings.Join(v.Project.Dependencies, ",") != "b,c" {
		t.Errorf("decoded %+v", v)
	}
	// Untyped tables decode to the types sdk/manifest takes.
	var m map[string]any
	if err := Unmarshal("SYMPOSIUM.toml", []byte("n = 1\n[[skills]]\nsource.path = \"x\"\n"), &m); err != nil {
		t.Fatal(err)
	}
	skills, ok := m["skills"].([]any)
	if m["n"] != int64(1) || !ok || len(skills) != 1 {
		t.Errorf("decoded %#v", m)
	}
}

func TestErrorWithoutLine(t *testing.T) {
	e := &Error{File: "Pipfile", Msg: "invalid TOML: x"}
	if e.Error() != "Pipfile: invalid TOML: x" {
		t.Errorf("%q", e.Error())
	}
}

// FuzzUnmarshal checks that decoding never panics and that every error
// names the file and, when it has one, a line of the input.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte("[project]\nname = \"a\"\ndependencies = [\"b\"]\n"))
	f.Add([]byte("[project\n"))
	f.Add([]byte("[project]\nname = 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v project
		for _, target := range []any{&v, new(map[string]any)} {
			err := Unmarshal("f.toml", b, target)
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "f.toml" {
				t.Fatalf("error %v does not name the file", err)
			}
			if e.Line > bytes.Count(b, []byte{'\n'})+1 {
				t.Fatalf("line %d past the end of a %d-line input", e.Line, bytes.Count(b, []byte{'\n'})+1)
			}
		}
	})
}
