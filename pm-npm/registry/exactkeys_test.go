package registry

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// packumentSummary is what decodePackument reads of a packument, in one
// line: name, dist-tags, and each version with its description,
// deprecation and dist.
func packumentSummary(p *Packument) string {
	var tags, vers []string
	for k, v := range p.DistTags {
		tags = append(tags, k+"="+v)
	}
	for k, v := range p.Versions {
		dep := string(v.Deprecated)
		if dep == "" {
			dep = "-"
		}
		vers = append(vers, fmt.Sprintf("%s{%q %s %q %q %q}", k, v.Description, dep, v.Dist.Tarball, v.Dist.Shasum, v.Dist.Integrity))
	}
	slices.Sort(tags)
	slices.Sort(vers)
	return fmt.Sprintf("name=%q tags=%q versions=%s", p.Name, tags, vers)
}

// packumentJS reads packuments as npm does, with JSON.parse, and prints
// what decodePackument keeps, as packumentSummary words it.
const packumentJS = `
const docs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const s = v => typeof v === "string" ? v : "";
const q = v => JSON.stringify(s(v));
const sorted = a => a.sort((x, y) => x < y ? -1 : x > y ? 1 : 0);
console.log(JSON.stringify(docs.map(text => {
  const p = JSON.parse(text);
  const tags = sorted(Object.entries(p["dist-tags"] || {}).map(([k, v]) => k + "=" + v));
  const vers = sorted(Object.entries(p.versions || {}).filter(([, v]) => v !== null).map(([k, v]) => {
    const dist = v.dist || {};
    const dep = v.deprecated === undefined ? "-" : JSON.stringify(v.deprecated);
    return k + "{" + [q(v.description), dep, q(dist.tarball), q(dist.shasum), q(dist.integrity)].join(" ") + "}";
  }));
  // Go's %q of a []string: ["a" "b"]
  return "name=" + q(p.name) + " tags=[" + tags.map(t => JSON.stringify(t)).join(" ") + "] versions=[" + vers.join(" ") + "]";
})));
`

