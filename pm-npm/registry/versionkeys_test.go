package registry

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// oddVersions are version strings a packument's keys (or a spec) may hold
// that are not written as npm publishes versions.
var oddVersions = []string{
	"1.0.0", " 1.0.0", "1.0.0\n", "\t1.0.0 ", "v1.0.0", " v1.0.0", "V1.0.0", "=1.0.0", "vv1.0.0",
	"1.0.0+build.7", "v1.2.3-beta.1+b", "1.2.3-0", "01.0.0", "1.0", "1.0.0-", "1.0.0+", "",
	"1.0.0-rc.1", "9007199254740991.0.0", "9007199254740992.0.0", "1.0.0-99999999999999999999",
}

// TestCanonicalVersion: CanonicalVersion is node-semver's valid() on the
// strict grammar: whitespace, a "v" and build metadata go.
func TestCanonicalVersion(t *testing.T) {
	for v, want := range map[string]string{
		"1.0.0": "1.0.0", " 1.0.0": "1.0.0", "1.0.0\n": "1.0.0", "v1.0.0": "1.0.0",
		"1.0.0+build.7": "1.0.0", "v1.2.3-beta.1+b": "1.2.3-beta.1", "V1.0.0": "", "=1.0.0": "",
		"../1.0.0": "", "1.0.0/..": "", "": "",
	} {
		got, ok := CanonicalVersion(v)
		if got != want || ok != (want != "") {
			t.Errorf("CanonicalVersion(%q) = %q, %v; want %q", v, got, ok, want)
		}
	}
}

// npmSemver returns the directory of the semver package npm itself
// bundles (the one npm-pick-manifest uses), or skips the test.
func npmSemver(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	out, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		t.Skipf("npm root -g: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "npm", "node_modules", "semver")
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		t.Skipf("npm's semver not found: %v", err)
	}
	return dir
}

// TestCanonicalVersionAsNodeSemver: with node and npm installed,
// CanonicalVersion agrees with semver.valid of the semver npm bundles
// wherever the strict grammar accepts the string, and refuses only what
// semver.valid refuses or loose forms ("=1.0.0", "01.0.0").
func TestCanonicalVersionAsNodeSemver(t *testing.T) {
	dir := npmSemver(t)
	in, _ := json.Marshal(oddVersions)
	cmd := exec.Command("node", "-e", `const semver = require(process.argv[1]);
const vs = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(vs.map(v => semver.valid(v))));`, dir)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var valid []*string
	if err := json.Unmarshal(out, &valid); err != nil {
		t.Fatal(err)
	}
	for i, v := range oddVersions {
		got, ok := CanonicalVersion(v)
		switch {
		case valid[i] == nil && ok:
			t.Errorf("CanonicalVersion(%q) = %q; semver.valid refuses it", v, got)
		case valid[i] != nil && (!ok || got != *valid[i]):
			t.Errorf("CanonicalVersion(%q) = %q, %v; semver.valid gives %q", v, got, ok, *valid[i])
		}
	}
}

// TestPickVersionKeys: keys written otherwise than npm publishes them
// take part in ranges and dist-tags as node-semver reads them, and are
// picked under their canonical version; an exact version names only the
// canonical key (npm-pick-manifest looks up versions[semver.clean(spec)]).
func TestPickVersionKeys(t *testing.T) {
	doc := `{"name":"x","dist-tags":{"latest":"1.0.0","spaced":" 3.0.0"},"versions":{
		"1.0.0":{},"1.0.1\n":{},"v1.0.2":{}," 2.0.0":{},"2.0.0+b":{}," 3.0.0":{},"1.5.0":{},"1.5.0+zzz":{},"v1.5.0":{}}}`
	p, err := decodePackument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"~1.0.1":         "1.0.2 v1.0.2",
		">=1.0.1 <1.0.2": "1.0.1 1.0.1\n",
		"^2":             "2.0.0  2.0.0", // " 2.0.0" and "2.0.0+b": the lesser key, whatever the map's order
		"spaced":         "3.0.0  3.0.0",
		"1.0.0":          "1.0.0 1.0.0",
		"v1.0.0":         "1.0.0 1.0.0",
		"=1.0.0":         "1.0.0 1.0.0",
		"1.5.0":          "1.5.0 1.5.0",
		">1.4 <2":        "1.5.0 1.5.0", // the canonical key among three of 1.5.0
	} {
		for range 20 { // map order varies from run to run
			v, err := Pick(p, spec)
			if err != nil {
				t.Fatalf("Pick(%q): %v", spec, err)
			}
			key := ""
			for k, lv := range p.Versions {
				if lv == v {
					key = k
				}
			}
			if got := v.Version + " " + key; got != want {
				t.Fatalf("Pick(%q) = %q (version, key), want %q", spec, got, want)
			}
		}
	}
	for _, spec := range []string{"2.0.0", "3.0.0", "1.0.1", "v1.0.2", "1.0.2"} {
		if v, err := Pick(p, spec); !errors.Is(err, ErrNoMatch) {
			t.Errorf("Pick(%q) = %+v, %v; want ErrNoMatch (no key is that version as written)", spec, v, err)
		}
	}
}

