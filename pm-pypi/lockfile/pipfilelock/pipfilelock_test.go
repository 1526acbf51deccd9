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
