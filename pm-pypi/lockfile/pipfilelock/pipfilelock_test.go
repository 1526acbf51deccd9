package pipfilelock

import (
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	data, err := os.ReadFile("testdata/Pipfile.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{
		{Name: "requests", Version: "2.31.0", Category: "default"},
		{Name: "mylib", Category: "default", Editable: true, Path: "./mylib"},
		{Name: "pytest", Version: "7.4.0", Category: "develop"},
	}
	if l.PipfileSpec != 6 || len(l.Packages) != len(want) {
		t.Fatalf("%+v", l)
	}
	for i := range want {
		if l.Packages[i] != want[i] {
			t.Errorf("package %d = %+v, want %+v", i, l.Packages[i], want[i])
		}
	}
}

func TestParseBad(t *testing.T) {
	for name, body := range map[string]string{
		"future":   `{"_meta": {"pipfile-spec": 7}}`,
		"no meta":  `{"default": {}}`,
		"not json": `{`,
		"bad sect": `{"_meta": {}, "default": []}`,
		"bad name": `{"_meta": {}, "default": {"a b": {}}}`,
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/Pipfile.lock")
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}

// TestErrorsInTheFilesTerms checks that JSON problems carry a line and
// column, and name keys and JSON kinds rather than Go types.
func TestErrorsInTheFilesTerms(t *testing.T) {
	for data, want := range map[string]string{
		"{\n  \"_meta\": {},\n}":           "Pipfile.lock:3:1: invalid JSON: invalid character '}' looking for beginning of object key string",
		"{\"_meta\": {\n":                  "Pipfile.lock:2:1: invalid JSON: unexpected end of file",
		"[]":                               "Pipfile.lock: a Pipfile.lock must be a JSON object",
		`{"_meta": {"pipfile-spec": "6"}}`: "Pipfile.lock: _meta: pipfile-spec: expected a whole number, found a string",
		`{"_meta": {}, "default": {"requests": {"version": 2}}}`: `Pipfile.lock: section "default": version: expected a string, found a number`,
	} {
		_, err := Parse([]byte(data))
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", data, err, want)
		}
	}
}
