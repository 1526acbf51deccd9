//go:build unix

package discovery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestRootNotCleanRefused: a root written with ".." is resolved by the
// kernel (os.Stat, os.OpenRoot) through the link or file before the "..",
// while joining paths to it removes "x/.." on paper: the checks would look
// at another directory than the one opened. Such a root is refused, as
// is any root that is not clean.
func TestRootNotCleanRefused(t *testing.T) {
	base := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The real root, reached through pkg/l/..: its skills is a link out.
	must(os.MkdirAll(filepath.Join(base, "real", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(base, "outside", "x"), 0o755))
	must(os.Symlink("../outside", filepath.Join(base, "real", "skills")))
	// What the lexical join looks at instead: a plain directory.
	must(os.MkdirAll(filepath.Join(base, "pkg", "skills"), 0o755))
	must(os.Symlink(filepath.Join(base, "real", "sub"), filepath.Join(base, "pkg", "l")))
	// A root that is no directory at all: a regular file, then "..".
	must(os.WriteFile(filepath.Join(base, "pkg", "file"), nil, 0o644))

	man := json.RawMessage(`{"name":"p","skills":[{"source":{"path":"skills"}}]}`)
	for _, root := range []string{
		filepath.Join(base, "pkg", "l") + "/..",    // kernel: base/real, whose skills leads out
		filepath.Join(base, "pkg", "file") + "/..", // kernel: ENOTDIR
	} {
		of := protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: "p", Version: "1.0.0"}, Root: root, Manifest: man}
		_, wantReason := checkInRoot(of, SourceDependency)
		for _, ps := range []*pathStats{nil, {}} {
			got, reason := checkOffer(of, SourceDependency, "eco", os.OpenRoot, ps)
			if (got == nil) != (wantReason != "") {
				t.Errorf("root %s (pathStats %v): checkOffer valid=%v reason %q; inside the opened root: %q",
					root, ps != nil, got != nil, reason, wantReason)
			}
		}
		if _, reason := ValidateOffer(of, SourceDependency, "eco"); reason == "" {
			fi, err := os.Stat(root)
			t.Errorf("ValidateOffer accepts root %s (os.Stat: %v, err %v); want: %q", root, fi != nil && fi.IsDir(), err, wantReason)
		}
	}
}

// TestDiscoverRootNotCleanInvalid: the same root, end to end: a consented
// dependency whose root the kernel resolves to a directory whose skills
// leads out of it is invalid, not enabled.
func TestDiscoverRootNotCleanInvalid(t *testing.T) {
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "real", "sub"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside", "x"), 0o755)
	os.WriteFile(filepath.Join(base, "outside", "x", "SKILL.md"), []byte("---\nname: x\ndescription: d\n---\n"), 0o644)
	os.Symlink("../outside", filepath.Join(base, "real", "skills"))
	os.MkdirAll(filepath.Join(base, "pkg", "skills"), 0o755)
	os.Symlink(filepath.Join(base, "real", "sub"), filepath.Join(base, "pkg", "l"))
	ws := filepath.Join(base, "ws")
	os.MkdirAll(ws, 0o755)
	root := filepath.Join(base, "pkg", "l") + "/.."
	spec := scriptSpec(t, "eco", map[string]any{
		protocol.MethodActivePlugins: []any{map[string]any{
			"id": protocol.PackageID{PM: "eco", Name: "p", Version: "1.0.0"}, "root": root,
			"manifest": map[string]any{"name": "p", "skills": []any{map[string]any{"source": map[string]any{"path": "skills"}}}}}},
	})
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, spec)
	defer pms.Close()
	cfg := &config.Config{Plugins: config.Plugins{AutoEnable: []config.Selector{{PM: "eco", Name: "p"}}}}
	res := Discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: pms, Kinds: map[string]Source{"eco": SourceDependency}})
	p := plugin(res, "eco", "p")
	if p == nil {
		t.Fatal("no plugin")
	}
	t.Logf("state %s reason %q skills %d warnings %v", p.State, p.Reason, p.Skills, res.Warnings)
	if p.State != Invalid {
		t.Errorf("plugin rooted at %s (the kernel's %s, whose skills is a link leading out) is %s; want invalid", root, filepath.Join(base, "real"), p.State)
	}
}

