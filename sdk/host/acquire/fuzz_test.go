package acquire

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Whatever the configured version, the copy's directory is one safe path
// element, and different versions get different directories.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"", "v1.2.3", "^1.0", "~1.0", ">=1 <2", "../../x", ".", "..", ".hidden", "a/b", `a\b`, "latest", "1.0.0+build", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		k := Source{Kind: NPM, Package: "p", Version: v}.Key()
		if k == "" || k == "." || k == ".." || strings.HasPrefix(k, ".") || !filepath.IsLocal(k) || strings.ContainsAny(k, `/\`) || filepath.Base(k) != k {
			t.Fatalf("Key(%q) = %q", v, k)
		}
		if v != "" && v != "latest" && k == "latest" {
			t.Fatalf("Key(%q) collides with latest", v)
		}
		if other := (Source{Kind: NPM, Package: "p", Version: v + "x"}).Key(); other == k {
			t.Fatalf("Key(%q) = Key(%q) = %q", v, v+"x", k)
		}
	})
}

func FuzzParseCrates2(f *testing.F) {
	f.Add([]byte(`{"installs":{"tiny-pm 0.1.0 (sparse+http://127.0.0.1:1/)":{"bins":["tiny-pm"]}}}`), "tiny-pm")
	f.Add([]byte(`{"installs":{}}`), "")
	f.Add([]byte(`{"installs":{"a":{}}}`), "a")
	f.Add([]byte(`[]`), "x")
	f.Fuzz(func(t *testing.T, data []byte, crate string) {
		v, err := parseCrates2(data, crate)
		if err == nil && (v == "" || strings.ContainsAny(v, " \t\n")) {
			t.Fatalf("version %q from %q", v, data)
		}
	})
}

func FuzzNPMBins(f *testing.F) {
	for _, s := range []string{`"bin/x.js"`, `{"a":"bin/a.js","b":"b.js"}`, `null`, `{}`, `3`, `{"../x":"y"}`, `{"@s/x":"y"}`} {
		f.Add("@scope/pkg", s)
	}
	f.Fuzz(func(t *testing.T, pkg, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		names, err := npmBins(pkg, json.RawMessage(raw))
		if err != nil {
			return
		}
		for _, n := range names {
			if strings.Contains(n, "/") && n != "/" {
				t.Fatalf("bin name %q from %s", n, raw)
			}
		}
	})
}
