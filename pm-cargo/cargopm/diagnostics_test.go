package cargopm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

func TestUnknownTables(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Cargo.toml")
	os.WriteFile(path, []byte("[package]\nname = \"a\"\nversion = \"1.0.0\"\n\n[dependncies]\nserde = \"1\"\n\n[dev-dependencies]\nx = \"1\"\n\nbadges2 = 1\n[zzz.sub]\n"), 0o644)
	ws := unknownTables(path)
	var got []string
	for _, w := range ws {
		got = append(got, w.Message)
	}
	want := []string{
		path + ":5: unknown table [dependncies] (did you mean [dependencies]?); cargo ignores it, so no dependency in it is listed",
		path + ":12: unknown table [zzz]; cargo ignores it, so no dependency in it is listed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(ws) > 0 && (ws[0].Line != 5 || ws[0].File != path) {
		t.Errorf("first warning at %s:%d", ws[0].File, ws[0].Line)
	}
}

// FuzzKeyLine: any manifest text and key give a line within the text, or 0,
// where unknownTables looks a key up.
func FuzzKeyLine(f *testing.F) {
	f.Add("[package]\n[dependncies]\nserde = \"1\"\n", "dependncies")
	f.Add("\"quoted.key\" = 1\n", "quoted.key")
	f.Add("a.b = 1\n[[c]]\n", "c")
	f.Fuzz(func(t *testing.T, data, key string) {
		at, _ := tomlfile.Index([]byte(data)).Find(key)
		n := at.Line
		if n < 0 || n > strings.Count(data, "\n")+1 {
			t.Fatalf("line %d outside %d lines", n, strings.Count(data, "\n")+1)
		}
	})
}
