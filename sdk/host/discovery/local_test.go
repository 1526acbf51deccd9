//go:build unix

package discovery

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// loaderPM is an in-process PM (served through host.NewLocal's harness)
// that answers load_plugin from loads, by crate name, and offers offers.
type loaderPM struct {
	name   string
	offers []protocol.Offer
	loads  map[string][]protocol.Offer
}

func (l *loaderPM) Name() string                                              { return l.name }
func (l *loaderPM) Initialize(ctx context.Context, s *pmserver.Session) error { return nil }
func (l *loaderPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	return l.offers, nil
}
func (l *loaderPM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	offers, ok := l.loads[id.Name]
	if !ok {
		return nil, protocol.ErrNotFound(id, "no crate %s", id.Name)
	}
	return offers, nil
}
func (l *loaderPM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, protocol.ErrNotFound(id, "no crate %s", id.Name)
}

// wire encodes a SYMPOSIUM.toml text as the manifest of an offer.
func wire(t *testing.T, toml string) json.RawMessage {
	t.Helper()
	m, err := manifest.DecodeTOML([]byte(toml))
	if err != nil {
		t.Fatalf("manifest %q: %v", toml, err)
	}
	raw, err := m.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// localRegistry is a registry of in-process PMs.
func localRegistry(t *testing.T, ws string, pms ...pmserver.PM) *host.Registry {
	t.Helper()
	var specs []host.Spec
	for _, pm := range pms {
		specs = append(specs, host.Spec{Name: pm.Name(), InProcess: pm})
	}
	r := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()}, specs...)
	t.Cleanup(func() { r.Close() })
	return r
}

// An enabled registry plugin vouches for the cargo crates it references:
// they are loaded through the cargo PM, enabled as chained, and a cycle is
// followed once. A dependency plugin waiting for consent is enabled when an
// enabled plugin references it.
func TestDiscoverChained(t *testing.T) {
	reg := tree(t, map[string]string{
		"top/SYMPOSIUM.toml":    "name = \"top\"\ndepends-on = \"*\"\n\n[[plugins]]\nsource.cargo = \"helper\"\n\n[[plugins]]\nsource.cargo = \"missing\"\n\n[[plugins]]\nsource.cargo = \"consented\"\n",
		"a-skill/SKILL.md":      "---\nname: a-skill\ndescription: a skill of its own\n---\n",
		"broken/SYMPOSIUM.toml": "name = [",
	})
	helperRoot, loopRoot, depRoot := t.TempDir(), t.TempDir(), t.TempDir()
	cargo := &loaderPM{name: "cargo",
		offers: []protocol.Offer{{ID: protocol.PackageID{PM: "cargo", Name: "consented", Version: "1.0.0"}, Root: depRoot,
			Manifest: wire(t, "name = \"consented\"\n")}},
		loads: map[string][]protocol.Offer{
			"helper": {{ID: protocol.PackageID{PM: "cargo", Name: "helper", Version: "2.0.0"}, Root: helperRoot,
				Manifest: wire(t, "name = \"helper\"\n\n[[plugins]]\nsource.cargo = \"loop\"\n")}},
			"loop": {{ID: protocol.PackageID{PM: "cargo", Name: "loop", Version: "1.0.0"}, Root: loopRoot,
				Manifest: wire(t, "name = \"loop\"\n\n[[plugins]]\nsource.cargo = \"helper\"\n")}},
			"consented": {{ID: protocol.PackageID{PM: "cargo", Name: "consented", Version: "1.0.0"}, Root: depRoot,
				Manifest: wire(t, "name = \"consented\"\n")}},
		},
	}
	ws := t.TempDir()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: localRegistry(t, ws, cargo),
		Kinds: map[string]Source{"cargo": SourceDependency}, PathRegistries: []PathRegistry{{Name: "reg", Dir: reg}}})

	for _, want := range []struct {
		pm, name string
		src      Source
		state    State
	}{
		{"reg", "top", SourceRegistry, Enabled},
		{"reg", "a-skill", SourceRegistry, Dormant}, // applies everywhere: waits for use
		{"cargo", "helper", SourceChained, Enabled},
		{"cargo", "loop", SourceChained, Enabled},
		{"cargo", "consented", SourceChained, Enabled},
	} {
		p := plugin(res, want.pm, want.name)
		if p == nil || p.Source != want.src || p.State != want.state {
			t.Errorf("plugin %s:%s = %+v, want %s and %s", want.pm, want.name, p, want.src, want.state)
		}
	}
	if p := plugin(res, "cargo", "helper"); p != nil && !strings.Contains(p.Reason, "referenced by reg:top") {
		t.Errorf("chained plugin's reason %q does not name the plugin that vouches for it", p.Reason)
	}
	for _, want := range [][]string{
		{"closes a cycle"},
		{"chained reference from reg:top", "no crate missing"},
		{"registry reg: entry broken"},
	} {
		if !warned(res, want...) {
			t.Errorf("no warning with %q in %q", want, res.Warnings)
		}
	}
	if len(res.Deps) != 0 {
		t.Errorf("deps %v from a PM without list_deps", res.Deps)
	}
}

