package npmpm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestHostileTarballsProcess publishes the corpus of malicious tarballs and
// fetches each through a real PM process: every one is -32014 with a detail
// naming the cause, none is then offered offline, and nothing was written
// anywhere under the directory holding the workspace, HOME, the cache and a
// canary directory beside them — only the empty cache directories the PM
// creates for its downloads.
func TestHostileTarballsProcess(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	corpus := fakeregistry.HostileTarballs()
	for _, h := range corpus {
		reg.Publish(fakeregistry.Version{Name: h.Name, Version: "1.0.0", Tarball: h.Tgz})
	}
	root := t.TempDir()
	ws, cache, home := filepath.Join(root, "ws"), filepath.Join(root, "cache"), filepath.Join(root, "home")
	writeFiles(t, root, map[string]string{
		"ws/package.json":        `{"name":"app","version":"1.0.0"}`,
		"home/.keep":             "",
		"outside/secret":         "canary",
		"global/npmrc":           "",
		"cache/other-pm/keep.me": "another PM's cache",
	})
	before := tree(t, root)

	p := startPM(t, ws, cache, map[string]string{
		"HOME":                    home,
		"npm_config_globalconfig": filepath.Join(root, "global/npmrc"),
	}, map[string]string{"npm_config_registry": reg.URL()})
	for _, h := range corpus {
		_, perr := p.fetch(h.Name, "1.0.0", protocol.UpdateCheck)
		if perr == nil || perr.Code != protocol.CodeInvalidContent {
			t.Errorf("%s: %v, want -32014", h.Name, perr)
			continue
		}
		var data struct{ Detail string }
		if err := json.Unmarshal(perr.Data, &data); err != nil || !strings.Contains(data.Detail, h.Detail) {
			t.Errorf("%s: detail %q, want it to mention %q", h.Name, data.Detail, h.Detail)
		}
	}
	for _, h := range corpus {
		_, perr := p.fetch(h.Name, "*", protocol.UpdateNone)
		wantCode(t, h.Name+" offline after refusal", perr, protocol.CodeOffline)
	}
	p.close()

	after := tree(t, root)
	created := map[string]bool{"cache/npm": true, "cache/npm/tmp": true}
	for path, desc := range after {
		if was, ok := before[path]; ok {
			if was != desc && path != "cache" { // cache gained the npm directory
				t.Errorf("%s changed: %q → %q", path, was, desc)
			}
			continue
		}
		if !created[path] || !strings.HasPrefix(desc, "d") {
			t.Errorf("%s was written (%s)", path, desc)
		}
	}
	for path := range before {
		if _, ok := after[path]; !ok {
			t.Errorf("%s was removed", path)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(cache, Name, "tmp")); err == nil && len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}
