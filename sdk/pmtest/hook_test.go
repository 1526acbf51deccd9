package pmtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookPM lists one dependency and offers one plugin for it, with a
// warning; with forget set it persists its answer in the cache directory
// and, answering from there, forgets the warning (the bug Hook.Repeat is
// for).
type hookPM struct {
	forget bool
	cache  string
}

func (p *hookPM) Name() string { return "hookpm" }
func (p *hookPM) Initialize(_ context.Context, s *pmserver.Session) error {
	p.cache = s.CacheDir
	return nil
}
func (p *hookPM) ListDeps(context.Context) ([]protocol.PackageID, error) {
	return []protocol.PackageID{{PM: "hookpm", Name: "dep", Version: "1.0"}}, nil
}
func (p *hookPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	offers := []protocol.Offer{{ID: deps[0], Root: p.cache}}
	mark := filepath.Join(p.cache, "answered")
	if _, err := os.Stat(mark); p.forget && err == nil {
		return offers, nil
	}
	pmserver.Warn(ctx, pmserver.Diagnostic{Message: "dep's plugin is half broken"})
	if p.forget {
		if err := os.WriteFile(mark, nil, 0o644); err != nil {
			return nil, err
		}
	}
	return offers, nil
}
func (p *hookPM) LoadPlugin(context.Context, protocol.PackageID) ([]protocol.Offer, error) {
	return nil, errors.New("not here")
}
func (p *hookPM) Fetch(context.Context, protocol.PackageID, protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, errors.New("not here")
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(strings.SplitN(format, ":", 2)[0]))
}

// TestHookRepeat: Hook.Repeat passes a PM whose second hook repeats the
// first's diagnostics and fails one whose persisted answer drops them.
func TestHookRepeat(t *testing.T) {
	for _, forget := range []bool{false, true} {
		h := Hook{New: func() pmserver.PM { return &hookPM{forget: forget} },
			Options: host.Options{Workspace: t.TempDir(), CacheDir: t.TempDir()}}
		started := 0
		h.Started = func(pmserver.PM) { started++ }
		r := &recorder{TB: t}
		first := h.Repeat(r)
		if len(first.Deps) != 1 || len(first.Offers) != 1 || len(first.Diagnostics) != 1 || first.Diagnostics[0].Request != nil {
			t.Fatalf("first run %+v", first)
		}
		if started != 2 {
			t.Errorf("Started called %d times, want once a run", started)
		}
		if failed := len(r.errs) > 0; failed != forget {
			t.Errorf("forget=%v: Repeat reported %v", forget, r.errs)
		}
	}
}

// TestCheckInvalidation: a cached answer other than the fresh one fails,
// and so does a change that changed nothing.
func TestCheckInvalidation(t *testing.T) {
	a := []protocol.Offer{{ID: protocol.PackageID{PM: "p", Name: "a", Version: "1"}, Root: "/a"}}
	b := []protocol.Offer{{ID: protocol.PackageID{PM: "p", Name: "b", Version: "1"}, Root: "/b"}}
	for _, tc := range []struct {
		name                 string
		changed              bool
		first, cached, fresh []protocol.Offer
		fails                int
	}{
		{"nothing changed", false, a, a, a, 0},
		{"invalidated", true, a, b, b, 0},
		{"stale", true, a, a, b, 1},
		{"tests nothing", true, a, a, a, 1},
	} {
		r := &recorder{TB: t}
		CheckInvalidation(r, tc.changed, tc.first, tc.cached, tc.fresh)
		if len(r.errs) != tc.fails {
			t.Errorf("%s: %d failures %v, want %d", tc.name, len(r.errs), r.errs, tc.fails)
		}
	}
}
