package pypipm

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestCachedHookRepeatsDiagnostics: a distribution whose SYMPOSIUM.toml
// does not parse (a warning) and an editable install offered from its
// project directory (an informational diagnostic) get the same
// diagnostics from the second hook, which may use the persisted answer, as
// from the first. In the last case the PM's log counts no warning, so only
// the count of diagnostics sent (pmserver.DiagnosticsSent) keeps the
// answer from being persisted: every diagnostic the PMs send today is
// also logged as a warning, which would hide that check's removal.
func TestCachedHookRepeatsDiagnostics(t *testing.T) {
	editable := func(ws string) map[string]string {
		proj := filepath.Join(ws, "edproj")
		di := cacheSite + "plain-1.0.dist-info/"
		return map[string]string{
			di + "direct_url.json":                   `{"url": "file://` + filepath.ToSlash(proj) + `", "dir_info": {"editable": true}}`,
			di + "RECORD":                            "__editable__.plain-1.0.pth,,\n",
			cacheSite + "__editable__.plain-1.0.pth": proj + "\n",
			"edproj/SYMPOSIUM.toml":                  "name = \"editable-plugin\"\n",
		}
	}
	for _, tc := range []struct {
		name    string
		files   func(ws string) map[string]string
		level   protocol.DiagnosticLevel
		started func(pm pmserver.PM)
	}{
		{"SYMPOSIUM.toml does not parse", func(string) map[string]string {
			return map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = [\n"}
		}, protocol.LevelWarning, nil},
		{"editable install", editable, protocol.LevelInfo, nil},
		{"editable install, no warning logged", editable, protocol.LevelInfo, func(pm pmserver.PM) {
			pm.(*PM).log = slog.New(slog.DiscardHandler) // counts nothing
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own workspace and cache
			ws, cache := t.TempDir(), t.TempDir()
			cacheProject(t, ws)
			writeTree(t, ws, tc.files(ws))
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			h := pmtest.Hook{New: func() pmserver.PM { return New() }, Started: tc.started,
				Options: host.Options{Workspace: ws, CacheDir: cache, Env: testEnv(t, nil)}}
			first := h.Repeat(t)
			found := false
			for _, d := range first.Diagnostics {
				found = found || d.Level == tc.level
			}
			if !found {
				t.Fatalf("no %s diagnostic: %+v (offers %v)", tc.level, first.Diagnostics, pmtest.OfferSet(first.Offers))
			}
		})
	}
}
