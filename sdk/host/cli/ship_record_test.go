package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDistTopLevel pins validate's reading of a distribution's top-level
// packages to the pypi PM's (pm-pypi: distinfo.ParseRecord, distinfo.TopLevel,
// then top_level.txt): a RECORD that does not parse whole is set aside for
// top_level.txt, not read up to its first bad line.
func TestDistTopLevel(t *testing.T) {
	for _, tc := range []struct {
		name          string
		record, tops  string // "" leaves the file out
		want          []string
		wantNotListed bool
	}{
		{name: "RECORD", record: "pkg/__init__.py,sha256=x,10\npkg/SYMPOSIUM.toml,,\nother/a.py,,\n",
			want: []string{"pkg", "other"}},
		{name: "RECORD skips metadata, data, scripts and caches",
			record: "pkg/a.py,,\npkg-1.0.dist-info/METADATA,,\npkg-1.0.data/scripts/x,,\n../../bin/tool,,\n__pycache__/a.pyc,,\nmodule.py,,\n",
			want:   []string{"pkg"}},
		{name: "RECORD preferred over top_level.txt", record: "pkg/a.py,,\n", tops: "elsewhere\n", want: []string{"pkg"}},
		{name: "RECORD naming no package falls back", record: "module.py,,\n", tops: "fromtops\n", want: []string{"fromtops"}},
		{name: "RECORD not CSV falls back whole", record: "good/a.py,,\nbad/\"x,,\n", tops: "fromtops\n", want: []string{"fromtops"}},
		{name: "RECORD bad size falls back whole", record: "good/a.py,,10\nother/b.py,,ten\n", tops: "fromtops\n", want: []string{"fromtops"}},
		{name: "top_level.txt only", tops: "a\nb\n../escape\n", want: []string{"a", "b"}},
		{name: "neither", wantNotListed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			di := filepath.Join(t.TempDir(), "pkg-1.0.dist-info")
			if err := os.MkdirAll(di, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{"RECORD": tc.record, "top_level.txt": tc.tops} {
				if body != "" {
					if err := os.WriteFile(filepath.Join(di, name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, listed := distTopLevel(di)
			if listed == tc.wantNotListed || !slices.Equal(got, tc.want) {
				t.Errorf("distTopLevel = %q, listed %v; want %q, listed %v", got, listed, tc.want, !tc.wantNotListed)
			}
		})
	}
}

// FuzzRecordTops checks that any RECORD is read without panicking and
// yields only single path components inside site-packages.
func FuzzRecordTops(f *testing.F) {
	f.Add([]byte("pkg/a.py,sha256=x,10\n../../bin/x,,\n"))
	f.Add([]byte("a/\"b,,\n"))
	f.Add([]byte("pkg/a.py,,-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, top := range recordTops(data) {
			if top == "" || top == ".." || top == "." || strings.Contains(top, "/") {
				t.Fatalf("recordTops(%q) returned %q", data, top)
			}
		}
	})
}
