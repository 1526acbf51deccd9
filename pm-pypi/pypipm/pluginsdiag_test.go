package pypipm

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookDiagnostics runs the hook once, as a new PM process would (a fresh
// PM over the harness, sharing only cache): initialize, list_deps,
// active_plugins. It returns active_plugins' offers and diagnostics.
func hookDiagnostics(t *testing.T, ws, cache string) ([]protocol.Offer, []protocol.Diagnostic) {
	t.Helper()
	c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: cache, Env: testEnv(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var deps []protocol.PackageID
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &deps); err != nil {
		t.Fatal(err)
	}
	var offers []protocol.Offer
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
	if err != nil {
		t.Fatal(err)
	}
	for i := range diags {
		diags[i].Request = nil // each process numbers its own requests
	}
	return offers, diags
}

// TestCachedHookRepeatsDiagnostics: a distribution whose SYMPOSIUM.toml
// does not parse (a warning) and an editable install offered from its
// project directory (an informational diagnostic) get the same
// diagnostics from the second hook, which may use the persisted answer, as
// from the first.
func TestCachedHookRepeatsDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files func(ws string) map[string]string
		level protocol.DiagnosticLevel
	}{
		{"SYMPOSIUM.toml does not parse", func(string) map[string]string {
			return map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = [\n"}
		}, protocol.LevelWarning},
		{"editable install", func(ws string) map[string]string {
			proj := filepath.Join(ws, "edproj")
			di := cacheSite + "plain-1.0.dist-info/"
			return map[string]string{
				di + "direct_url.json":                   `{"url": "file://` + filepath.ToSlash(proj) + `", "dir_info": {"editable": true}}`,
				di + "RECORD":                            "__editable__.plain-1.0.pth,,\n",
				cacheSite + "__editable__.plain-1.0.pth": proj + "\n",
				"edproj/SYMPOSIUM.toml":                  "name = \"editable-plugin\"\n",
			}
		}, protocol.LevelInfo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, cache := t.TempDir(), t.TempDir()
			cacheProject(t, ws)
			writeTree(t, ws, tc.files(ws))
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			offers1, diags1 := hookDiagnostics(t, ws, cache)
			found := false
			for _, d := range diags1 {
				found = found || d.Level == tc.level
			}
			if !found {
				t.Fatalf("no %s diagnostic: %+v (offers %v)", tc.level, diags1, offerSet(offers1))
			}
			offers2, diags2 := hookDiagnostics(t, ws, cache)
			if !reflect.DeepEqual(offerSet(offers1), offerSet(offers2)) {
				t.Errorf("second hook offers %v, first %v", offerSet(offers2), offerSet(offers1))
			}
			if !reflect.DeepEqual(diags1, diags2) {
				t.Errorf("second hook's diagnostics differ from the first's:\nfirst:  %+v\nsecond: %+v", diags1, diags2)
			}
		})
	}
}
