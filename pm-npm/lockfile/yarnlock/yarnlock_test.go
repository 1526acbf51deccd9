package yarnlock

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

func load(t *testing.T, name string) *Lock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestResolve(t *testing.T) {
	for _, file := range []string{"v1.lock", "berry.lock"} {
		l := load(t, file)
		for _, tc := range []struct {
			name, spec string
			want       lockfile.Resolution
			ok         bool
		}{
			{"left", "^1.1.0", lockfile.Resolution{Name: "left", Version: "1.2.0"}, true},
			{"@babel/code-frame", "^7.0.0", lockfile.Resolution{Name: "@babel/code-frame", Version: "7.12.13"}, true},
			{"lefty", "npm:left@1.0.0", lockfile.Resolution{Name: "left", Version: "1.0.0"}, true},
			{"left", "^9", lockfile.Resolution{}, false},
		} {
			got, ok := l.Resolve("", tc.name, tc.spec)
			if ok != tc.ok || got != tc.want {
				t.Errorf("%s: Resolve(%q, %q) = %+v, %v; want %+v, %v", file, tc.name, tc.spec, got, ok, tc.want, tc.ok)
			}
		}
	}
	if l := load(t, "berry.lock"); !l.Berry || l.MetadataVersion != 6 {
		t.Errorf("berry metadata: %v %d", l.Berry, l.MetadataVersion)
	}
	got, ok := load(t, "berry.lock").Resolve("", "ws-b", "workspace:^")
	if !ok || got.Link != "packages/b" {
		t.Errorf("workspace entry: %+v %v", got, ok)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"# yarn lockfile v1\n  version \"1\"\n", "# yarn lockfile v1\nfoo@1\n", "# yarn lockfile v1\n\"unterminated:\n", "__metadata:\n  version: [\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.lock"))
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(data)
	}
	f.Add([]byte("# yarn lockfile v1\n\"a@^1\", \"@s/b@npm:c@2\":\n  version \"1.0.0\"\n  resolved \"https://r/a/-/a-1.0.0.tgz\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid yarn.lock") {
				t.Fatalf("error does not say which file is invalid: %v", err)
			}
			return
		}
		// Every descriptor the lock records is found again from the
		// declaration it was written for.
		for key, e := range l.Entries {
			name, spec, ok := splitResolution(key) // a descriptor splits as a resolution does
			if !ok {
				continue
			}
			want := e
			if alt, ok := l.Entries[name+"@npm:"+spec]; ok && l.Berry && !strings.Contains(spec, ":") {
				want = alt // berry tries the npm: descriptor first
			}
			r, ok := l.Resolve("", name, spec)
			if !ok || r.Version != want.Version {
				t.Fatalf("Resolve(%q, %q) = %+v, %v; the lock records version %q for %q", name, spec, r, ok, want.Version, key)
			}
			if r.Link != "" && r.Link != lockfile.JoinRel("", r.Link) {
				t.Fatalf("Resolve(%q, %q) gave an uncleaned link %q", name, spec, r.Link)
			}
		}
		if _, ok := l.Resolve("", "-not-a-name-", "^1"); ok {
			t.Fatal("Resolve found a package the lock does not record")
		}
		if l.Berry {
			return
		}
		// A v1 lock written back out reads as the same lock.
		again, err := Parse(writeV1(l))
		if err != nil {
			t.Fatalf("the lock written back out does not parse: %v\n%s", err, writeV1(l))
		}
		if len(again.Entries) != len(l.Entries) {
			t.Fatalf("written back out: %d entries, was %d", len(again.Entries), len(l.Entries))
		}
		for key, e := range l.Entries {
			if a := again.Entries[key]; a == nil || *a != *e {
				t.Fatalf("written back out, %q reads %+v, was %+v", key, a, e)
			}
		}
	})
}

// writeV1 writes the lock as a v1 yarn.lock, one entry per descriptor,
// every string quoted.
func writeV1(l *Lock) []byte {
	var b strings.Builder
	b.WriteString("# yarn lockfile v1\n\n")
	for _, key := range slices.Sorted(maps.Keys(l.Entries)) {
		e := l.Entries[key]
		fmt.Fprintf(&b, "%s:\n  version %s\n  resolved %s\n  integrity %s\n\n",
			strconv.Quote(key), strconv.Quote(e.Version), strconv.Quote(e.Resolved), strconv.Quote(e.Integrity))
	}
	return []byte(b.String())
}