// A chained reference answered with an id under another pm's name is
// dropped with a warning.
func TestDiscoverChainedForeignID(t *testing.T) {
	reg := tree(t, map[string]string{
		"top/SYMPOSIUM.toml": "name = \"top\"\ndepends-on = \"*\"\n\n[[plugins]]\nsource.cargo = \"sneaky\"\n",
	})
	// The harness refuses to mint foreign ids, so the answer is rewritten
	// on the wire, as a PM outside the SDK could write it.
	cargo := &loaderPM{name: "cargo", loads: map[string][]protocol.Offer{
		"sneaky": {{ID: protocol.PackageID{PM: "cargo", Name: "sneaky", Version: "1.0.0"}, Root: t.TempDir(), Manifest: json.RawMessage(`{}`)}},
	}}
	ws := t.TempDir()
	pms := host.NewRegistry(host.Options{Workspace: ws}, host.Spec{Name: "cargo", InProcess: cargo,
		ServeOptions: []pmserver.Option{pmserver.WithTransport(func(r io.Reader, w io.Writer) (io.Reader, io.Writer) {
			return r, &rewriter{w: w, from: `"pm":"cargo","name":"sneaky"`, to: `"pm":"npm","name":"sneaky"`}
		})}})
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms,
		PathRegistries: []PathRegistry{{Name: "reg", Dir: reg}}})
	if p := plugin(res, "npm", "sneaky"); p != nil {
		t.Errorf("the foreign id was kept: %+v", p)
	}
	if !warned(res, "pm cargo answered load_plugin with npm:sneaky@1.0.0, an id under another pm's name; dropped") {
		t.Errorf("no warning about the foreign id in %q", res.Warnings)
	}
}

func TestValidateOffer(t *testing.T) {
	root := tree(t, map[string]string{"skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n"})
	file := filepath.Join(root, "skills", "s", "SKILL.md")
	id := protocol.PackageID{PM: "eco", Name: "p", Version: "1.0.0"}
	for _, tc := range []struct {
		name string
		of   protocol.Offer
		want string // "" for valid
	}{
		{"valid", protocol.Offer{ID: id, Root: root, Manifest: json.RawMessage(`{"name":"p"}`)}, ""},
		{"no manifest", protocol.Offer{ID: id, Root: root}, ""},
		{"foreign", protocol.Offer{ID: protocol.PackageID{PM: "other", Name: "p", Version: "1"}, Root: root}, `under another pm's name "other"`},
		{"relative", protocol.Offer{ID: id, Root: "rel/dir"}, `root "rel/dir" is not an absolute path`},
		{"missing", protocol.Offer{ID: id, Root: filepath.Join(root, "nope")}, "is not an existing directory"},
		{"file", protocol.Offer{ID: id, Root: file}, "is not an existing directory"},
		{"bad manifest", protocol.Offer{ID: id, Root: root, Manifest: json.RawMessage(`{"name":`)}, "manifest"},
		{"escaping path", protocol.Offer{ID: id, Root: root, Manifest: json.RawMessage(`{"name":"p","skills":[{"source":{"path":"../.."}}]}`)}, ".."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, reason := ValidateOffer(tc.of, SourceDependency, "eco")
			switch {
			case tc.want == "" && (p == nil || reason != ""):
				t.Errorf("ValidateOffer = %v, %q; want valid", p, reason)
			case tc.want != "" && (p != nil || !strings.Contains(reason, tc.want)):
				t.Errorf("ValidateOffer = %v, %q; want invalid, %q", p, reason, tc.want)
			}
		})
	}
}

