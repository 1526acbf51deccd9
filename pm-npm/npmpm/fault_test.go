package npmpm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// bulkyFile returns n bytes that gzip cannot shrink (a sha256 chain), so
// that half a tarball is half its content.
func bulkyFile(n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("seed"))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}

// publishBulky publishes name@1.0.0 with a 256 KiB file and a skill and
// returns the file's content.
func publishBulky(reg *fakeregistry.Registry, name string) string {
	body := bulkyFile(256 << 10)
	reg.Publish(fakeregistry.Version{Name: name, Version: "1.0.0", Files: map[string]string{
		"data.txt":          body,
		"skills/s/SKILL.md": "---\nname: s\ndescription: a skill\n---\n",
	}})
	return body
}

// waitStalled waits for n tarball responses to stall halfway.
func waitStalled(t *testing.T, stalled <-chan string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-stalled:
		case <-time.After(callTimeout):
			t.Fatalf("%d of %d downloads started", i, n)
		}
	}
}

// pkgVersions lists the cached versions of name.
func pkgVersions(t *testing.T, cache, name string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(cache, Name, unpackedDir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkContent verifies a fetched root holds the complete package.
func checkContent(t *testing.T, root, body string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "data.txt"))
	if err != nil || string(b) != body {
		t.Errorf("%s/data.txt: %d bytes (%v), want the %d published", root, len(b), err, len(body))
	}
}

