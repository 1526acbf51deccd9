package pypipm

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const skillMD = "---\nname: hello\ndescription: Says hello\n---\nBody.\n"

// demoIndex is an index with plugin and non-plugin distributions, yanked
// and pre-release versions, an sdist-only project and hostile archives.
func demoIndex(t *testing.T) *fakeindex.Index {
	t.Helper()
	ix := fakeindex.Start(demoPackages()...)
	t.Cleanup(ix.Close)
	return ix
}

func demoPackages() []fakeindex.Package {
	evil := func(name string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create(name + "-1.0.dist-info/METADATA")
		w.Write([]byte("Name: " + name + "\nVersion: 1.0\n"))
		w, _ = zw.Create("../../escape.txt")
		w.Write([]byte("gotcha"))
		zw.Close()
		return buf.Bytes()
	}
	bomb := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("bomb-1.0.dist-info/METADATA")
		w.Write([]byte("Name: bomb\nVersion: 1.0\n"))
		w, _ = zw.CreateHeader(&zip.FileHeader{Name: "bomb/zeros", Method: zip.Deflate})
		w.Write(make([]byte, 64<<20))
		zw.Close()
		return buf.Bytes()
	}
	return []fakeindex.Package{
		{Name: "Demo_Plugin", Version: "1.0.0", Summary: "A demo plugin",
			Files: map[string]string{
				"demo_plugin/__init__.py":             "",
				"demo_plugin/skills/hello/SKILL.md":   skillMD,
				"demo_plugin/SYMPOSIUM.toml":          "[[skills]]\nsource.path = \"guidance\"\n",
				"demo_plugin/guidance/extra/SKILL.md": skillMD,
			},
			EntryPoints: "[symposium]\ndemo = demo_plugin\n"},
		{Name: "Demo_Plugin", Version: "1.1.0", Summary: "A demo plugin", Yanked: "broken",
			Files: map[string]string{"demo_plugin/__init__.py": ""}, EntryPoints: "[symposium]\ndemo = demo_plugin\n"},
		{Name: "Demo_Plugin", Version: "2.0.0rc1", Summary: "A demo plugin",
			Files: map[string]string{"demo_plugin/__init__.py": ""}, EntryPoints: "[symposium]\ndemo = demo_plugin\n"},
		{Name: "plain", Version: "0.5", Summary: "No plugin here", Files: map[string]string{"plain/__init__.py": ""}},
		{Name: "skillful", Version: "3.0", Files: map[string]string{"skillful/skills/a/SKILL.md": skillMD}},
		{Name: "source-only", Version: "0.1", Sdist: true,
			Files: map[string]string{"source_only/SYMPOSIUM.toml": "name = \"src\"\n"}},
		{Name: "tampered", Version: "1.0", WrongHash: true, Files: map[string]string{"tampered/x": ""}},
		{Name: "escaper", Version: "1.0", Raw: evil("escaper"), Filename: "escaper-1.0-py3-none-any.whl"},
		{Name: "bomb", Version: "1.0", Raw: bomb(), Filename: "bomb-1.0-py3-none-any.whl"},
		{Name: "pyreq", Version: "1.0", Files: map[string]string{"pyreq/x": ""}},
		{Name: "pyreq", Version: "2.0", RequiresPython: ">=3.99", Files: map[string]string{"pyreq/x": ""}},
		{Name: "cutoff", Version: "1.0", Truncate: true, Files: map[string]string{"cutoff/data.txt": strings.Repeat("cutoff ", 20000)}},
	}
}

func id(name, version string) protocol.PackageID {
	return protocol.PackageID{PM: "pypi", Name: name, Version: version}
}

func code(err error) protocol.Code { return protocol.CodeOf(err) }

