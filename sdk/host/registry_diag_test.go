package host_test

import (
	"context"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// diagPM is a fakePM that sends diagnostics while answering search and
// load_plugin: a warning with a place and a package, and a note.
type diagPM struct{ *fakePM }

func (d diagPM) diagnose(ctx context.Context, method string) {
	pkg := id(d.name, "pkg", "1.0.0")
	pmserver.Warn(ctx, pmserver.Diagnostic{Message: method + " dropped a declaration", File: "/w/" + d.name + ".toml", Line: 7, Package: &pkg})
	pmserver.Info(ctx, pmserver.Diagnostic{Message: method + " note"})
}

func (d diagPM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	d.diagnose(ctx, protocol.MethodSearch)
	return d.fakePM.Search(ctx, query)
}

func (d diagPM) LoadPlugin(ctx context.Context, pid protocol.PackageID) ([]protocol.Offer, error) {
	d.diagnose(ctx, protocol.MethodLoadPlugin)
	return d.fakePM.LoadPlugin(ctx, pid)
}

// TestRegistryKeepsDiagnostics: the diagnostics a PM sends while answering
// search and load_plugin come back as warnings carrying them, as those of
// list_deps and active_plugins do, with the answer itself intact; a PM
// that sent some is not taken for one whose search failed.
func TestRegistryKeepsDiagnostics(t *testing.T) {
	a := diagPM{&fakePM{name: "a", offers: []protocol.Offer{offer("a", "one")},
		hits: []protocol.SearchHit{{ID: id("a", "needle", "1")}}}}
	b := diagPM{&fakePM{name: "b", hits: []protocol.SearchHit{{ID: id("b", "needle", "1")}}}}
	r := host.NewRegistry(localOptions(t), host.Spec{Name: "a", InProcess: a}, host.Spec{Name: "b", InProcess: b})
	defer r.Close()
	check := func(what string, ws []host.Warning, pms ...string) {
		t.Helper()
		if len(ws) != 2*len(pms) {
			t.Fatalf("%s: %d warnings, want %d: %v", what, len(ws), 2*len(pms), ws)
		}
		for i, pm := range pms {
			w, n := ws[2*i], ws[2*i+1]
			if w.PM != pm || w.Diagnostic == nil || w.Diagnostic.Level != protocol.LevelWarning ||
				w.Diagnostic.File != "/w/"+pm+".toml" || w.Diagnostic.Line != 7 ||
				w.String() != "pm "+pm+": "+pm+":pkg@1.0.0: "+what+" dropped a declaration (/w/"+pm+".toml:7)" {
				t.Errorf("%s: warning %d = %+v (%s)", what, 2*i, w, w)
			}
			if n.PM != pm || n.Diagnostic == nil || n.Diagnostic.Level != protocol.LevelInfo || n.String() != "pm "+pm+": "+what+" note" {
				t.Errorf("%s: note %d = %+v (%s)", what, 2*i+1, n, n)
			}
		}
	}
	hits, warns := r.Search(t.Context(), "needle")
	if len(hits) != 2 {
		t.Errorf("Search hits = %v, want both PMs'", hits)
	}
	check(protocol.MethodSearch, warns, "a", "b")
	offers, warns, err := r.LoadPlugin(t.Context(), id("a", "one", "*"))
	if err != nil || len(offers) != 1 {
		t.Fatalf("LoadPlugin = %v, %v", offers, err)
	}
	check(protocol.MethodLoadPlugin, warns, "a")
}
