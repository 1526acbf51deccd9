package tomlfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

const doc = `# a comment
name = "x"
[package]
version = "1"
meta = { a = 1, "b c" = [1,
  2] }

[[bin]]
name = "one"
[[bin]]
name = "two"
[bin.extra]
k = true
`

func TestPositions(t *testing.T) {
	p := Index([]byte(doc))
	for _, tc := range []struct {
		path      []string
		line, col int
	}{
		{[]string{"name"}, 2, 1},
		{[]string{"package"}, 3, 2},
		{[]string{"package", "version"}, 4, 1},
		{[]string{"package", "meta", "a"}, 5, 10},
		{[]string{"package", "meta", "b c", "1"}, 6, 3},
		{[]string{"bin"}, 8, 3},
		{[]string{"bin", "0", "name"}, 9, 1},
		{[]string{"bin", "1"}, 10, 3},
		{[]string{"bin", "1", "name"}, 11, 1},
		{[]string{"bin", "1", "extra", "k"}, 13, 1},
	} {
		got, ok := p.Find(tc.path...)
		if !ok || got.Line != tc.line || got.Column != tc.col {
			t.Errorf("Find(%q) = %+v %v, want %d:%d", tc.path, got, ok, tc.line, tc.col)
		}
	}
	if got := p.Near("package", "missing", "deeper"); got.Line != 3 {
		t.Errorf("Near of a missing key = %+v, want its table's line 3", got)
	}
	if got := p.Near("nothing"); got != (Position{}) {
		t.Errorf("Near of an unknown key = %+v, want none", got)
	}
}

func TestKeyString(t *testing.T) {
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"package", "name"}, "package.name"},
		{[]string{"hooks", "1", "command"}, "hooks[1].command"},
		{[]string{"target", "cfg(unix)", "dependencies"}, `target."cfg(unix)".dependencies`},
	} {
		if got := KeyString(tc.path...); got != tc.want {
			t.Errorf("KeyString(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestUnmarshalReportsEveryTypeError checks that all the values of the
// wrong type are reported together, in the order they are written.
func TestUnmarshalReportsEveryTypeError(t *testing.T) {
	type pkg struct {
		Name    string   `toml:"name"`
		Version string   `toml:"version"`
		Authors []string `toml:"authors"`
		Count   int      `toml:"count"`
		Ok      bool
	}
	var v struct {
		Package pkg            `toml:"package"`
		Deps    map[string]pkg `toml:"deps"`
	}
	data := "[deps]\nz = 1\na = { name = [] }\n[package]\nname = 1\nversion = \"1\"\nauthors = \"me\"\ncount = 1.5\nok = \"yes\"\n"
	err := Unmarshal("Cargo.toml", []byte(data), &v)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T), want Errors", err, err)
	}
	want := []string{
		"Cargo.toml:2: deps.z: expected a table, found an integer",
		"Cargo.toml:3: deps.a.name: expected a string, found an array",
		"Cargo.toml:5: package.name: expected a string, found an integer",
		"Cargo.toml:7: package.authors: expected an array, found a string",
		"Cargo.toml:8: package.count: expected an integer, found a float",
		"Cargo.toml:9: package.ok: expected a boolean (true or false), found a string",
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"cannot decode TOML integer into struct field cargotoml.rawPackage.Name of type string": "expected a string, found an integer",
		"cannot decode TOML array into []interface {}":                                          "expected an array, found an array",
		"integer value 300 cannot be stored in uint8":                                           "the integer 300 is out of range here",
		"cannot store a table in a int64":                                                       "a table is not allowed here",
		"expected character =":                                                                  "expected character =",
		"table plugins already exists":                                                          "[plugins] is written a second time: a table has one header, so put these keys under the first [plugins]",
		"table registry already exists as an array of tables":                                   "[registry] is already an array of tables: write [[registry]] for another entry",
		"unexpected character U+000A at start of value":                                         "the value is missing: nothing follows = on this line",
		"key a is already defined":                                                              "key a is already defined: a key is set once in its table",
	} {
		if got := Words(in); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutOfRange(t *testing.T) {
	var v struct{ N uint8 }
	err := Unmarshal("f.toml", []byte("\nN = 300\n"), &v)
	if err == nil || err.Error() != "f.toml:2: N: the integer 300 is out of range here" {
		t.Errorf("got %v", err)
	}
}

// FuzzIndex checks that indexing never panics, that every position it
// gives lies in the input, and that every top-level key of a document the
// decoder accepts is found where it is written.
func FuzzIndex(f *testing.F) {
	f.Add([]byte(doc))
	f.Add([]byte("a.b.c = 1\n[x.'y z']\n[[x.'y z'.w]]\nq = [{r = 1}]\n"))
	f.Add([]byte("[a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := Index(b)
		lines := bytes.Count(b, []byte{'\n'}) + 1
		for k, off := range p.offsets {
			if off < 0 || off > len(b) {
				t.Fatalf("%q at offset %d outside %d bytes", k, off, len(b))
			}
			if pos := p.At(off); pos.Line < 1 || pos.Line > lines || pos.Column < 1 {
				t.Fatalf("%q at %+v outside %d lines", k, pos, lines)
			}
		}
		var tree map[string]any
		if toml.Unmarshal(b, &tree) != nil {
			return
		}
		for k := range tree {
			if _, ok := p.Find(k); !ok {
				t.Fatalf("top-level key %q not found", k)
			}
		}
	})
}

func TestDecodeTreeKeepsTheRest(t *testing.T) {
	var v struct {
		A string            `toml:"a"`
		B int               `toml:"b"`
		L []string          `toml:"l"`
		M map[string]string `toml:"m"`
	}
	data := []byte("a = 1\nb = 2\nl = [\"x\", 3]\n[m]\nk = \"v\"\nbad = []\n")
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	errs := DecodeTree("f.toml", data, tree, &v)
	if len(errs) != 3 || errs[0].Line != 1 || errs[1].Line != 3 || errs[2].Line != 6 {
		t.Fatalf("errors %v", errs)
	}
	if v.B != 2 || v.M["k"] != "v" || v.A != "" || v.L != nil {
		t.Errorf("decoded %+v", v)
	}
}

// TestIsArray: arrays of tables and array values are arrays, so a decimal
// part after them is an index; a table named by digits is not.
func TestIsArray(t *testing.T) {
	p := Index([]byte("a = [1, [2]]\n[[pm]]\nname = \"x\"\n[sub.42]\nb = { c = [3] }\n"))
	for _, tc := range []struct {
		path []string
		want bool
	}{
		{[]string{"a"}, true}, {[]string{"a", "1"}, true}, {[]string{"pm"}, true},
		{[]string{"sub"}, false}, {[]string{"sub", "42"}, false}, {[]string{"sub", "42", "b", "c"}, true},
	} {
		if got := p.IsArray(tc.path...); got != tc.want {
			t.Errorf("IsArray(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
