package manifest_test

import (
	"context"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Host-side flow: a PM's offer manifest, validated and evaluated.
func TestOfferFlow(t *testing.T) {
	m, _ := manifest.Embedded("gizmo", manifest.Layer{"Cargo.toml [package.metadata.symposium]", map[string]any{
		"depends-on": "gizmo-core>=1",
		"skills":     []any{map[string]any{"depends-on": []any{"tokio"}, "source": map[string]any{"path": "guidance"}}},
	}})
	wire, err := m.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := manifest.DecodeJSON(wire)
	if err != nil {
		t.Fatal(err)
	}
	p, ps := manifest.Validate(got, manifest.ValidateOptions{Origin: manifest.OriginPackage, DefaultName: "gizmo"})
	if p == nil {
		t.Fatal(ps)
	}
	e := &predicate.Evaluator{Deps: predicate.Deps{{PM: "cargo", Name: "gizmo-core", Version: "1.3.0"}, {PM: "cargo", Name: "tokio", Version: protocol.AnyVersion}}}
	ctx := context.Background()
	if !e.Holds(ctx, p.Predicates) {
		t.Error("plugin gate")
	}
	if !e.Holds(ctx, p.Skills[0].Predicates) || p.Skills[0].Path != "guidance" || p.Skills[1].Path != "skills" {
		t.Errorf("groups: %+v", p.Skills)
	}
}