// TestKilledMidDownload kills a PM process with SIGKILL while the registry
// has sent half of a tarball: no cache entry is left, a new process does
// not take anything for cached (update "none" is -32011), and its fetch
// succeeds with the complete content.
func TestKilledMidDownload(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	body := publishBulky(reg, "bulky")
	cache, ws := t.TempDir(), t.TempDir()
	env := map[string]string{"npm_config_registry": reg.URL()}

	stalled := reg.StallTarballs()
	a := startPM(t, ws, cache, isolatedEnv(t, nil), env)
	a.Send(protocol.MethodFetch, protocol.FetchParams{ID: npmID("bulky", "1.0.0"), Update: protocol.UpdateCheck})
	waitStalled(t, stalled, 1)
	// Halfway: the first half is on its way to the temporary download.
	tmp := filepath.Join(cache, Name, "tmp")
	var partial string
	for deadline := time.Now().Add(callTimeout); ; {
		if ents, _ := os.ReadDir(tmp); len(ents) == 1 {
			if fi, err := ents[0].Info(); err == nil && fi.Size() > 0 {
				t.Logf("killing with %s at %d bytes", ents[0].Name(), fi.Size())
				partial = filepath.Join(tmp, ents[0].Name())
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the download never started writing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.kill()
	if v := pkgVersions(t, cache, "bulky"); len(v) != 0 {
		t.Fatalf("a killed download left cache entries %v", v)
	}

	reg.Unstall()
	b := startPM(t, ws, cache, isolatedEnv(t, nil), env)
	_, perr := b.fetch("bulky", "1.0.0", protocol.UpdateNone)
	wantCode(t, "fetch none after the killed download", perr, protocol.CodeOffline)
	// The next process removed the killed one's partial download when it
	// started, minutes before any age limit.
	if _, err := os.Stat(partial); err == nil {
		t.Errorf("the killed process's partial download %s is still there", partial)
	}
	res, perr := b.fetch("bulky", "^1", protocol.UpdateCheck)
	if perr != nil {
		t.Fatalf("fetch after the killed download: %v\nstderr:\n%s", perr, b.Stderr())
	}
	checkContent(t, res.Root, body)
	b.close()
	if v := pkgVersions(t, cache, "bulky"); len(v) != 1 || v[0] != "1.0.0" {
		t.Errorf("cached versions %v, want [1.0.0]", v)
	}
}

// TestTwoProcessesFetchAtOnce has two PM processes download the same
// package into one cache at the same time (the registry holds both
// downloads halfway until both have started): both succeed with the same
// root and complete content, exactly one copy is cached, and neither leaves
// a temporary file.
func TestTwoProcessesFetchAtOnce(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	body := publishBulky(reg, "@acme/bulky")
	cache, ws := t.TempDir(), t.TempDir()
	env := map[string]string{"npm_config_registry": reg.URL()}

	stalled := reg.StallTarballs()
	procs := []*pmProc{
		startPM(t, ws, cache, isolatedEnv(t, nil), env),
		startPM(t, ws, cache, isolatedEnv(t, nil), env),
	}
	for _, p := range procs {
		p.Send(protocol.MethodFetch, protocol.FetchParams{ID: npmID("@acme/bulky", "^1.0.0"), Update: protocol.UpdateFetch})
	}
	waitStalled(t, stalled, len(procs))
	reg.Unstall()
	var roots []string
	for i, p := range procs {
		r := p.Next()
		if r.Error != nil {
			t.Fatalf("process %d: %v\nstderr:\n%s", i, r.Error, p.Stderr())
		}
		var res protocol.FetchResult
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		checkContent(t, res.Root, body)
		roots = append(roots, res.Root)
	}
	for _, p := range procs {
		p.close()
	}
	if roots[0] != roots[1] {
		t.Errorf("roots differ: %s and %s", roots[0], roots[1])
	}
	if v := pkgVersions(t, cache, url.PathEscape("@acme/bulky")); len(v) != 1 {
		t.Errorf("cached copies %v, want exactly one", v)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, Name, unpackedDir)); len(ents) != 1 {
		t.Errorf("cache holds %v, want only the one package", ents)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, Name, "tmp")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
	checkContent(t, roots[0], body)
}

// TestCacheDirDeletedBetweenCalls deletes the whole cache_dir between the
// calls of one connection, as a host cleaning up would: every method keeps
// working, rebuilding what it needs, and nothing deleted is reported as
// still cached.
func TestCacheDirDeletedBetweenCalls(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	body := publishBulky(reg, "bulky")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"installed":"^2.0.0","bulky":"^1.0.0"}}`,
		"package-lock.json": `{"name":"app","lockfileVersion":3,"packages":{"":{"dependencies":{"installed":"^2.0.0","bulky":"^1.0.0"}},` +
			`"node_modules/installed":{"version":"2.1.0"},"node_modules/bulky":{"version":"1.0.0"}}}`,
		"node_modules/installed/package.json":      `{"name":"installed","version":"2.1.0"}`,
		"node_modules/installed/skills/i/SKILL.md": "---\nname: i\ndescription: installed skill\n---\n",
	})
	cache := filepath.Join(t.TempDir(), "cache")
	p := startPM(t, ws, cache, isolatedEnv(t, nil), map[string]string{"npm_config_registry": reg.URL()})
	wipe := func() {
		t.Helper()
		if err := os.RemoveAll(cache); err != nil {
			t.Fatal(err)
		}
	}
	wantDeps := func(when string) {
		t.Helper()
		r := p.Call(protocol.MethodListDeps, nil)
		if r.Error != nil || !strings.Contains(string(r.Result), `"installed","version":"2.1.0"`) || !strings.Contains(string(r.Result), `"bulky","version":"1.0.0"`) {
			t.Errorf("list_deps %s: %s %v", when, r.Result, r.Error)
		}
	}
	wantDeps("first")
	wipe()
	wantDeps("after the cache was deleted")
	wantDeps("again (from the rebuilt cache)")

	res, perr := p.fetch("bulky", "^1", protocol.UpdateCheck)
	if perr != nil {
		t.Fatal(perr)
	}
	wipe()
	_, perr = p.fetch("bulky", "^1", protocol.UpdateNone)
	wantCode(t, "fetch none of a deleted copy", perr, protocol.CodeOffline)
	r := p.Call(protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{npmID("installed", "2.1.0"), npmID("bulky", "1.0.0")}})
	if r.Error != nil || !strings.Contains(string(r.Result), `"installed"`) || strings.Contains(string(r.Result), `"bulky"`) {
		t.Errorf("active_plugins after the cache was deleted: %s %v", r.Result, r.Error)
	}
	res2, perr := p.fetch("bulky", "^1", protocol.UpdateCheck)
	if perr != nil || res2.Root != res.Root {
		t.Fatalf("fetch check after the cache was deleted: %+v %v", res2, perr)
	}
	checkContent(t, res2.Root, body)
	r = p.Call(protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{npmID("bulky", "1.0.0")}})
	if r.Error != nil || !strings.Contains(string(r.Result), `"bulky"`) {
		t.Errorf("active_plugins with the package cached again: %s %v", r.Result, r.Error)
	}
	wipe()
	if r := p.Call(protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: npmID("bulky", "1.0.0")}); r.Error != nil {
		t.Errorf("load_plugin after the cache was deleted: %v", r.Error)
	}
	wipe()
	if res, perr := p.fetch("bulky", "1.0.0", protocol.UpdateFetch); perr != nil {
		t.Errorf("fetch (update fetch) after the cache was deleted: %v", perr)
	} else {
		checkContent(t, res.Root, body)
	}
	wipe()
	wantDeps("after a last deletion")
	p.close()
	if bytes.Contains([]byte(p.Stderr()), []byte("level=ERROR")) {
		t.Errorf("errors logged:\n%s", p.Stderr())
	}
}

// TestCacheDirDeletedMidDownload removes the whole cache directory while a
// tarball is halfway downloaded: the PM unpacks from the download it holds
// into recreated directories and answers with the complete package, rather
// than a bare file-system message.
func TestCacheDirDeletedMidDownload(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	body := publishBulky(reg, "bulky")
	cache, ws := t.TempDir(), t.TempDir()
	env := map[string]string{"npm_config_registry": reg.URL()}

	stalled := reg.StallTarballs()
	a := startPM(t, ws, cache, isolatedEnv(t, nil), env)
	a.Send(protocol.MethodFetch, protocol.FetchParams{ID: npmID("bulky", "1.0.0"), Update: protocol.UpdateCheck})
	waitStalled(t, stalled, 1)
	if err := os.RemoveAll(filepath.Join(cache, Name)); err != nil {
		t.Fatal(err)
	}
	reg.Unstall()
	r := a.Next()
	if r.Error != nil {
		t.Fatalf("fetch with the cache removed mid-download: %v\nstderr:\n%s", r.Error, a.Stderr())
	}
	var res protocol.FetchResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	checkContent(t, res.Root, body)
	a.close()
}
