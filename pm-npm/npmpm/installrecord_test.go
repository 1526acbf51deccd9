package npmpm

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// persistedEntries returns, for each active_plugins answer persisted
// under cache, the paths it stamps; it fails t when there is none.
func persistedEntries(t *testing.T, cache string) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache"))
	if len(files) == 0 {
		t.Fatal("no active_plugins answer was persisted")
	}
	var out [][]string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := depcache.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, s := range e.Stamps {
			paths = append(paths, s.Path)
		}
		out = append(out, paths)
	}
	return out
}

// persistedStamps returns the paths the active_plugins answers persisted
// under cache stamp.
func persistedStamps(t *testing.T, cache string) []string {
	t.Helper()
	return slices.Concat(persistedEntries(t, cache)...)
}

// TestCachedAnswerStampsTheRecord: under a node_modules holding an
// installer record, the persisted answer stamps the record, the listings
// and the offered roots: a number that grows with the plugins offered, not
// with the packages installed. Without a record it stamps every package.
func TestCachedAnswerStampsTheRecord(t *testing.T) {
	const n = 300
	for _, installed := range []bool{true, false} {
		ws := t.TempDir()
		deps := genHookProject(t, ws, n, installed)
		settle()
		p, cache := newPM(t, ws, nil)
		offers, err := p.ActivePlugins(context.Background(), deps)
		if err != nil || len(offers) != n/10 {
			t.Fatalf("%d offers, %v", len(offers), err)
		}
		stamps := persistedStamps(t, cache)
		ancestors := len(strings.Split(filepath.Clean(ws), string(filepath.Separator)))
		// The workspace's package.json and pnpm-workspace.yaml, each
		// parent's node_modules, package.json and pnpm-workspace.yaml
		// (whether it is a workspace root including the workspace, as
		// list_deps finds the project), the record, each offered root.
		limit := 2 + ancestors + 2*(ancestors-1) + 1 + n/10
		if installed && len(stamps) > limit {
			t.Errorf("with npm's record: %d stamps for %d packages and %d offers, want at most %d", len(stamps), n, len(offers), limit)
		}
		if !installed && len(stamps) < 2*n {
			t.Errorf("without a record: %d stamps for %d packages, want every package's directory and package.json", len(stamps), n)
		}
	}
}

// TestPnpmLayoutTrust: in pnpm's layout (node_modules/.modules.yaml, every
// package a link into node_modules/.pnpm, members' node_modules linking
// there too), the links into .pnpm are installed content, stamped through
// the root's record, while a link: dependency leading out of node_modules
// and the copy of a file: directory pnpm hard-links into .pnpm are the
// user's and stay stamped file by file.
func TestPnpmLayoutTrust(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":               `{"name":"root","private":true}`,
		"pnpm-workspace.yaml":        "packages:\n  - 'packages/*'\n",
		"packages/a/package.json":    `{"name":"a","version":"1.0.0","dependencies":{"plug":"^1","local":"link:../../local"}}`,
		"local/package.json":         `{"name":"local","version":"0.1.0"}`,
		"local/SYMPOSIUM.toml":       "",
		"node_modules/.modules.yaml": "layoutVersion: 5\n",
		"node_modules/.pnpm/plug@1.0.0/node_modules/plug/package.json":   `{"name":"plug","version":"1.0.0"}`,
		"node_modules/.pnpm/plug@1.0.0/node_modules/plug/SYMPOSIUM.toml": "[defaults]\nskills = false\n",
		"copied/package.json":   `{"name":"copied","version":"0.2.0"}`,
		"copied/SYMPOSIUM.toml": "",
	})
	// A file: directory: pnpm hard-links its files into .pnpm.
	copyDir := filepath.Join(ws, "node_modules/.pnpm/copied@file+..+..+copied/node_modules/copied")
	if err := os.MkdirAll(copyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "SYMPOSIUM.toml"} {
		if err := os.Link(filepath.Join(ws, "copied", f), filepath.Join(copyDir, f)); err != nil {
			t.Skip("no hard links:", err)
		}
	}
	for link, target := range map[string]string{
		"packages/a/node_modules/plug":   "../../../node_modules/.pnpm/plug@1.0.0/node_modules/plug",
		"packages/a/node_modules/local":  "../../../local",
		"packages/a/node_modules/copied": "../../../node_modules/.pnpm/copied@file+..+..+copied/node_modules/copied",
	} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Skip("no symbolic links:", err)
		}
	}
	deps := []protocol.PackageID{npmID("plug", "1.0.0"), npmID("local", "0.1.0"), npmID("copied", "0.2.0")}
	settle()
	p, cache := newPM(t, ws, nil)
	first, err := p.ActivePlugins(context.Background(), deps)
	if err != nil || len(first) != 3 {
		t.Fatalf("offers %v, %v", pmtest.OfferSet(first), err)
	}
	stamps := strings.Join(persistedStamps(t, cache), "\n")
	for _, want := range []string{"node_modules/.modules.yaml", "local/package.json", "local/SYMPOSIUM.toml", "copied/SYMPOSIUM.toml"} {
		if !strings.Contains(stamps, filepath.FromSlash(want)) {
			t.Errorf("the persisted answer does not stamp %s:\n%s", want, stamps)
		}
	}
	if strings.Contains(stamps, filepath.FromSlash("plug/package.json")) {
		t.Errorf("the persisted answer stamps the package.json of a package pnpm installed:\n%s", stamps)
	}
	answer := func(cached bool) map[string]string {
		t.Helper()
		q := p
		if !cached {
			q, _ = newPM(t, ws, nil)
			q.cacheRoot = ""
		}
		offers, err := q.ActivePlugins(context.Background(), deps)
		if err != nil {
			t.Fatal(err)
		}
		return pmtest.OfferSet(offers)
	}
	// A hand edit inside .pnpm is not seen; one of the link: directory is.
	writeFiles(t, ws, map[string]string{"node_modules/.pnpm/plug@1.0.0/node_modules/plug/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
	if got, fresh := answer(true), answer(false); !maps.Equal(got, pmtest.OfferSet(first)) || maps.Equal(fresh, got) {
		t.Errorf("after a hand edit inside .pnpm: cached %v, fresh %v, first %v (want the cached answer kept)", got, fresh, pmtest.OfferSet(first))
	}
	for _, f := range []string{"local/SYMPOSIUM.toml", "copied/SYMPOSIUM.toml"} {
		before := answer(true)
		edited, err := os.OpenFile(filepath.Join(ws, f), os.O_WRONLY|os.O_TRUNC, 0) // in place, as pnpm's hard link sees it
		if err != nil {
			t.Fatal(err)
		}
		edited.WriteString("[defaults]\nskills = true\n")
		edited.Close()
		if got, fresh := answer(true), answer(false); !maps.Equal(got, fresh) || maps.Equal(got, before) {
			t.Errorf("after an edit of %s in place: cached %v, fresh %v, before %v", f, got, fresh, before)
		}
	}
}
