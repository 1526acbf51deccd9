package pypipm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookManifest declares a hook: what an attacker wants offered.
const hookManifest = "name = \"elsewhere\"\n\n[[hooks]]\nname = \"h\"\nevent = \"Stop\"\ncommand = { script = \"hook.sh\" }\n"

// elsewhere makes a directory outside the virtualenv holding everything a
// plugin root could be read from, with a hook.
func elsewhere(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"SYMPOSIUM.toml":          hookManifest,
		"hook.sh":                 "#!/bin/sh\n",
		"pyproject.toml":          "[project]\nname = \"x\"\nversion = \"1\"\n\n[tool.symposium]\nname = \"elsewhere\"\n\n[[tool.symposium.hooks]]\nname = \"h\"\nevent = \"Stop\"\ncommand = { script = \"hook.sh\" }\n",
		"evil_pkg/SYMPOSIUM.toml": hookManifest,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	return dir
}

// TestActivePluginsRootsStayInSitePackages installs, with the real pip,
// wheels whose own direct_url.json points at a directory elsewhere (as an
// editable install and as a local directory install), and a package whose
// directory is replaced by a symbolic link to elsewhere: active_plugins
// offers nothing rooted outside site-packages, and says so naming the
// distribution and the path. An editable install whose .pth file names
// its project is offered from the project, with a warning saying so.
func TestActivePluginsRootsStayInSitePackages(t *testing.T) {
	t.Parallel()
	out := elsewhere(t)
	outURL := "file://" + filepath.ToSlash(out)
	ix := fakeindex.Start(
		fakeindex.Package{Name: "claims-editable", Version: "1.0", Files: map[string]string{
			"claims_editable/__init__.py":                   "",
			"claims_editable-1.0.dist-info/direct_url.json": `{"url": "` + outURL + `", "dir_info": {"editable": true}}`,
		}, EntryPoints: "[symposium]\np = evil_pkg\n"},
		fakeindex.Package{Name: "claims-dir", Version: "1.0", Files: map[string]string{
			"claims_dir/__init__.py":                   "",
			"claims_dir/SYMPOSIUM.toml":                "name = \"own\"\n",
			"claims_dir-1.0.dist-info/direct_url.json": `{"url": "` + outURL + `", "dir_info": {}}`,
		}},
		fakeindex.Package{Name: "linked", Version: "1.0", Files: map[string]string{
			"linked_pkg/__init__.py":    "",
			"linked_pkg/SYMPOSIUM.toml": "name = \"linked\"\n",
		}},
		fakeindex.Package{Name: "linked-ep", Version: "1.0", Files: map[string]string{
			"linked_ep/__init__.py": "",
		}, EntryPoints: "[symposium]\np = linked_ep\n"},
		fakeindex.Package{Name: "aliased", Version: "1.0", Files: map[string]string{
			"aliased_real/__init__.py":    "",
			"aliased_real/SYMPOSIUM.toml": "name = \"aliased\"\n",
		}, EntryPoints: "[symposium]\np = aliased_alias\n"},
	)
	t.Cleanup(ix.Close)
	ws := t.TempDir()
	site := realVenv(t, ws, ix.URL, "claims-editable", "claims-dir", "linked", "linked-ep", "aliased")
	if _, err := os.Stat(filepath.Join(site, "claims_editable-1.0.dist-info", "direct_url.json")); err != nil {
		t.Fatalf("pip did not install the wheel's direct_url.json: %v", err)
	}
	// Package directories replaced by links out of site-packages, and one
	// link that stays inside.
	for _, d := range []string{"linked_pkg", "linked_ep"} {
		os.RemoveAll(filepath.Join(site, d))
		if err := os.Symlink(out, filepath.Join(site, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("aliased_real", filepath.Join(site, "aliased_alias")); err != nil {
		t.Fatal(err)
	}
	// The user's own editable install.
	proj := filepath.Join(ws, "myproj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "pyproject.toml"), []byte("[project]\nname = \"my-proj\"\nversion = \"0.1\"\n\n[tool.symposium]\nname = \"mine\"\n"), 0o644)
	fakeEditable(t, site, "my-proj", "0.1", proj)

	p := newPM(t, ws, t.TempDir(), nil)
	var logs pmtest.LogBuffer
	p.log = slog.New(slog.NewTextHandler(&logs, nil))
	var deps []protocol.PackageID
	for _, n := range []string{"claims-editable", "claims-dir", "linked", "linked-ep", "aliased", "my-proj"} {
		deps = append(deps, id(n, "*"))
	}
	offers, err := p.ActivePlugins(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	roots := map[string]string{}
	for _, o := range offers {
		roots[o.ID.Name] = o.Root
		if strings.HasPrefix(o.Root, out) {
			t.Errorf("%s offered from %s, outside site-packages", o.ID, o.Root)
		}
	}
	want := map[string]string{
		"claims-dir": filepath.Join(site, "claims_dir"),
		"aliased":    filepath.Join(site, "aliased_alias"),
		"my-proj":    proj,
	}
	for n, r := range want {
		if roots[n] != r {
			t.Errorf("%s: root %q, want %q", n, roots[n], r)
		}
	}
	if len(offers) != len(want) {
		t.Errorf("offered roots: %v, want %v", roots, want)
	}
	log := logs.String()
	for _, s := range []string{
		"claims-editable@1.0 dir=" + out,                  // the unsupported editable claim
		"not offering the source directory", "claims-dir", // the non-editable one
		"refusing a plugin root outside", "linked@1.0 root=" + filepath.Join(site, "linked_pkg"),
		"linked-ep@1.0 root=" + filepath.Join(site, "linked_ep"),
		"editable install, outside site-packages\" id=pypi:my-proj@0.1 root=" + proj,
	} {
		if !strings.Contains(log, s) {
			t.Errorf("warnings do not mention %q:\n%s", s, log)
		}
	}
}

// TestEditableProject is the unit table of the editable-install rule.
func TestEditableProject(t *testing.T) {
	site := t.TempDir()
	proj := t.TempDir()
	p := newPM(t, t.TempDir(), t.TempDir(), nil)
	var logs pmtest.LogBuffer
	p.log = slog.New(slog.NewTextHandler(&logs, nil))
	di := filepath.Join(site, "x-1.dist-info")
	os.MkdirAll(di, 0o755)
	write := func(name, body string) { os.WriteFile(filepath.Join(di, name), []byte(body), 0o644) }
	in := installed{id: id("x", "1"), site: site, distInfo: di}
	editable := `{"url": "file://` + filepath.ToSlash(proj) + `", "dir_info": {"editable": true}}`
	for _, tc := range []struct {
		name, directURL, record, pth string
		want                         bool
	}{
		{"no direct_url.json", "", "", "", false},
		{"archive install", `{"url": "https://x/x-1.whl", "archive_info": {}}`, "", "", false},
		{"editable with its .pth", editable, "__editable__.x-1.pth,,\n", proj + "/src\n", true},
		{"editable with a finder", editable, "__editable__.x-1.pth,,\n", "import __editable___x_finder; __editable___x_finder.install()\nMAPPING = {'x': '" + proj + "/x'}\n", true},
		{"editable, .pth names a sibling", editable, "__editable__.x-1.pth,,\n", proj + "-other\n", false},
		{"editable, .pth not in RECORD", editable, "", proj + "\n", false},
		{"editable, no .pth", editable, "x/__init__.py,,\n", "", false},
		{"not editable", `{"url": "file://` + filepath.ToSlash(proj) + `", "dir_info": {}}`, "__editable__.x-1.pth,,\n", proj + "\n", false},
		{"remote host", `{"url": "file://evil.example` + filepath.ToSlash(proj) + `", "dir_info": {"editable": true}}`, "__editable__.x-1.pth,,\n", proj + "\n", false},
		{"bad JSON", `{"url": `, "", "", false},
	} {
		os.Remove(filepath.Join(di, "direct_url.json"))
		if tc.directURL != "" {
			write("direct_url.json", tc.directURL)
		}
		write("RECORD", tc.record)
		os.WriteFile(filepath.Join(site, "__editable__.x-1.pth"), []byte(tc.pth), 0o644)
		got, via, ok := p.editableProject(context.Background(), in)
		if ok != tc.want || ok && (got != proj || via != "__editable__.x-1.pth") {
			t.Errorf("%s: got %q (via %q) %v, want %v", tc.name, got, via, ok, tc.want)
		}
	}
	// A direct_url.json that is a FIFO or a link is not read.
	os.Remove(filepath.Join(di, "direct_url.json"))
	target := filepath.Join(t.TempDir(), "du.json")
	os.WriteFile(target, []byte(editable), 0o644)
	os.Symlink(target, filepath.Join(di, "direct_url.json"))
	if _, _, ok := p.editableProject(context.Background(), in); ok {
		t.Error("direct_url.json read through a symbolic link")
	}
}

// TestAllowedRoot checks containment after resolving links.
func TestAllowedRoot(t *testing.T) {
	site, out := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(site, "pkg", "sub"), 0o755)
	os.Symlink(out, filepath.Join(site, "away"))
	os.Symlink("pkg", filepath.Join(site, "alias"))
	os.Symlink("../..", filepath.Join(site, "pkg", "up"))
	p := newPM(t, t.TempDir(), t.TempDir(), nil)
	in := installed{id: id("x", "1"), site: site, distInfo: filepath.Join(site, "x-1.dist-info")}
	for dir, want := range map[string]bool{
		filepath.Join(site, "pkg"):        true,
		filepath.Join(site, "pkg", "sub"): true,
		filepath.Join(site, "alias"):      true,
		filepath.Join(site, "away"):       false,
		filepath.Join(site, "pkg", "up"):  false,
		out:                               false,
		filepath.Join(site, "missing"):    false,
	} {
		if got := p.allowedRoot(context.Background(), in, dir); got != want {
			t.Errorf("allowedRoot(%s) = %v, want %v", dir, got, want)
		}
	}
	// An editable project is allowed only when corroborated.
	in.source = out
	if p.allowedRoot(context.Background(), in, out) {
		t.Error("an uncorroborated source tree allowed")
	}
	in.editable = true
	if !p.allowedRoot(context.Background(), in, out) {
		t.Error("a corroborated editable project refused")
	}
}
