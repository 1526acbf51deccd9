package distinfo

import (
	"testing"
)

func TestParseMetadata(t *testing.T) {
	m, err := ParseMetadata([]byte("Metadata-Version: 2.1\r\nname: Foo.Bar\nVersion: 1.0\nVersion: 9.9\nSummary: A thing\n  that folds\n" +
		"Requires-Dist: requests>=2\nRequires-Dist: rich ; extra == 'x'\nRequires-Python: >=3.8\n\nSummary: body text\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Foo.Bar" || m.Normalized() != "foo-bar" || m.Version != "1.0" || m.Summary != "A thing that folds" ||
		len(m.RequiresDist) != 2 || m.RequiresPython != ">=3.8" {
		t.Errorf("%+v", m)
	}
	if m, _ := ParseMetadata([]byte("Name: x\nVersion: 1\nSummary: UNKNOWN\n")); m.Summary != "" {
		t.Errorf("UNKNOWN summary kept: %q", m.Summary)
	}
	for _, bad := range []string{"", "Version: 1\n", "Name: x\n", "Name: -x\nVersion: 1\n"} {
		if _, err := ParseMetadata([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("Name: a\nVersion: 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseMetadata(b) })
}