// TestPickVersionKeysAsNPM: with npm installed, `npm install
// --package-lock-only` against packuments whose keys are written " 1.0.1",
// "1.0.2\n" or "v1.0.3" (each manifest saying its canonical version)
// locks the version Pick picks; an exact version that only such a key
// spells is ETARGET for npm and ErrNoMatch for Pick.
func TestPickVersionKeysAsNPM(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed: version keys not compared with npm's choice")
	}
	keys := map[string][]string{ // package → its packument's keys
		"spaced":  {"1.0.0", " 1.0.1"},
		"newline": {"1.0.0", "1.0.2\n"},
		"vee":     {"1.0.0", "v1.0.3"},
		"tagged":  {"1.0.0", " 1.0.4"},
		"exact":   {" 2.0.0"},
	}
	tags := map[string]string{"tagged": `{"latest":" 1.0.4"}`}
	specs := map[string]string{"spaced": "^1.0.0", "newline": "^1.0.0", "vee": "*", "tagged": "latest"}
	tgz := map[string][]byte{}
	var srv *httptest.Server
	packument := func(name string) string {
		var vers []string
		for i, k := range keys[name] {
			c, _ := CanonicalVersion(k)
			path := fmt.Sprintf("%s/-/%s-%d.tgz", name, name, i)
			b := fakeregistry.Tarball(fakeregistry.FilesToEntries("package/", map[string]string{"package.json": fmt.Sprintf(`{"name":%q,"version":%q}`, name, c)})...)
			tgz[path] = b
			sum := sha512.Sum512(b)
			kj, _ := json.Marshal(k)
			vers = append(vers, fmt.Sprintf(`%s:{"name":%q,"version":%q,"dist":{"tarball":%q,"integrity":%q}}`,
				kj, name, c, srv.URL+"/"+path, "sha512-"+base64.StdEncoding.EncodeToString(sum[:])))
		}
		t := tags[name]
		if t == "" {
			t = "{}"
		}
		return fmt.Sprintf(`{"name":%q,"dist-tags":%s,"versions":{%s}}`, name, t, strings.Join(vers, ","))
	}
	docs := map[string]string{}
	doc := func(name string) (string, bool) { d, ok := docs[name]; return d, ok }
	srv = npmPickServer(t, tgz, doc)
	for name := range keys {
		docs[name] = packument(name)
	}
	checkPicksAsNPM(t, srv.URL, specs, doc)
	// An exact version only a non-canonical key spells.
	if _, out, err := lockedByNPM(t, srv.URL, map[string]string{"exact": "2.0.0"}); err == nil || !strings.Contains(out, "ETARGET") {
		t.Errorf("npm install exact@2.0.0 with only the key \" 2.0.0\": want ETARGET, got %v\n%s", err, out)
	}
	p, _ := decodePackument([]byte(docs["exact"]))
	if v, err := Pick(p, "2.0.0"); !errors.Is(err, ErrNoMatch) {
		t.Errorf("Pick(exact, 2.0.0) = %+v, %v; want ErrNoMatch as npm's ETARGET", v, err)
	}
}
