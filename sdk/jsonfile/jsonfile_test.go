package jsonfile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type params struct {
	Deps []struct {
		Name string `json:"name"`
	} `json:"deps"`
	N int `json:"n"`
}

func TestUnmarshalErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"syntax", "{\n  \"a\": 1,\n}\n", "p.json:3:1: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"eof", "{\n  \"a\": [1,\n", "p.json:3:1: invalid JSON: unexpected end of file"},
		{"empty", "", "p.json:1:1: invalid JSON: unexpected end of file"},
		{"array for string", "{\"deps\": \"x\"}", "p.json:1:12: deps: expected an array, found a string"},
		{"nested", "{\"deps\": [\n {\"name\": 1}\n]}", "p.json:2:11: deps.name: expected a string, found a number"},
		{"object for int", "{\n\"n\": {}}", "p.json:2:6: n: expected a whole number, found an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v params
			err := Unmarshal("p.json", []byte(tc.data), &v)
			var e *Error
			if !errors.As(err, &e) || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, "Go ") || strings.Contains(msg, "unmarshal") || strings.Contains(msg, "[]struct") {
				t.Errorf("Go words in %q", msg)
			}
		})
	}
}

func TestErrorWithoutFile(t *testing.T) {
	var v params
	err := Explain("", []byte(`{"deps": "x"}`), json.Unmarshal([]byte(`{"deps": "x"}`), &v))
	if err.Error() != "line 1, column 12: deps: expected an array, found a string" {
		t.Errorf("got %q", err)
	}
}

// FuzzUnmarshal checks that explaining never panics and that every error
// is an *Error with a position inside the input.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"deps": [{"name": "a"}], "n": 1}`))
	f.Add([]byte(`{"deps": "x"`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []any{new(params), new(any), new(map[string]string)} {
			err := Unmarshal("f.json", b, v)
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is no *Error", err)
			}
			if e.Line > strings.Count(string(b), "\n")+1 {
				t.Fatalf("line %d past the input", e.Line)
			}
		}
	})
}
