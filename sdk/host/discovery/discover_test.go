//go:build unix

package discovery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/internal/disktree"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// scriptPM runs discovery with one PM, testdata/script-pm, answering each
// method with answers[method] (a value encoded as JSON).
func scriptPM(t *testing.T, ws, name string, kind Source, answers map[string]any, cfg *config.Config) Result {
	t.Helper()
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, scriptSpec(t, name, answers))
	defer pms.Close()
	if cfg == nil {
		cfg = &config.Config{}
	}
	return Discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: pms, Kinds: map[string]Source{name: kind}})
}

// tree builds files under a new directory (see [disktree.Write]).
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	return disktree.Write(t, files)
}

func plugin(res Result, pm, name string) *Plugin {
	for i, p := range res.Plugins {
		if p.ID.PM == pm && p.Name == name {
			return &res.Plugins[i]
		}
	}
	return nil
}

func warned(res Result, parts ...string) bool {
	for _, w := range res.Warnings {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w.Message, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// A PM's workspace answer narrows the opened workspace, never extends it:
// a root or member outside it is not a trusted workspace plugin, and the
// refusal names the PM and the directory.
func TestDiscoverWorkspaceOnlyNarrows(t *testing.T) {
	base := t.TempDir()
	files := map[string]string{
		"elsewhere/SYMPOSIUM.toml":     "name = \"evil\"\n\n[[hooks]]\nname = \"h\"\nevent = \"Stop\"\ncommand = { script = \"pwn.sh\" }\n",
		"elsewhere/far/SYMPOSIUM.toml": "name = \"evil-far\"\n",
		"ws/inner/SYMPOSIUM.toml":      "name = \"inner\"\n",
		"ws/big/SYMPOSIUM.toml":        strings.Repeat("#", MaxManifestSize+1),
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755)
		if err := os.WriteFile(filepath.Join(base, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(base, "ws")
	if err := os.Symlink("../elsewhere", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	member := func(name, dir string) protocol.WorkspaceMember {
		return protocol.WorkspaceMember{Name: name, Version: "1.0.0", Dir: dir}
	}
	res := scriptPM(t, ws, "eco", SourceDependency, map[string]any{
		protocol.MethodActivePlugins: []protocol.Offer{},
		protocol.MethodWorkspace: protocol.WorkspaceResult{Root: filepath.Join(base, "elsewhere"), Members: []protocol.WorkspaceMember{
			member("far", filepath.Join(base, "elsewhere", "far")),
			member("dots", ws+"/inner/../../elsewhere"),
			member("link", filepath.Join(ws, "link")),
			member("relative", "inner"),
			member("inner", filepath.Join(ws, "inner")),
			member("big", filepath.Join(ws, "big")),
		}},
	}, nil)
	for _, name := range []string{"evil", "evil-far"} {
		if p := plugin(res, LocalPM, name); p != nil {
			t.Errorf("plugin %s outside the workspace is listed: %+v", name, *p)
		}
	}
	if p := plugin(res, LocalPM, "inner"); p == nil || p.State != Enabled || p.Source != SourceWorkspace {
		t.Errorf("member inside the workspace: %+v, want an enabled workspace plugin", p)
	}
	for _, want := range [][]string{
		{"pm eco reports workspace root " + filepath.Join(base, "elsewhere") + ", outside the opened workspace " + ws},
		{"pm eco reports workspace member far " + filepath.Join(base, "elsewhere", "far") + ", outside the opened workspace"},
		{"pm eco reports workspace member dots", "outside the opened workspace"},
		{"pm eco reports workspace member link " + filepath.Join(ws, "link") + ", which leads outside the opened workspace"},
		{"pm eco reports workspace member relative inner, outside the opened workspace"},
		{"workspace plugin " + filepath.Join(ws, "big", "SYMPOSIUM.toml"), "over the size cap of 1048576"},
	} {
		if !warned(res, want...) {
			t.Errorf("no warning with %q in %q", want, res.Warnings)
		}
	}
}

// Nothing is walked for a plugin that does not run: a dependency's plugin
// waiting for consent has no skills counted and no walk warning; consented
// to, it is walked inside its root.
func TestDiscoverWalksOnlyEnabled(t *testing.T) {
	root := tree(t, map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\n", "skills/b/SKILL.md": "->/etc/passwd"})
	answers := func() map[string]any {
		return map[string]any{protocol.MethodActivePlugins: []map[string]any{{
			"id": protocol.PackageID{PM: "eco", Name: "dep", Version: "1.0.0"}, "root": root,
			"manifest": map[string]any{"name": "dep", "skills": []any{map[string]any{"source": map[string]any{"path": "skills"}}}},
		}}}
	}
	res := scriptPM(t, t.TempDir(), "eco", SourceDependency, answers(), nil)
	p := plugin(res, "eco", "dep")
	if p == nil || p.State != NeedsConsent || p.Skills != 0 {
		t.Fatalf("dependency plugin: %+v, want needs consent and no skills counted", p)
	}
	if warned(res, "skills/b") {
		t.Errorf("a plugin waiting for consent was walked: %q", res.Warnings)
	}

	cfg := &config.Config{Plugins: config.Plugins{AutoEnable: []config.Selector{{PM: "eco", Name: "dep"}}}}
	res = scriptPM(t, t.TempDir(), "eco", SourceDependency, answers(), cfg)
	if p := plugin(res, "eco", "dep"); p == nil || p.State != Enabled || p.Skills != 1 {
		t.Fatalf("consented plugin: %+v, want enabled with its one skill inside the root", p)
	}
	if !warned(res, "plugin eco:dep@1.0.0 (root "+root+"): skills/b/SKILL.md leads outside the plugin root; left out") {
		t.Errorf("no warning naming the escaping skill in %q", res.Warnings)
	}
}

// Walking is bounded over the whole discovery too: once the budget is
// spent, the remaining enabled plugins are not walked, and a warning says
// how many.
func TestDiscoverWalkBudget(t *testing.T) {
	const manifest = "name = \"%s\"\ndepends-on = \"*\"\n\n[[skills]]\nsource.path = \"skills\"\n"
	reg := tree(t, map[string]string{
		"a/SYMPOSIUM.toml": strings.Replace(manifest, "%s", "a", 1), "a/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
		"b/SYMPOSIUM.toml": strings.Replace(manifest, "%s", "b", 1), "b/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
	})
	ws := t.TempDir()
	pms := host.NewRegistry(host.Options{Workspace: ws})
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms,
		PathRegistries: []PathRegistry{{Name: "reg", Dir: reg}}, WalkBudget: 1})
	a, b := plugin(res, "reg", "a"), plugin(res, "reg", "b")
	if a == nil || b == nil || a.State != Enabled || b.State != Enabled || a.Skills+b.Skills != 1 {
		t.Fatalf("plugins %+v, %+v: want both enabled, one walked", a, b)
	}
	if !warned(res, "walking skill groups took the whole budget of 1ns; the skills of 1 more enabled plugins are not counted") {
		t.Errorf("no budget warning in %q", res.Warnings)
	}
}

// shell() predicates run with `sh -c` in the workspace: the host supplies
// the runner the predicate package leaves out. A workspace plugin whose
// gate holds is enabled; one whose command fails (also when a path is
// meant relative to the plugin, not the workspace) stays dormant.
func TestDiscoverShellPredicateRunsInWorkspace(t *testing.T) {
	ws := t.TempDir()
	for p, c := range map[string]string{
		"marker":              "",
		"up/SYMPOSIUM.toml":   "name = \"up\"\npredicates = [\"shell(test -f ../marker)\"]\n",
		"off/SYMPOSIUM.toml":  "name = \"off\"\npredicates = [\"shell(test -f ../absent)\"]\n",
		"root/SYMPOSIUM.toml": "name = \"root\"\npredicates = [\"shell(test -f marker)\"]\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	member := func(name string) protocol.WorkspaceMember {
		return protocol.WorkspaceMember{Name: name, Version: "1.0.0", Dir: filepath.Join(ws, name)}
	}
	res := scriptPM(t, ws, "eco", SourceDependency, map[string]any{
		protocol.MethodActivePlugins: []protocol.Offer{},
		protocol.MethodWorkspace: protocol.WorkspaceResult{Root: ws, Members: []protocol.WorkspaceMember{
			member("up"), member("off"), member("root"),
		}},
	}, nil)
	for name, want := range map[string]bool{"up": false, "off": false, "root": true} {
		p := plugin(res, LocalPM, name)
		if p == nil {
			t.Fatalf("no plugin %s in %+v", name, res.Plugins)
		}
		if got := p.State == Enabled; got != want {
			t.Errorf("plugin %s: state %v, want enabled=%v (%s)", name, p.State, want, p.Reason)
		}
	}
}

// A problem two methods of a PM run into (a broken manifest read by both
// list_deps and workspace) is reported once.
func TestDiscoverReportsAProblemOnce(t *testing.T) {
	ws := tree(t, map[string]string{"package.json": "{"})
	broken := map[string]any{"code": protocol.CodeInternalError, "message": ws + "/package.json:2:1: invalid JSON: unexpected end of file"}
	res := scriptPM(t, ws, "npm", SourceDependency, map[string]any{
		protocol.MethodInitialize: map[string]any{"protocol_version": protocol.Version, "name": "npm",
			"capabilities": []string{protocol.CapListDeps, protocol.CapWorkspace}},
		protocol.MethodListDeps + ".error":  broken,
		protocol.MethodWorkspace + ".error": broken,
	}, nil)
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "package.json:2:1: invalid JSON") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the broken package.json is reported %d times, want once:\n%v", n, res.Warnings)
	}
}

// A result of the wrong shape is explained in JSON's terms, without Go's
// type names.
func TestDiscoverWrongShapeInJSONTerms(t *testing.T) {
	ws := tree(t, map[string]string{"x": ""})
	res := scriptPM(t, ws, "npm", SourceDependency, map[string]any{
		protocol.MethodInitialize: map[string]any{"protocol_version": protocol.Version, "name": "npm",
			"capabilities": []string{protocol.CapListDeps}},
		protocol.MethodListDeps: map[string]any{"deps": []string{"left-pad"}},
	}, nil)
	if !warned(res, "pm npm: list_deps: answered with a result of the wrong shape: expected an array, found an object") {
		t.Errorf("warnings:\n%v", res.Warnings)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "Go value") || strings.Contains(w.Message, "unmarshal") {
			t.Errorf("Go words in %q", w.Message)
		}
	}
}

// A PM's diagnostics become structured warnings naming the PM, with the
// file, line and package the PM gave; an informational one keeps its level.
func TestDiagnosticsBecomeWarnings(t *testing.T) {
	ws := t.TempDir()
	dir := t.TempDir()
	diag := `{"message":"\"symposium\": hooks is not an array; the hooks are ignored","file":"/w/node_modules/brk/package.json","line":1,"package":{"pm":"eco","name":"brk","version":"1.0.0"}}
{"level":"info","message":"offered from the editable project /src/brk"}
`
	if err := os.WriteFile(filepath.Join(dir, "active_plugins.diag"), []byte(diag), 0o644); err != nil {
		t.Fatal(err)
	}
	answers := map[string]any{
		protocol.MethodInitialize:    map[string]any{"protocol_version": protocol.Version, "name": "eco", "capabilities": []string{}},
		protocol.MethodActivePlugins: []any{},
	}
	for method, v := range answers {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, method+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("testdata/script-pm")
	if err != nil {
		t.Fatal(err)
	}
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()},
		host.Spec{Name: "eco", Command: script, Env: []string{"SCRIPT_PM_DIR=" + dir}})
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms, Kinds: map[string]Source{}})
	if len(res.Warnings) != 2 {
		t.Fatalf("got %d warnings, want 2: %q", len(res.Warnings), res.Warnings)
	}
	w := res.Warnings[0]
	want := `pm eco: eco:brk@1.0.0: "symposium": hooks is not an array; the hooks are ignored (/w/node_modules/brk/package.json:1)`
	if w.PM != "eco" || w.File != "/w/node_modules/brk/package.json" || w.Line != 1 || w.Package == nil ||
		w.Package.Name != "brk" || w.Level != protocol.LevelWarning || w.Message != want {
		t.Errorf("warning: %+v\nwant message %s", w, want)
	}
	if i := res.Warnings[1]; i.Level != protocol.LevelInfo || i.Message != "pm eco: offered from the editable project /src/brk" {
		t.Errorf("info: %+v", i)
	}
}
