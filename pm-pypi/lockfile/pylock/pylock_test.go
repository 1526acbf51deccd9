package pylock

import (
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	data, err := os.ReadFile("testdata/pylock.toml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if l.LockVersion != "1.0" || l.CreatedBy != "mousebender" || len(l.Packages) != 3 {
		t.Fatalf("%+v", l)
	}
	if p := l.Packages[1]; p.Name != "cattrs" || p.Version != "24.1.2" || p.Marker == "" {
		t.Errorf("%+v", p)
	}
	if p := l.Packages[2]; p.Directory != "." || !p.Editable || p.Version != "" {
		t.Errorf("%+v", p)
	}
	for _, name := range []string{"pylock.toml", "pylock.dev.toml"} {
		if !IsFileName(name) {
			t.Errorf("%s not recognised", name)
		}
	}
	if IsFileName("pylock.a.b.toml") || IsFileName("pylock..toml") || IsFileName("pylock.xtoml") {
		t.Error("pylock.a.b.toml recognised")
	}
}

func TestParseBad(t *testing.T) {
	for name, body := range map[string]string{
		"future":   "lock-version = '2.0'\ncreated-by = 'x'\n",
		"missing":  "created-by = 'x'\n",
		"not toml": "lock-version = \n",
		"bad name": "lock-version = '1.0'\n[[packages]]\nname = 'a b'\n",
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/pylock.toml")
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}
