//go:build unix

package discovery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// pipePM is an in-process PM for the pipeline tests: it lists deps, and
// answers active_plugins with offers, after waiting (when wait is set) for
// the file wait to appear, at most waitFor; it warns when it gave up.
type pipePM struct {
	name    string
	deps    []protocol.PackageID
	offers  []protocol.Offer
	fail    error // active_plugins' error, when set
	wait    string
	waitFor time.Duration

	mu     sync.Mutex
	handed [][]protocol.PackageID // the deps active_plugins was handed
}

func (p *pipePM) Name() string                                              { return p.name }
func (p *pipePM) Initialize(ctx context.Context, s *pmserver.Session) error { return nil }
func (p *pipePM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	pmserver.Warn(ctx, pmserver.Diagnostic{Message: "pm " + p.name + " listed its deps with a note"})
	return p.deps, nil
}
func (p *pipePM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	p.mu.Lock()
	p.handed = append(p.handed, deps)
	p.mu.Unlock()
	if p.wait != "" {
		deadline := time.Now().Add(p.waitFor)
		for {
			if _, err := os.Stat(p.wait); err == nil {
				break
			}
			if time.Now().After(deadline) {
				pmserver.Warn(ctx, pmserver.Diagnostic{Message: "pm " + p.name + " answered without seeing the marker"})
				break
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if p.fail != nil {
		return nil, p.fail
	}
	return p.offers, nil
}
func (p *pipePM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	return nil, protocol.ErrNotFound(id, "no package %s", id.Name)
}
func (p *pipePM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, protocol.ErrNotFound(id, "no package %s", id.Name)
}

// A PM's offers are judged as soon as they are in, while the other PMs
// still answer: pm b's plugin, whose gate creates a marker file in the
// workspace, is decided while pm a (configured first) waits for that marker
// before answering. The result and the warnings still follow configuration
// order (a's walk warning before b's, whatever answered first), each PM is
// handed the deps it listed, and a PM failing after its list_deps keeps its
// list_deps diagnostic and is warned about among active_plugins' warnings.
func TestDiscoverPipelinesPMs(t *testing.T) {
	ws := t.TempDir()
	skills := map[string]string{"skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n", "skills/out/SKILL.md": "->/etc/passwd"}
	rootA, rootB := tree(t, skills), tree(t, skills)
	a := &pipePM{name: "a", deps: []protocol.PackageID{{PM: "a", Name: "x", Version: "1"}, {PM: "a", Name: "w", Version: "1"}},
		offers: []protocol.Offer{{ID: protocol.PackageID{PM: "a", Name: "pa", Version: "1"}, Root: rootA,
			Manifest: wire(t, "name = \"pa\"\n\n[[skills]]\nsource.path = \"skills\"\n")}},
		wait: filepath.Join(ws, "marker"), waitFor: 20 * time.Second}
	b := &pipePM{name: "b", deps: []protocol.PackageID{{PM: "b", Name: "y", Version: "2"}},
		offers: []protocol.Offer{{ID: protocol.PackageID{PM: "b", Name: "pb", Version: "1"}, Root: rootB,
			Manifest: wire(t, "name = \"pb\"\npredicates = [\"shell(touch marker)\"]\n\n[[skills]]\nsource.path = \"skills\"\n")}}}
	c := &pipePM{name: "c", deps: []protocol.PackageID{{PM: "c", Name: "z", Version: "3"}}, fail: errors.New("the lockfile vanished")}
	cfg := &config.Config{Plugins: config.Plugins{AutoEnable: []config.Selector{{PM: "a", Name: "pa"}, {PM: "b", Name: "pb"}}}}
	res := Discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: localRegistry(t, ws, a, b, c),
		Kinds: map[string]Source{"a": SourceDependency, "b": SourceDependency, "c": SourceDependency}})

	if warned(res, "without seeing the marker") {
		t.Errorf("pm b's offer was not judged while pm a was still answering: %q", res.Warnings)
	}
	for _, name := range []string{"pa", "pb"} {
		pm := name[1:]
		if p := plugin(res, pm, name); p == nil || p.State != Enabled || p.Skills != 1 {
			t.Errorf("plugin %s: %+v, want enabled with one skill", name, p)
		}
	}
	if got := []string{res.Plugins[0].Name, res.Plugins[1].Name}; len(res.Plugins) != 2 || !slices.Equal(got, []string{"pa", "pb"}) {
		t.Errorf("plugins %+v, want pa then pb", res.Plugins)
	}
	want := []string{
		"pm a listed its deps with a note",
		"pm b listed its deps with a note",
		"pm c listed its deps with a note",
		"the lockfile vanished",
		"plugin a:pa@1 (root " + rootA + "): skills/out/SKILL.md leads outside",
		"plugin b:pb@1 (root " + rootB + "): skills/out/SKILL.md leads outside",
	}
	var got []string
	for _, w := range res.Warnings {
		got = append(got, w.Message)
	}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d: %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d is %q, want one with %q (all: %q)", i, got[i], want[i], got)
		}
	}
	for _, pm := range []*pipePM{a, b} {
		own := slices.SortedFunc(slices.Values(pm.deps), func(x, y protocol.PackageID) int { return strings.Compare(x.Name, y.Name) })
		if len(pm.handed) != 1 || !slices.Equal(pm.handed[0], own) {
			t.Errorf("pm %s was handed %v, want %v", pm.name, pm.handed, own)
		}
	}
	if !slices.Equal(res.Deps, []protocol.PackageID{{PM: "a", Name: "w", Version: "1"}, {PM: "a", Name: "x", Version: "1"}, {PM: "b", Name: "y", Version: "2"}, {PM: "c", Name: "z", Version: "3"}}) {
		t.Errorf("deps %v", res.Deps)
	}
}

