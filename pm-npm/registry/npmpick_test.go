package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// npmPickServer starts a registry serving the tarballs tgz by path and the
// packument doc(name) returns by name (doc is called per request, so it
// may name the server's own URL), closed when the test ends.
func npmPickServer(t *testing.T, tgz map[string][]byte, doc func(name string) (string, bool)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/")
		if b, ok := tgz[p]; ok {
			w.Write(b)
			return
		}
		if d, ok := doc(p); ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(d))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// lockedVersion is what npm's package-lock.json records of a package.
type lockedVersion struct {
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
}

// lockedByNPM runs npm install --package-lock-only for a project depending
// on deps against the registry at url, and returns what the lockfile
// records for each top-level package by name, with npm's output and error.
func lockedByNPM(t *testing.T, url string, deps map[string]string) (map[string]lockedVersion, string, error) {
	t.Helper()
	dir := t.TempDir()
	pkg, _ := json.Marshal(map[string]any{"name": "app", "version": "1.0.0", "dependencies": deps})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := fakeregistry.NPMCommand(ctx, url+"/", dir, t.TempDir(), "install", "--package-lock-only", "--ignore-scripts").CombinedOutput()
	if err != nil {
		return nil, string(out), err
	}
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]lockedVersion `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	locked := map[string]lockedVersion{}
	for name := range deps {
		locked[name] = lock.Packages["node_modules/"+name]
	}
	return locked, string(out), nil
}

// checkPicksAsNPM checks that Pick, on the packument doc(name) gives for
// each name of specs, picks the version and integrity npm locked.
func checkPicksAsNPM(t *testing.T, url string, specs map[string]string, doc func(name string) (string, bool)) {
	t.Helper()
	locked, out, err := lockedByNPM(t, url, specs)
	if err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	for name, spec := range specs {
		npm := locked[name]
		d, _ := doc(name)
		p, err := decodePackument([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		v, err := Pick(p, spec)
		if err != nil {
			t.Errorf("%s@%s: %v; npm locked %s", name, spec, err, npm.Version)
			continue
		}
		if v.Version != npm.Version || v.Dist.Integrity != npm.Integrity {
			t.Errorf("%s@%s: picked %q (%s), npm locked %q (%s)", name, spec, v.Version, v.Dist.Integrity, npm.Version, npm.Integrity)
		}
	}
}