// TestPackumentObjectsAsJSONParse: a packument is read as npm reads it,
// with JSON.parse: "Dist-Tags", "Versions", "Dist", "Integrity",
// "Deprecated" (and names encoding/json folds, such as "ſ" for "s") are
// other members; a repeated member's last value replaces the earlier one
// whole (a second "versions" or "dist" is not merged into the first);
// escaped names are their decoding. With node on PATH, each packument is
// also read by JSON.parse and must give the same.
func TestPackumentObjectsAsJSONParse(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{"name":"x","Name":"y","dist-tags":{"latest":"1.0.0"},"Dist-Tags":{"latest":"2.0.0","next":"2.0.0"},"versions":{"1.0.0":{},"2.0.0":{}}}`,
			`name="x" tags=["latest=1.0.0"] versions=[1.0.0{"" - "" "" ""} 2.0.0{"" - "" "" ""}]`},
		{`{"versions":{"1.0.0":{},"3.0.0":{}},"versions":{"1.0.0":{}}}`, `name="" tags=[] versions=[1.0.0{"" - "" "" ""}]`},
		{`{"Versions":{"1.0.0":{}},"versionſ":{"2.0.0":{}}}`, `name="" tags=[] versions=[]`},
		{`{"versions":{"1.0.0":{"dist":{"tarball":"t","integrity":"sha512-A"},"Dist":{"integrity":"sha512-B"}}}}`,
			`name="" tags=[] versions=[1.0.0{"" - "t" "" "sha512-A"}]`},
		{`{"versions":{"1.0.0":{"dist":{"tarball":"t","integrity":"sha512-A"},"dist":{"tarball":"u"}}}}`,
			`name="" tags=[] versions=[1.0.0{"" - "u" "" ""}]`},
		{`{"versions":{"1.0.0":{"dist":{"integrity":"sha512-A","Integrity":"sha512-B","SHASUM":"ab","Tarball":"v"}}}}`,
			`name="" tags=[] versions=[1.0.0{"" - "" "" "sha512-A"}]`},
		{`{"versions":{"1.0.0":{"deprecated":"old","Deprecated":false,"description":"d","Description":"e"}}}`,
			`name="" tags=[] versions=[1.0.0{"d" "old" "" "" ""}]`},
		{`{"versions":{"1.0.0":{"Deprecated":"old"}}}`, `name="" tags=[] versions=[1.0.0{"" - "" "" ""}]`},
		{`{"dist-tags":{"latest":"1.0.0","latest":"2.0.0"},"name":"a","name":"b"}`, `name="b" tags=["latest=2.0.0"] versions=[]`},
		{`{"versions":{"1.0.0":{"description":"a"},"1.0.0":null}}`, `name="" tags=[] versions=[]`},
		{`{"\u0076ersions":{"1.0.0":{"di\u0073t":{"integrity":"sha512-A"}}}}`, `name="" tags=[] versions=[1.0.0{"" - "" "" "sha512-A"}]`},
	}
	docs := make([]string, len(cases))
	for i, c := range cases {
		docs[i] = c.doc
	}
	var node []string
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node not installed: packuments not read with JSON.parse")
	} else {
		in, _ := json.Marshal(docs)
		cmd := exec.Command("node", "-e", packumentJS)
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal("node:", err)
		}
		if err := json.Unmarshal(out, &node); err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
	}
	for i, c := range cases {
		p, err := decodePackument([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if got := packumentSummary(p); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.doc, got, c.want)
		}
		if node != nil && node[i] != c.want {
			t.Errorf("%s:\n JSON.parse reads %s\n the test wants   %s", c.doc, node[i], c.want)
		}
	}
	// A member read of another type than npm writes is still an error.
	for _, doc := range []string{`[]`, `{"versions":[]}`, `{"versions":{"1.0.0":"x"}}`, `{"versions":{"1.0.0":{"dist":{"integrity":5}}}}`, `{"dist-tags":{"latest":1}}`, `{"name":"x"} {}`} {
		if _, err := decodePackument([]byte(doc)); err == nil || !strings.Contains(err.Error(), "invalid packument JSON") {
			t.Errorf("decodePackument(%s) = %v, want an error", doc, err)
		}
	}
}

// TestSearchObjectsAsJSONParse: a search answer is read by exact names,
// the last of a repeated one winning, as npm search reads it.
func TestSearchObjectsAsJSONParse(t *testing.T) {
	for doc, want := range map[string]string{
		`{"objects":[{"package":{"name":"a","version":"1.0.0","Version":"9","Name":"b"}}],"Objects":[{"package":{"name":"z"}}]}`: `[{a 1.0.0 }]`,
		`{"Objects":[{"package":{"name":"z"}}]}`:                                                      `[]`,
		`{"objects":[{"package":{"name":"a"},"Package":{"name":"b"}},{"Package":{"name":"c"}},null]}`: `[{a  }]`,
		`{"objects":[{"package":{"name":"a","description":"x"},"package":{"name":"b"}}]}`:             `[{b  }]`,
		`{"objects":[{"package":{"name":"a"}}],"objects":[]}`:                                         `[]`,
	} {
		got, err := decodeSearch(json.RawMessage(doc))
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("decodeSearch(%s) = %v, %v; want %s", doc, got, err, want)
		}
	}
	for _, doc := range []string{`[]`, `{"objects":{}}`, `{"objects":[{"package":{"name":1}}]}`} {
		if _, err := decodeSearch(json.RawMessage(doc)); err == nil {
			t.Errorf("decodeSearch(%s) succeeded", doc)
		}
	}
}

// TestPackumentPickAsNPM: real npm (skipped without it), locking against
// a registry serving packuments whose keys only JSON.parse reads right,
// chooses the version and records the integrity that Pick and
// decodePackument give: a "Dist-Tags" is not the "dist-tags" npm takes
// "latest" from, a repeated "versions" is its last value alone, a "Dist"
// does not replace the "dist" integrity.
func TestPackumentPickAsNPM(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed: packuments not compared with npm's choice")
	}
	tgz := map[string][]byte{}
	integrity := map[string]string{}
	for _, id := range []string{"tags@1.0.0", "tags@2.0.0", "vers@1.0.0", "vers@3.0.0", "dist@1.0.0"} {
		name, ver, _ := strings.Cut(id, "@")
		b := fakeregistry.Tarball(fakeregistry.FilesToEntries("package/", map[string]string{"package.json": fmt.Sprintf(`{"name":%q,"version":%q}`, name, ver)})...)
		sum := sha512.Sum512(b)
		tgz[fakeregistry.TarballPath(name, ver)] = b
		integrity[id] = "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	}
	var srv *httptest.Server
	dist := func(id string) string {
		name, ver, _ := strings.Cut(id, "@")
		return fmt.Sprintf(`{"tarball":%q,"integrity":%q}`, srv.URL+"/"+fakeregistry.TarballPath(name, ver), integrity[id])
	}
	manifest := func(id string) string {
		name, ver, _ := strings.Cut(id, "@")
		return fmt.Sprintf(`{"name":%q,"version":%q,"dist":%s}`, name, ver, dist(id))
	}
	packuments := map[string]func() string{
		"tags": func() string {
			return `{"name":"tags","dist-tags":{"latest":"1.0.0"},"Dist-Tags":{"latest":"2.0.0"},"versions":{"1.0.0":` + manifest("tags@1.0.0") + `,"2.0.0":` + manifest("tags@2.0.0") + `}}`
		},
		"vers": func() string {
			return `{"name":"vers","dist-tags":{},"versions":{"1.0.0":` + manifest("vers@1.0.0") + `,"3.0.0":` + manifest("vers@3.0.0") + `},"versions":{"1.0.0":` + manifest("vers@1.0.0") + `}}`
		},
		"dist": func() string {
			return `{"name":"dist","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"dist","version":"1.0.0","dist":` + dist("dist@1.0.0") + `,"Dist":{"integrity":"sha512-AAAA"}}}}`
		},
	}
	doc := func(name string) (string, bool) {
		f, ok := packuments[name]
		if !ok {
			return "", false
		}
		return f(), true
	}
	srv = npmPickServer(t, tgz, doc)
	checkPicksAsNPM(t, srv.URL, map[string]string{"tags": "*", "vers": ">=1.0.0", "dist": "*"}, doc)
}
