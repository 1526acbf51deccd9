package packagelock

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

func TestResolve(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v3-workspaces.json"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		importer, name string
		want           lockfile.Resolution
		ok             bool
	}{
		{"", "right", lockfile.Resolution{Name: "right", Version: "2.0.0"}, true},
		{"", "lefty", lockfile.Resolution{Name: "left", Version: "1.0.0"}, true},
		{"", "a", lockfile.Resolution{Name: "a", Version: "0.1.0", Link: "packages/a"}, true},
		{"packages/a", "left", lockfile.Resolution{Name: "left", Version: "1.0.0"}, true},
		{"packages/a", "right", lockfile.Resolution{Name: "right", Version: "2.0.0"}, true}, // hoisted
		{"", "missing", lockfile.Resolution{}, false},
	} {
		got, ok := l.Resolve(tc.importer, tc.name, "")
		if ok != tc.ok || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v, %v", tc.importer, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestResolveV1Workspaces: a v1 lockfile of a workspaces monorepo records a
// member's own dependencies nested under the member's "file:" link, and
// npm reads them as installed under the member's directory; the rest is
// hoisted to the root.
func TestResolveV1Workspaces(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-workspaces.json"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		importer, name string
		want           lockfile.Resolution
		ok             bool
	}{
		{"", "left", lockfile.Resolution{Name: "left", Version: "1.2.0"}, true},
		{"", "a", lockfile.Resolution{Name: "a", Link: "packages/a"}, true},
		{"packages/a", "left", lockfile.Resolution{Name: "left", Version: "1.0.0"}, true},
		{"packages/a", "right", lockfile.Resolution{Name: "right", Version: "2.0.0"}, true},
		{"packages/b", "a", lockfile.Resolution{Name: "a", Link: "packages/a"}, true},
		{"packages/b", "lefty", lockfile.Resolution{Name: "left", Version: "2.0.0"}, true},
		{"packages/b", "left", lockfile.Resolution{Name: "left", Version: "1.2.0"}, true},
		// A link nested under a package still moves its children to the target.
		{"vendor/deep", "inner", lockfile.Resolution{Name: "inner", Version: "3.0.0"}, true},
		{"", "packed", lockfile.Resolution{Name: "packed", Version: "file:vendor/packed-1.0.0.tgz"}, true},
		{"packages/b", "missing", lockfile.Resolution{}, false},
	} {
		got, ok := l.Resolve(tc.importer, tc.name, "")
		if ok != tc.ok || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v, %v", tc.importer, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestV1WrongShape: entries and fields of the wrong shape are skipped, at
// any depth, and the rest of the tree is kept.
func TestV1WrongShape(t *testing.T) {
	l, err := Parse([]byte(`{"lockfileVersion":1,"dependencies":{
	  "bad":7,
	  "m":{"version":"file:m","dev":"yes","dependencies":{"x":{"version":"1.0.0"},"y":{"version":2}}},
	  "z":{"version":"3.0.0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := l.Resolve("m", "x", ""); !ok || r.Version != "1.0.0" {
		t.Errorf("m/x: %+v %v", r, ok)
	}
	if r, ok := l.Resolve("", "z", ""); !ok || r.Version != "3.0.0" {
		t.Errorf("z: %+v %v", r, ok)
	}
	if _, ok := l.Resolve("", "bad", ""); ok {
		t.Error("an entry that is not an object was kept")
	}
}

func TestV1Alias(t *testing.T) {
	l, err := Parse([]byte(`{"lockfileVersion":1,"dependencies":{"x":{"version":"npm:@scope/real@1.2.3"},"y":{"version":"file:../y"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := l.Resolve("", "x", ""); r != (lockfile.Resolution{Name: "@scope/real", Version: "1.2.3"}) {
		t.Errorf("alias: %+v", r)
	}
	if r, _ := l.Resolve("", "y", ""); r.Link != "../y" {
		t.Errorf("file: %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{`{`, `[]`, `{"lockfileVersion":"three"}`, `{"lockfileVersion":0}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) succeeded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(data)
	}
	f.Add([]byte(`{"lockfileVersion":1,"dependencies":{"x":{"version":"npm:y@1"}}}`))
	f.Add([]byte(`{"lockfileVersion":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "ws/package-lock.json"
		l, err := ParseFile(file, data)
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, imp := range []string{"", "packages/a", "../x"} {
			l.Resolve(imp, "a", "^1")
			l.Resolve(imp, "@s/b", "")
		}
		// Every package installed at the top of the root's node_modules is
		// what the root resolves for its name.
		for key, p := range l.Packages {
			name, ok := strings.CutPrefix(key, "node_modules/")
			if !ok || strings.Contains(name, "/node_modules/") || path.Join("node_modules", name) != key {
				continue
			}
			r, ok := l.Resolve("", name, "")
			if !ok {
				t.Fatalf("Resolve(%q) found nothing for the lock's %q", name, key)
			}
			if p.Link {
				if r.Link != lockfile.JoinRel("", p.Resolved) {
					t.Fatalf("Resolve(%q) = %+v for a link to %q", name, r, p.Resolved)
				}
			} else if r.Version != p.Version && (p.Version != "" || r.Version != p.Resolved) {
				t.Fatalf("Resolve(%q) = %+v, the lock's %q records %+v", name, r, key, p)
			}
		}
	})
}

// A lockfile of the wrong shape is reported in the file's terms: the whole
// document when it is not an object, else the member of the wrong type,
// with its place (a "packages" array is not "not an object").
func TestParseErrorMessages(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "package-lock.json: a package lock must be a JSON object"},
		{"{\"lockfileVersion\": 3,\n \"packages\": []}", `package-lock.json:2:14: packages: expected an object, found an array`},
		// The shape npm writes is read by scanLock: its version errors name
		// the file too.
		{`{"lockfileVersion":0}`, "package-lock.json: invalid package lock: unknown lockfileVersion 0"},
		{`{"lockfileVersion":"three","packages":{}}`, `package-lock.json: invalid package lock: lockfileVersion "three" is not an integer`},
	} {
		_, err := ParseFile("package-lock.json", []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFile(%s) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

// TestParseObjectsAsJSONParse: a lockfile is read with the object
// semantics of JSON.parse, which npm reads it with, even in the shapes
// the scanner leaves to the general decoder: a repeated key's last value
// replaces the earlier one (a second "packages" is the whole map, not
// merged into the first), and keys match exactly ("Packages" and
// "Version" are other members). With node on PATH, each answer is also
// checked against JSON.parse.
func TestParseObjectsAsJSONParse(t *testing.T) {
	for _, c := range []struct{ name, doc, key, want string }{
		{"repeated packages", `{"lockfileVersion":3,"packages":{"node_modules/gone":{"version":"1.0.0"},"node_modules/plug":{"version":"1.0.0"}},"packages":{"node_modules/plug":{"version":"1.2.0"}}}`, "node_modules/gone", "<absent>"},
		{"repeated packages, last", `{"lockfileVersion":3,"packages":{"node_modules/plug":{"version":"1.0.0"}},"packages":{"node_modules/plug":{"version":"1.2.0"}}}`, "node_modules/plug", "1.2.0"},
		{"Packages beside packages", `{"lockfileVersion":3,"packages":{"node_modules/plug":{"version":"1.0.0"}},"Packages":{"node_modules/gone":{"version":"6.6.6"}}}`, "node_modules/gone", "<absent>"},
		{"Packages alone", `{"lockfileVersion":3,"Packages":{"node_modules/gone":{"version":"6.6.6"}}}`, "node_modules/gone", "<absent>"},
		{"Version after version", `{"lockfileVersion":3,"packages":{"node_modules/plug":{"version":"1.0.0","Version":"9.9.9"}}}`, "node_modules/plug", "1.0.0"},
		{"Version alone", `{"lockfileVersion":3,"packages":{"node_modules/plug":{"Version":"9.9.9"}}}`, "node_modules/plug", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			got := "<absent>"
			if p, ok := l.Packages[c.key]; ok {
				got = p.Version
			}
			if got != c.want {
				t.Errorf("%s: version %q, want %q", c.key, got, c.want)
			}
			if n, ok := jsonParseVersion(t, c.doc, c.key); ok && n != c.want {
				t.Errorf("%s: JSON.parse reads %q, the test wants %q", c.key, n, c.want)
			}
		})
	}
}

// jsonParseVersion is what node's JSON.parse (npm's reader) sees at
// packages[key].version: "<absent>" without the entry, "" without the
// field; ok is false without node.
func jsonParseVersion(t *testing.T, doc, key string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		return "", false
	}
	cmd := exec.Command("node", "-e", `let d="";process.stdin.on("data",c=>d+=c).on("end",()=>{const e=(JSON.parse(d).packages||{})[process.argv[1]];console.log(e?(e.version??""):"<absent>")})`, key)
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal("node:", err)
	}
	return strings.TrimSuffix(string(out), "\n"), true
}

// TestParseMalformedNamesTheFile: every document that is not a lockfile
// npm can read — empty, not an object, truncated, a member of the wrong
// type, an unusable lockfileVersion, nesting past encoding/json's depth
// limit, a UTF-16 byte order mark — fails with an error naming the file;
// "null" and a null "packages" beside a v1 tree are read.
func TestParseMalformedNamesTheFile(t *testing.T) {
	const file = "/w/package-lock.json"
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, doc := range []string{"", "[]", `{"lockfileVersion":3,"packages":{"node_modules/x":{"version":"1.0.0"}`,
		`{"packages":[]}`, `{"lockfileVersion":"3"}`, `{"lockfileVersion":3.0}`, `{"lockfileVersion":0}`,
		`{"lockfileVersion":3,"packages":{"x":` + deep + `}}`, `{"lockfileVersion":1,"dependencies":{"a":` + deep + `}}`, "\xff\xfe{}"} {
		if _, err := ParseFile(file, []byte(doc)); err == nil || !strings.HasPrefix(err.Error(), file) {
			t.Errorf("ParseFile(%.60q) = %v, want an error naming %s", doc, err, file)
		}
	}
	for doc, want := range map[string]int{"null": 0, `{"lockfileVersion":3,"packages":null,"dependencies":{"a":{"version":"1.0.0"}}}`: 1} {
		if l, err := ParseFile(file, []byte(doc)); err != nil || len(l.Packages) != want {
			t.Errorf("ParseFile(%s) = %v, want %d packages", doc, err, want)
		}
	}
}
