package fakeregistry

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func publishSample(r *Registry) {
	r.Publish(Version{Name: "left", Version: "1.0.0", Description: "left side"})
	r.Publish(Version{Name: "left", Version: "1.2.0", Description: "left side"})
	r.Publish(Version{Name: "right", Version: "2.0.0", Dependencies: map[string]string{"left": "^1.0.0"}})
	r.Publish(Version{Name: "@acme/widget", Version: "0.3.1", Description: "a scoped widget",
		Files: map[string]string{"skills/w/SKILL.md": "---\nname: w\ndescription: d\n---\n"}})
}

func TestPackumentShapes(t *testing.T) {
	r := New()
	defer r.Close()
	publishSample(r)
	for _, tc := range []struct {
		path, accept string
		abbreviated  bool
	}{
		{"left", "application/json", false},
		{"left", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*", true},
		{"@acme%2fwidget", "", false},
		{"@acme%2Fwidget", "", false},
		{"@acme/widget", "", false},
	} {
		req, _ := http.NewRequest("GET", r.URL()+tc.path, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: status %d err %v", tc.path, resp.StatusCode, err)
		}
		_, hasTime := doc["time"]
		if hasTime == tc.abbreviated {
			t.Errorf("%s with Accept %q: abbreviated=%v, want %v", tc.path, tc.accept, !hasTime, tc.abbreviated)
		}
	}
	resp, err := http.Get(r.URL() + "nope")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("missing package: status %d, want 404", resp.StatusCode)
	}
}

// TestRealNPMInstall proves the fake against the real npm CLI.
func TestRealNPMInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that runs npm install against the fake for minutes: make test runs it; -short (make race) skips it")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed")
	}
	r := New()
	defer r.Close()
	publishSample(r)
	dir := t.TempDir()
	scratch := t.TempDir()
	pkg := `{"name":"app","version":"1.0.0","dependencies":{"right":"^2.0.0","@acme/widget":"~0.3.0","lefty":"npm:left@1.0.0"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := NPMCommand(ctx, r.URL(), dir, scratch, "install").CombinedOutput()
	if err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	for f, want := range map[string]string{
		"node_modules/right/package.json":        "2.0.0",
		"node_modules/left/package.json":         "1.2.0",
		"node_modules/lefty/package.json":        "1.0.0",
		"node_modules/@acme/widget/package.json": "0.3.1",
	} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("npm did not install %s: %v", f, err)
		}
		var m struct{ Version string }
		json.Unmarshal(data, &m)
		if m.Version != want {
			t.Errorf("%s: version %s, want %s", f, m.Version, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules/@acme/widget/skills/w/SKILL.md")); err != nil {
		t.Errorf("tarball content missing: %v", err)
	}
	if r.TarballRequests() < 4 {
		t.Errorf("npm fetched %d tarballs, want at least 4", r.TarballRequests())
	}
}

func TestSearch(t *testing.T) {
	r := New()
	defer r.Close()
	publishSample(r)
	resp, err := http.Get(r.URL() + "-/v1/search?text=widget&size=5")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Objects []struct {
			Package struct{ Name, Description string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Objects) != 1 || doc.Objects[0].Package.Name != "@acme/widget" || doc.Objects[0].Package.Description == "" {
		t.Errorf("search results %+v", doc.Objects)
	}
}
