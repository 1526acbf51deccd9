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
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// scriptSpec writes the answers of one testdata/script-pm PM (method →
// value encoded as JSON) and returns its spec.
func scriptSpec(t *testing.T, name string, answers map[string]any) host.Spec {
	t.Helper()
	dir := t.TempDir()
	if _, ok := answers[protocol.MethodInitialize]; !ok {
		answers[protocol.MethodInitialize] = map[string]any{"protocol_version": protocol.Version, "name": name,
			"capabilities": []string{protocol.CapWorkspace}}
	}
	for method, v := range answers {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, method+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("testdata/script-pm")
	if err != nil {
		t.Fatal(err)
	}
	return host.Spec{Name: name, Command: script, Env: []string{"SCRIPT_PM_DIR=" + dir}}
}

// TestDiscoverHostileWorkspace is the whole attack of issue 14 on one
// workspace, in one discovery: a PM that reports a workspace root and
// members outside the opened workspace (one holding a hooked
// SYMPOSIUM.toml), a PM offering a plugin rooted at / with source.path ".",
// and dependency packages whose skill groups hold links leading out of
// their roots (a SKILL.md linking to /etc/passwd, a skill directory linking
// to a directory of skills elsewhere). Nothing outside the workspace is
// enabled, and nothing is walked for a plugin that is not enabled.
//
// What was walked is observed through the walk bound: the entry bound is
// set to 12, which a walk of / passes in its first directories, and a walk of
// any of the hostile packages names the links it left out. A plugin that is
// not enabled must have no skills counted and no warning naming it.
func TestDiscoverHostileWorkspace(t *testing.T) {
	const skillMD = "---\nname: %s\ndescription: d\n---\n"
	base := tree(t, map[string]string{
		// What the outside PM points at.
		"elsewhere/SYMPOSIUM.toml":     "name = \"evil\"\n\n[[hooks]]\nname = \"h\"\nevent = \"Stop\"\ncommand = { script = \"pwn.sh\" }\n",
		"elsewhere/far/SYMPOSIUM.toml": "name = \"evil-far\"\n",
		"outside-skills/x/SKILL.md":    strings.Replace(skillMD, "%s", "x", 1),
		// The opened workspace: its own plugin, with a skill linking out.
		"ws/SYMPOSIUM.toml":         "name = \"ws-own\"\n",
		"ws/skills/ok/SKILL.md":     strings.Replace(skillMD, "%s", "ok", 1),
		"ws/skills/passwd/SKILL.md": "->/etc/passwd",
		"ws/skills/out":             "->../../outside-skills",
		"ws/inner/SYMPOSIUM.toml":   "name = \"inner\"\n",
		"ws/linked-member":          "->../elsewhere",
		// Two dependency packages with escaping links: one the user
		// consented to, one waiting for consent.
		"pkgs/used/skills/a/SKILL.md":   strings.Replace(skillMD, "%s", "a", 1),
		"pkgs/used/skills/b/SKILL.md":   "->/etc/passwd",
		"pkgs/used/skills/c":            "->../../../outside-skills/x",
		"pkgs/unused/skills/a/SKILL.md": strings.Replace(skillMD, "%s", "a", 1),
		"pkgs/unused/skills/b/SKILL.md": "->/etc/passwd",
		"pkgs/unused/skills/c":          "->../../../outside-skills/x",
	})
	ws := filepath.Join(base, "ws")
	skills := []any{map[string]any{"source": map[string]any{"path": "skills"}}}
	offer := func(pm, name, root string, skills []any) map[string]any {
		return map[string]any{"id": protocol.PackageID{PM: pm, Name: name, Version: "1.0.0"}, "root": root,
			"manifest": map[string]any{"name": name, "skills": skills}}
	}
	member := func(name, dir string) protocol.WorkspaceMember {
		return protocol.WorkspaceMember{Name: name, Version: "1.0.0", Dir: dir}
	}
	outside := scriptSpec(t, "outside", map[string]any{
		protocol.MethodActivePlugins: []any{},
		protocol.MethodWorkspace: protocol.WorkspaceResult{Root: filepath.Join(base, "elsewhere"), Members: []protocol.WorkspaceMember{
			member("far", filepath.Join(base, "elsewhere", "far")),
			member("linked", filepath.Join(ws, "linked-member")),
			member("inner", filepath.Join(ws, "inner")),
		}},
	})
	rooty := scriptSpec(t, "rooty", map[string]any{
		protocol.MethodActivePlugins: []any{offer("rooty", "everything", "/", []any{map[string]any{"source": map[string]any{"path": "."}}})},
	})
	deps := scriptSpec(t, "eco", map[string]any{
		protocol.MethodActivePlugins: []any{
			offer("eco", "used", filepath.Join(base, "pkgs", "used"), skills),
			offer("eco", "unused", filepath.Join(base, "pkgs", "unused"), skills),
		},
	})
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, outside, rooty, deps)
	defer pms.Close()
	cfg := &config.Config{Plugins: config.Plugins{AutoEnable: []config.Selector{{PM: "eco", Name: "used"}}}}
	res := Discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: pms,
		Kinds:  map[string]Source{"outside": SourceDependency, "rooty": SourceDependency, "eco": SourceDependency},
		Limits: skill.Limits{Entries: 12}})

	// Nothing outside the workspace is enabled: every enabled plugin's
	// root, links resolved, lies in the workspace or is the package the
	// user consented to.
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	used := filepath.Join(base, "pkgs", "used")
	for _, p := range res.Plugins {
		if p.State != Enabled {
			continue
		}
		real, err := filepath.EvalSymlinks(p.Root)
		if err != nil {
			t.Errorf("enabled plugin %s: root %s: %v", p.ID, p.Root, err)
			continue
		}
		inWS := real == realWS || strings.HasPrefix(real, realWS+string(filepath.Separator))
		if !inWS && p.Root != used {
			t.Errorf("plugin %s (root %s) is enabled, outside the workspace %s", p.ID, p.Root, ws)
		}
	}
	for _, name := range []string{"evil", "evil-far", "evil-linked"} {
		if p := plugin(res, LocalPM, name); p != nil {
			t.Errorf("plugin %s outside the workspace is listed: %+v", name, *p)
		}
	}
	if p := plugin(res, LocalPM, "inner"); p == nil || p.State != Enabled || p.Source != SourceWorkspace {
		t.Errorf("member inside the workspace: %+v, want an enabled workspace plugin", p)
	}

	// The workspace's own plugin and the consented package are walked:
	// only the skills inside their roots count, and each link out is named.
	if p := plugin(res, LocalPM, "ws-own"); p == nil || p.State != Enabled || p.Skills != 1 {
		t.Errorf("workspace plugin: %+v, want enabled with the one skill inside it", p)
	}
	if p := plugin(res, "eco", "used"); p == nil || p.State != Enabled || p.Skills != 1 {
		t.Errorf("consented package: %+v, want enabled with the one skill inside it", p)
	}
	for _, want := range [][]string{
		{"pm outside reports workspace root " + filepath.Join(base, "elsewhere") + ", outside the opened workspace " + ws},
		{"pm outside reports workspace member far", "outside the opened workspace"},
		{"pm outside reports workspace member linked", "which leads outside the opened workspace"},
		{"plugin local:ws-own@*", "skills/passwd/SKILL.md leads outside the plugin root; left out"},
		{"plugin local:ws-own@*", "skills/out leads outside the plugin root; left out"},
		{"plugin eco:used@1.0.0", "skills/b/SKILL.md leads outside the plugin root; left out"},
		{"plugin eco:used@1.0.0", "skills/c leads outside the plugin root; left out"},
	} {
		if !warned(res, want...) {
			t.Errorf("no warning with %q in %q", want, res.Warnings)
		}
	}

	// Nothing is walked for the plugins waiting for consent: no skill
	// counted, and no warning naming them (a walk of / would have reached
	// the entry bound of 12; a walk of the unused package would have named
	// its links).
	for _, id := range []struct{ pm, name string }{{"rooty", "everything"}, {"eco", "unused"}} {
		p := plugin(res, id.pm, id.name)
		if p == nil || p.State != NeedsConsent || p.Skills != 0 {
			t.Errorf("plugin %s:%s: %+v, want needs consent with no skills counted", id.pm, id.name, p)
			continue
		}
		if warned(res, "plugin "+p.ID.String()) {
			t.Errorf("plugin %s waiting for consent was walked: %q", p.ID, res.Warnings)
		}
	}
	if warned(res, "bound") {
		t.Errorf("a walk reached a bound: %q", res.Warnings)
	}

	// The tripwire works: consented to, the plugin rooted at / is walked,
	// inside its root, and stops at the entry bound with a warning.
	cfg.Plugins.AutoEnable = append(cfg.Plugins.AutoEnable, config.Selector{PM: "rooty", Name: "everything"})
	res = Discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: pms,
		Kinds:  map[string]Source{"outside": SourceDependency, "rooty": SourceDependency, "eco": SourceDependency},
		Limits: skill.Limits{Entries: 12}})
	if p := plugin(res, "rooty", "everything"); p == nil || p.State != Enabled {
		t.Fatalf("consented plugin rooted at /: %+v, want enabled", p)
	}
	if !warned(res, "plugin rooty:everything@1.0.0 (root /): walking its skill groups stopped at the bound of 12 directory entries") {
		t.Errorf("the walk of / did not stop at the entry bound: %q", res.Warnings)
	}
}