func manifestOf(t *testing.T, o protocol.Offer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(o.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFetchLevels(t *testing.T) {
	ix := demoIndex(t)
	ws, cache := t.TempDir(), t.TempDir()
	p := newPM(t, ws, cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()

	if _, err := p.Fetch(ctx, id("demo-plugin", "*"), protocol.UpdateNone); code(err) != protocol.CodeOffline {
		t.Fatalf("none before anything is cached: %v", err)
	}
	res, err := p.Fetch(ctx, id("Demo.Plugin", "*"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	// The yanked 1.1.0 and the pre-release are skipped.
	if res.ID != id("demo-plugin", "1.0.0") {
		t.Errorf("resolved %v", res.ID)
	}
	if _, err := os.Stat(filepath.Join(res.Root, "demo_plugin", "skills", "hello", "SKILL.md")); err != nil {
		t.Errorf("unpacked content: %v", err)
	}
	n := ix.Requests()
	res2, err := p.Fetch(ctx, id("demo-plugin", "1.0.0"), protocol.UpdateNone)
	if err != nil || res2 != res || ix.Requests() != n {
		t.Errorf("none from cache: %v %v (requests %d -> %d)", res2, err, n, ix.Requests())
	}
	res3, err := p.Fetch(ctx, id("demo-plugin", "==1.0.0"), protocol.UpdateCheck)
	if err != nil || res3 != res || ix.Requests() != n {
		t.Errorf("check with an exact cached pin must not hit the index: %v %v", res3, err)
	}
	res4, err := p.Fetch(ctx, id("demo-plugin", "1.0.0"), protocol.UpdateFetch)
	if err != nil || res4 != res || ix.Requests() == n {
		t.Errorf("fetch must re-acquire: %v %v", res4, err)
	}
	// A pin on the yanked version gets it; asking for pre-releases gets
	// the release candidate.
	if res, err := p.Fetch(ctx, id("demo-plugin", "==1.1.0"), protocol.UpdateCheck); err != nil || res.ID.Version != "1.1.0" {
		t.Errorf("pinned yanked: %v %v", res, err)
	}
	if res, err := p.Fetch(ctx, id("demo-plugin", ">=2.0.0rc1"), protocol.UpdateCheck); err != nil || res.ID.Version != "2.0.0rc1" {
		t.Errorf("pre-release named: %v %v", res, err)
	}
	if _, err := p.Fetch(ctx, id("demo-plugin", ">=3"), protocol.UpdateCheck); code(err) != protocol.CodeNotFound {
		t.Errorf("unsatisfiable: %v", err)
	}
	if _, err := p.Fetch(ctx, id("no-such-thing", "*"), protocol.UpdateCheck); code(err) != protocol.CodeNotFound {
		t.Errorf("missing project: %v", err)
	}
	if _, err := p.Fetch(ctx, id("demo-plugin", "=>1"), protocol.UpdateCheck); code(err) != protocol.CodeForeignID {
		t.Errorf("malformed requirement: %v", err)
	}
	if _, err := p.Fetch(ctx, protocol.PackageID{PM: "npm", Name: "x", Version: "*"}, protocol.UpdateCheck); code(err) != protocol.CodeForeignID {
		t.Errorf("foreign id: %v", err)
	}
	// The sdist-only project is read without building.
	res, err = p.Fetch(ctx, id("source_only", "*"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(res.Root, "source_only", "SYMPOSIUM.toml")); err != nil {
		t.Errorf("sdist root %s: %v", res.Root, err)
	}
	ix.Down.Store(true)
	if _, err := p.Fetch(ctx, id("plain", "*"), protocol.UpdateCheck); code(err) != protocol.CodeRegistry {
		t.Errorf("index down: %v", err)
	}
	// With the index down, check serves what the cache has for a range.
	if res, err := p.Fetch(ctx, id("demo-plugin", "~=1.0"), protocol.UpdateCheck); err != nil || res.ID.Version != "1.1.0" {
		t.Errorf("index down, cached range: %v %v", res, err)
	}
}

func TestFetchBadContent(t *testing.T) {
	ix := demoIndex(t)
	ws, cache := t.TempDir(), t.TempDir()
	p := newPM(t, ws, cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	_, err := p.Fetch(ctx, id("tampered", "*"), protocol.UpdateCheck)
	if code(err) != protocol.CodeIntegrity {
		t.Errorf("hash mismatch: %v", err)
	}
	var data protocol.IntegrityData
	if pe, ok := err.(*protocol.Error); ok {
		pe.DecodeData(&data)
	}
	if data.ID.Version != "1.0" || !strings.HasPrefix(data.Expected, "sha256:000") {
		t.Errorf("integrity data %+v", data)
	}
	for _, name := range []string{"escaper", "bomb"} {
		if _, err := p.Fetch(ctx, id(name, "*"), protocol.UpdateCheck); code(err) != protocol.CodeInvalidContent {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Nothing was cached for any of them, and nothing escaped.
	// A download cut halfway is a registry failure, retryable.
	if _, err := p.Fetch(ctx, id("cutoff", "*"), protocol.UpdateCheck); code(err) != protocol.CodeRegistry {
		t.Errorf("cut download: %v", err)
	}
	for _, name := range []string{"tampered", "escaper", "bomb", "cutoff"} {
		if ents, _ := os.ReadDir(filepath.Join(cache, "pypi", unpackedDir, name)); len(ents) != 0 {
			t.Errorf("%s left %d cache entries", name, len(ents))
		}
		if _, err := p.Fetch(ctx, id(name, "*"), protocol.UpdateNone); code(err) != protocol.CodeOffline {
			t.Errorf("%s: none after failure: %v", name, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "pypi", "tmp")); len(ents) != 0 {
		t.Errorf("downloads left behind: %d", len(ents))
	}
	if _, err := os.Stat(filepath.Join(cache, "escape.txt")); err == nil {
		t.Error("escape.txt written")
	}
}

func TestLoadPlugin(t *testing.T) {
	ix := demoIndex(t)
	p := newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	offers, err := p.LoadPlugin(ctx, id("demo-plugin", "*"))
	if err != nil || len(offers) != 1 {
		t.Fatalf("%v %v", offers, err)
	}
	o := offers[0]
	if o.ID != id("demo-plugin", "1.0.0") || filepath.Base(o.Root) != "demo_plugin" {
		t.Errorf("offer %v at %s", o.ID, o.Root)
	}
	m := manifestOf(t, o)
	skills, _ := m["skills"].([]any)
	if m["name"] != "demo-plugin" || len(skills) != 2 {
		t.Errorf("manifest %v", m)
	}
	// No declaration, but skills/ in a package: offered on request.
	offers, err = p.LoadPlugin(ctx, id("skillful", "3.0"))
	if err != nil || len(offers) != 1 || filepath.Base(offers[0].Root) != "skillful" {
		t.Errorf("skillful: %v %v", offers, err)
	}
	// Nothing at all: zero offers, not an error.
	offers, err = p.LoadPlugin(ctx, id("plain", "*"))
	if err != nil || len(offers) != 0 || offers == nil {
		t.Errorf("plain: %#v %v", offers, err)
	}
	// The sdist's package declares a manifest.
	offers, err = p.LoadPlugin(ctx, id("source-only", "*"))
	if err != nil || len(offers) != 1 || manifestOf(t, offers[0])["name"] != "src" {
		t.Errorf("source-only: %v %v", offers, err)
	}
}

func TestSearchAndRefresh(t *testing.T) {
	ix := demoIndex(t)
	p := newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	hits, err := p.Search(ctx, "Demo_Plugin")
	if err != nil || len(hits) != 1 || hits[0].ID != id("demo-plugin", "1.0.0") || hits[0].Description != "A demo plugin" {
		t.Fatalf("exact: %+v %v", hits, err)
	}
	// Without a project list, substrings find nothing.
	if hits, _ := p.Search(ctx, "lai"); len(hits) != 0 {
		t.Errorf("substring before refresh: %+v", hits)
	}
	if ok, err := p.Refresh(ctx, protocol.UpdateNone, false); ok || err != nil {
		t.Errorf("refresh none: %v %v", ok, err)
	}
	if ok, err := p.Refresh(ctx, protocol.UpdateCheck, false); !ok || err != nil {
		t.Errorf("refresh check: %v %v", ok, err)
	}
	if ok, _ := p.Refresh(ctx, protocol.UpdateCheck, false); ok {
		t.Error("second check refreshed a fresh list")
	}
	if ok, err := p.Refresh(ctx, protocol.UpdateFetch, true); !ok || err != nil {
		t.Errorf("refresh fetch: %v %v", ok, err)
	}
	hits, err = p.Search(ctx, "lai")
	if err != nil || len(hits) != 1 || hits[0].ID != id("plain", "0.5") || hits[0].Description != "No plugin here" {
		t.Errorf("substring: %+v %v", hits, err)
	}
	if hits, err := p.Search(ctx, "zzz"); err != nil || len(hits) != 0 {
		t.Errorf("no match: %+v %v", hits, err)
	}
}

// TestRequiresPython: with a virtualenv, files whose Requires-Python
// excludes its interpreter are skipped; without one, nothing is.
func TestRequiresPython(t *testing.T) {
	ix := demoIndex(t)
	ws := t.TempDir()
	site := filepath.Join(ws, ".venv", "lib", "python3.11", "site-packages")
	os.MkdirAll(site, 0o755)
	os.WriteFile(filepath.Join(ws, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.7\n"), 0o644)
	p := newPM(t, ws, t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	if res, err := p.Fetch(context.Background(), id("pyreq", "*"), protocol.UpdateCheck); err != nil || res.ID.Version != "1.0" {
		t.Errorf("with Python 3.11: %v %v", res, err)
	}
	p = newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	if res, err := p.Fetch(context.Background(), id("pyreq", "*"), protocol.UpdateCheck); err != nil || res.ID.Version != "2.0" {
		t.Errorf("without a virtualenv: %v %v", res, err)
	}
}