// Only an enabled plugin's root is opened: the offers waiting for consent,
// dormant or disabled are checked (one lstat each, their source.path being
// one plain directory) without opening their roots, and the one enabled
// plugin's root is opened once, for its walk.
func TestDiscoverOpensOnlyEnabledRoots(t *testing.T) {
	ws := t.TempDir()
	skills := map[string]string{"skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n"}
	var offers []protocol.Offer
	roots := map[string]string{}
	for _, name := range []string{"consent", "enabled", "disabled", "gated"} {
		roots[name] = tree(t, skills)
		m := "name = \"" + name + "\"\n\n[[skills]]\nsource.path = \"skills\"\n"
		if name == "gated" {
			m = "name = \"gated\"\npredicates = [\"env(NEVER_SET_HOSTLEAN)\"]\n\n[[skills]]\nsource.path = \"skills\"\n"
		}
		offers = append(offers, protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: name, Version: "1"}, Root: roots[name], Manifest: wire(t, m)})
	}
	pm := &pipePM{name: "eco", offers: offers}
	cfg := &config.Config{Plugins: config.Plugins{
		AutoEnable: []config.Selector{{PM: "eco", Name: "enabled"}, {PM: "eco", Name: "gated"}},
		Disable:    []config.Selector{{PM: "eco", Name: "disabled"}},
	}}
	var mu sync.Mutex
	var opened []string
	open := func(dir string) (*os.Root, error) {
		mu.Lock()
		opened = append(opened, dir)
		mu.Unlock()
		return os.OpenRoot(dir)
	}
	res := discover(t.Context(), Options{Workspace: ws, Config: cfg, PMs: localRegistry(t, ws, pm),
		Kinds: map[string]Source{"eco": SourceDependency}, LookupEnv: func(string) (string, bool) { return "", false }}, open)
	for name, want := range map[string]State{"consent": NeedsConsent, "enabled": Enabled, "disabled": Disabled, "gated": Dormant} {
		if p := plugin(res, "eco", name); p == nil || p.State != want {
			t.Errorf("plugin %s: %+v, want %s", name, p, want)
		}
	}
	if !slices.Equal(opened, []string{roots["enabled"]}) {
		t.Errorf("roots opened: %q, want only the enabled plugin's %s", opened, roots["enabled"])
	}
}
