package packagelock

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

// v1Cases are v1 trees whose keys only JSON.parse's object semantics read
// right: differently cased fields, repeated fields and entries, escaped
// names, fields of other types.
var v1Cases = []string{
	`{"a":{"version":"1.0.0","Version":"9.9.9"}}`,
	`{"a":{"Version":"9.9.9","resolved":"https://r/a/-/a-1.0.0.tgz"}}`,
	`{"a":{"version":"1.0.0","VERSION":"9.9.9","Resolved":"x","Integrity":"y","Dev":true,"Optional":true,"Requires":{"b":"^1"},"requires":{"b":"^1"}}}`,
	`{"a":{"version":"1.0.0","dev":false,"Dev":true,"optional":true,"optional":false}}`,
	`{"m":{"version":"file:m","dependencies":{"x":{"version":"1.0.0"}},"Dependencies":{"y":{"version":"2.0.0"}},"dependencies":{"z":{"version":"3.0.0"}}}}`,
	`{"m":{"version":"file:m","Dependencies":{"y":{"version":"2.0.0"}}}}`,
	`{"m":{"Version":"file:m","dependencies":{"x":{"version":"1.0.0"}}}}`,
	`{"a":{"version":"1.0.0"},"a":{"dev":true}}`,
	`{"a":{"version":"1.0.0"},"a":7}`,
	`{"a":{"version":"1.0.0"},"a":null}`,
	`{"a":{"version":"1.0.0","version":null}}`,
	`{"a":{"version":"1.0.0","version":2}}`,
	`{"a":{"version":"1.0.0","dependencies":{"x":{"version":"1.0.0"}},"dependencies":null}}`,
	`{"a":{"\u0076ersion":"1.0.0","versio\u006e":"1.1.0"},"\u0062":{"version":"caf\u00e9"}}`,
	`{"a":{"version":"1.0.0","dev":"yes","optional":1,"resolved":{},"integrity":[]},"b":[],"c":"1.0.0","d":true}`,
	`{"__proto__":{"version":"1.0.0"},"constructor":{"version":"2.0.0"}}`,
	`{"a":{"version":"1.0.0","dependencies":{"b":{"version":"2.0.0","dependencies":{"c":{"version":"3.0.0","Dependencies":{"d":{}}}}}}}}`,
	`{"a":{"version":"1.0.0","requires":{"x":[[[{"version":"9"}]]]},"dependencies":{}}}`,
	`{}`,
}

// flatV1 lists every entry of a v1 tree as JSON.parse reads it, one line
// each, sorted: the path of names, then version, resolved, integrity,
// dev, optional (a field of another type than npm writes counts as
// absent).
func flatV1(deps map[string]V1Dep) []string {
	var out []string
	var walk func(prefix []string, deps map[string]V1Dep)
	walk = func(prefix []string, deps map[string]V1Dep) {
		for name, d := range deps {
			p := append(slices.Clip(prefix), name)
			b, _ := json.Marshal(p)
			out = append(out, fmt.Sprintf("%s\t%q\t%q\t%q\t%v\t%v", b, d.Version, d.Resolved, d.Integrity, d.Dev, d.Optional))
			walk(p, d.Dependencies)
		}
	}
	walk(nil, deps)
	slices.Sort(out)
	return out
}

// flatV1JS is flatV1 in JavaScript, over what JSON.parse reads: node's
// answer for each tree, or nil without node.
const flatV1JS = `
const docs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const str = v => typeof v === "string" ? v : "";
const flat = deps => {
  const out = [];
  const walk = (prefix, deps) => {
    for (const name of Object.keys(deps)) {
      const e = deps[name];
      if (e !== null && (typeof e !== "object" || Array.isArray(e))) continue;
      const d = e || {};
      const p = [...prefix, name];
      out.push(JSON.stringify(p) + "\t" + [d.version, d.resolved, d.integrity].map(v => JSON.stringify(str(v))).join("\t") +
        "\t" + (d.dev === true) + "\t" + (d.optional === true));
      const sub = d.dependencies;
      if (sub && typeof sub === "object" && !Array.isArray(sub)) walk(p, sub);
    }
  };
  walk([], deps);
  return out.sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
};
console.log(JSON.stringify(docs.map(d => flat(JSON.parse(d)))));
`

// nodeFlatV1 runs flatV1JS over docs; ok is false without node.
func nodeFlatV1(t *testing.T, docs []string) ([][]string, bool) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		return nil, false
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command("node", "-e", flatV1JS)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal("node:", err)
	}
	var got [][]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	return got, true
}