// Setup turns configuration into specs: installed built-ins, configured
// PMs (overriding a built-in of the same name), git registries served by
// the gitregistry binary, path registries; and warns about the rest.
func TestSetup(t *testing.T) {
	exeDir := t.TempDir()
	for _, name := range []string{"symposium-pm-cargo", "symposium-pm-npm", GitRegistryCommand, "my-pm"} {
		if err := os.WriteFile(filepath.Join(exeDir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	regDir := t.TempDir()
	off := false
	cfg := &config.Config{
		PackageManagers: []config.PackageManager{
			{Name: "npm", Command: "my-pm", Args: []string{"--flag"}, Env: map[string]string{"K": "V"}},
			{Name: "mine", Command: "/abs/path/pm", Kind: "registry"},
			{Name: "lost", Command: "no-such-pm-command"},
			{Name: "fromsrc", Source: "nonsense"},
		},
		Registries: []config.Registry{
			{Name: "dir", Path: regDir},
			{Name: "gone", Path: filepath.Join(regDir, "missing")},
			{Name: "builtin-gone", Path: filepath.Join(regDir, "missing"), Builtin: true},
			{Name: "git", Git: "https://example.invalid/reg.git", Ref: "main", Subdir: "plugins", AutoUpdate: &off},
		},
	}
	s := Setup(cfg, exeDir, t.TempDir())
	byName := map[string]host.Spec{}
	var names []string
	for _, sp := range s.Specs {
		byName[sp.Name] = sp
		names = append(names, sp.Name)
	}
	if want := []string{"cargo", "npm", "mine", "git"}; !slices.Equal(names, want) {
		t.Errorf("specs %v, want %v", names, want)
	}
	if sp := byName["npm"]; sp.Command != filepath.Join(exeDir, "my-pm") || !slices.Equal(sp.Args, []string{"--flag"}) || !slices.Equal(sp.Env, []string{"K=V"}) {
		t.Errorf("configured npm: %+v", sp)
	}
	if sp := byName["git"]; sp.Command != filepath.Join(exeDir, GitRegistryCommand) ||
		!slices.Equal(sp.Args, []string{"--name", "git", "--url", "https://example.invalid/reg.git", "--ref", "main", "--subdir", "plugins", "--no-auto-update"}) {
		t.Errorf("git registry: %+v", sp)
	}
	for name, want := range map[string]Source{"cargo": SourceDependency, "npm": SourceDependency, "mine": SourceRegistry, "git": SourceRegistry} {
		if s.Kinds[name] != want {
			t.Errorf("kind of %s = %q, want %q", name, s.Kinds[name], want)
		}
	}
	if len(s.PathRegistries) != 1 || s.PathRegistries[0] != (PathRegistry{Name: "dir", Dir: regDir}) {
		t.Errorf("path registries %v", s.PathRegistries)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "symposium-pm-pypi is not installed") {
		t.Errorf("notes %q, want one about pypi", s.Notes)
	}
	all := strings.Join(s.Warnings, "\n")
	for _, want := range []string{`package manager "lost": command "no-such-pm-command" not found`, `"fromsrc"`, `registry "gone"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning with %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "builtin-gone") {
		t.Errorf("a missing built-in registry was warned about:\n%s", all)
	}

	// Without the gitregistry binary, a git registry is a warning.
	s = Setup(&config.Config{Registries: []config.Registry{{Name: "git", Git: "https://example.invalid/x.git"}}}, t.TempDir(), t.TempDir())
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "needs "+GitRegistryCommand) }) {
		t.Errorf("warnings %q, want one saying the git registry needs %s", s.Warnings, GitRegistryCommand)
	}
}

// rewriter replaces from with to in what the harness writes (one whole
// message a write).
type rewriter struct {
	w        io.Writer
	from, to string
}

func (r *rewriter) Write(b []byte) (int, error) {
	if _, err := r.w.Write([]byte(strings.ReplaceAll(string(b), r.from, r.to))); err != nil {
		return 0, err
	}
	return len(b), nil
}