// TestInitializeDiagnosticShown: a diagnostic the PM sends while
// answering initialize (a problem it met reading its configuration, say)
// is a warning of the discovery that started it.
func TestInitializeDiagnosticShown(t *testing.T) {
	ws := t.TempDir()
	spec := scriptSpec(t, "eco", map[string]any{protocol.MethodActivePlugins: []any{}})
	dir := spec.Env[0][len("SCRIPT_PM_DIR="):]
	if err := os.WriteFile(filepath.Join(dir, "initialize.diag"),
		[]byte(`{"message":"INIT-PROBLEM: ~/.eco/config is not valid TOML; its registries are ignored"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Control: the same diagnostic on active_plugins is shown.
	if err := os.WriteFile(filepath.Join(dir, "active_plugins.diag"),
		[]byte(`{"message":"ACTIVE-PROBLEM: a lockfile was skipped"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, spec)
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms, Kinds: map[string]Source{"eco": SourceDependency}})
	t.Logf("warnings: %v", res.Warnings)
	if !warned(res, "ACTIVE-PROBLEM") {
		t.Fatal("control: active_plugins diagnostic missing")
	}
	if !warned(res, "INIT-PROBLEM") {
		t.Error("the diagnostic sent while answering initialize is dropped without a warning")
	}
}

// TestDuplicateIDsWarned: two plugins with the same id collapse into the
// first, and the one left out is warned about: two workspace members whose
// SYMPOSIUM.toml carry the same name (ids {local, NAME, *}), or a PM
// offering one id twice with different roots.
func TestDuplicateIDsWarned(t *testing.T) {
	base := tree(t, map[string]string{
		"ws/SYMPOSIUM.toml":       "name = \"tools\"\n",
		"ws/inner/SYMPOSIUM.toml": "name = \"tools\"\n\n[[hooks]]\nname = \"h\"\nevent = \"Stop\"\ncommand = { script = \"inner.sh\" }\n",
		"a/SYMPOSIUM.toml":        "",
		"b/SYMPOSIUM.toml":        "",
	})
	ws := filepath.Join(base, "ws")
	spec := scriptSpec(t, "eco", map[string]any{
		protocol.MethodActivePlugins: []any{
			map[string]any{"id": protocol.PackageID{PM: "eco", Name: "p", Version: "1.0.0"}, "root": filepath.Join(base, "a"), "manifest": map[string]any{}},
			map[string]any{"id": protocol.PackageID{PM: "eco", Name: "p", Version: "1.0.0"}, "root": filepath.Join(base, "b"),
				"manifest": map[string]any{"hooks": []any{map[string]any{"name": "h", "event": "Stop", "command": map[string]any{"script": "b.sh"}}}}},
		},
		protocol.MethodWorkspace: protocol.WorkspaceResult{Root: ws, Members: []protocol.WorkspaceMember{{Name: "inner", Version: "1", Dir: filepath.Join(ws, "inner")}}},
	})
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, spec)
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms, Kinds: map[string]Source{"eco": SourceDependency}})
	for _, p := range res.Plugins {
		t.Logf("plugin %s root %s %s", p.ID, p.Root, p.State)
	}
	t.Logf("warnings %v", res.Warnings)
	n := 0
	for _, p := range res.Plugins {
		if p.ID.PM == LocalPM && p.Name == "tools" {
			n++
		}
	}
	if n < 2 && !warned(res, "inner") {
		t.Errorf("workspace member %s (a plugin with a hook) was dropped without a warning", filepath.Join(ws, "inner"))
	}
	if !warned(res, filepath.Join(base, "b")) {
		t.Errorf("the second offer of eco:p@1.0.0 (root %s) was dropped without a warning", filepath.Join(base, "b"))
	}
}