// TestV1ObjectsAsJSONParse: a v1 "dependencies" tree is read as npm reads
// it, with JSON.parse: "Version", "Dependencies", "Dev", "Resolved" are
// other members than "version", "dependencies", "dev", "resolved"; a
// repeated field's last value wins, a second "dependencies" replacing the
// first rather than merged into it; escaped names are their decoding.
// Each tree is read through Parse, both as the shape the scanner reads
// and as one it leaves to the general decoder, and compared with node's
// JSON.parse of the same tree (skipped without node).
func TestV1ObjectsAsJSONParse(t *testing.T) {
	want, haveNode := nodeFlatV1(t, v1Cases)
	if !haveNode {
		t.Log("node not installed: trees not compared with JSON.parse")
	}
	for i, tree := range v1Cases {
		for _, doc := range []string{
			`{"lockfileVersion":1,"requires":true,"dependencies":` + tree + `}`,
			`{"lockfileVersion":1,"requires":true,"Lockfileversion":9,"dependencies":` + tree + `}`, // left to the general decoder
		} {
			l, err := Parse([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			got := flatV1(l.Dependencies)
			if ref, ok := v1Reference(json.RawMessage(tree)); !ok || !slices.Equal(got, flatV1(ref)) {
				t.Errorf("%s:\n got       %q\n reference %q", doc, got, flatV1(ref))
			}
			if haveNode && !slices.Equal(got, want[i]) {
				t.Errorf("%s:\n got           %q\n JSON.parse's %q", doc, got, want[i])
			}
		}
	}
	// What list_deps asks of those trees.
	for _, c := range []struct {
		tree, importer, name string
		want                 lockfile.Resolution
		ok                   bool
	}{
		{v1Cases[0], "", "a", lockfile.Resolution{Name: "a", Version: "1.0.0"}, true},
		{v1Cases[1], "", "a", lockfile.Resolution{Name: "a", Version: "https://r/a/-/a-1.0.0.tgz"}, true},
		{v1Cases[4], "m", "z", lockfile.Resolution{Name: "z", Version: "3.0.0"}, true},
		{v1Cases[4], "m", "x", lockfile.Resolution{}, false},
		{v1Cases[4], "m", "y", lockfile.Resolution{}, false},
		{v1Cases[5], "m", "y", lockfile.Resolution{}, false},
		{v1Cases[6], "", "m", lockfile.Resolution{Name: "m"}, true},
		{v1Cases[6], "m", "x", lockfile.Resolution{}, false},
		{v1Cases[7], "", "a", lockfile.Resolution{Name: "a"}, true},
		{v1Cases[8], "", "a", lockfile.Resolution{}, false},
		{v1Cases[10], "", "a", lockfile.Resolution{Name: "a"}, true},
		{v1Cases[13], "", "a", lockfile.Resolution{Name: "a", Version: "1.1.0"}, true},
	} {
		l, err := Parse([]byte(`{"lockfileVersion":1,"dependencies":` + c.tree + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := l.Resolve(c.importer, c.name, ""); ok != c.ok || got != c.want {
			t.Errorf("%s: Resolve(%q, %q) = %+v, %v; want %+v, %v", c.tree, c.importer, c.name, got, ok, c.want, c.ok)
		}
	}
}

// v1Reference decodes a v1 tree as scanV1 is documented to, the way
// Parse's general decoder reads "packages" (exactPackage): each object
// into a map of raw values, which keeps a repeated key's last value, then
// each field from its exact key.
func v1Reference(raw json.RawMessage) (map[string]V1Dep, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	out := make(map[string]V1Dep, len(m))
	for name, v := range m {
		if string(v) == "null" {
			out[name] = V1Dep{}
			continue
		}
		var f map[string]json.RawMessage
		if v[0] != '{' || json.Unmarshal(v, &f) != nil {
			continue
		}
		var d V1Dep
		for key, dst := range map[string]*string{"version": &d.Version, "resolved": &d.Resolved, "integrity": &d.Integrity} {
			if json.Unmarshal(f[key], dst) != nil {
				*dst = ""
			}
		}
		for key, dst := range map[string]*bool{"dev": &d.Dev, "optional": &d.Optional} {
			if json.Unmarshal(f[key], dst) != nil {
				*dst = false
			}
		}
		if sub, ok := f["dependencies"]; ok && sub[0] == '{' {
			d.Dependencies, _ = v1Reference(sub)
		}
		out[name] = d
	}
	return out, true
}

// FuzzV1MatchesReference holds scanV1 to v1Reference on every valid JSON
// value, the only input Parse hands it.
func FuzzV1MatchesReference(f *testing.F) {
	for _, c := range v1Cases {
		f.Add([]byte(c))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "v1-*.json"))
	for _, file := range files {
		data, _ := os.ReadFile(file)
		var top struct {
			Dependencies json.RawMessage `json:"dependencies"`
		}
		if json.Unmarshal(data, &top) == nil {
			f.Add([]byte(top.Dependencies))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := scanV1(data)
		want, wok := v1Reference(data)
		if ok != wok || !slices.Equal(flatV1(got), flatV1(want)) {
			t.Fatalf("scanV1(%q) = %v %v, reference %v %v", data, flatV1(got), ok, flatV1(want), wok)
		}
	})
}

// TestV1AcrossTheSample: the top of a v1 tree longer than the sample read
// before its map is made (sampleEntries), or exactly as long, with
// repeated entries and entries that are not objects inside the sample
// and after it, is what v1Reference reads: the last value of a name wins.
func TestV1AcrossTheSample(t *testing.T) {
	for _, n := range []int{sampleEntries - 1, sampleEntries, sampleEntries + 1, 3 * sampleEntries} {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			switch {
			case i == 20 || i == n-1:
				fmt.Fprintf(&b, `"p3":{"version":"1.0.%d"}`, i) // repeated inside the sample, and after it
			case i == 30 || i == n-2:
				b.WriteString(`"p5":false`) // removes p5, inside the sample and after it
			default:
				fmt.Fprintf(&b, `"p%d":{"version":"1.0.%d","dependencies":{"q":{"version":"2.0.%d"}}}`, i, i, i)
			}
		}
		b.WriteString(`}`)
		got, ok := scanV1([]byte(b.String()))
		want, _ := v1Reference(json.RawMessage(b.String()))
		if !ok || !slices.Equal(flatV1(got), flatV1(want)) {
			t.Errorf("%d entries:\n got       %q\n reference %q", n, flatV1(got), flatV1(want))
		}
		if _, ok := got["p5"]; ok {
			t.Errorf("%d entries: p5 kept after a value that is no entry", n)
		}
	}
}
