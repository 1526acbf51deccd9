package manifest

import (
	"os"
	"testing"
)

// BenchmarkDecodeTOMLValidate: a host loading a registry plugin.
func BenchmarkDecodeTOMLValidate(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/gizmo.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := DecodeTOML(data)
		if err != nil {
			b.Fatal(err)
		}
		if p, _ := Validate(m, ValidateOptions{}); p == nil {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkDecodeJSONValidate: a host validating an offer's wire manifest.
func BenchmarkDecodeJSONValidate(b *testing.B) {
	data, err := os.ReadFile("testdata/gizmo-wire.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := DecodeJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		if p, _ := Validate(m, ValidateOptions{}); p == nil {
			b.Fatal("invalid")
		}
	}
}

// smallWire is a typical offer's wire manifest: a crate's plugin with one
// skill group, as a PM embeds it.
const smallWire = `{"name":"crate-0001","skills":[{"source":{"path":"skills"}}]}`

// BenchmarkDecodeJSONSmall: discovery validating one typical (small) offer
// manifest; on a 1,000-plugin workspace it runs once per plugin.
func BenchmarkDecodeJSONSmall(b *testing.B) {
	data := []byte(smallWire)
	b.ReportAllocs()
	for b.Loop() {
		m, err := DecodeJSON(data)
		if err != nil || m.Name != "crate-0001" || len(m.Skills) != 1 {
			b.Fatal(m, err)
		}
	}
}

// BenchmarkDecodeJSONGizmo: decoding alone (no validation) of the wire
// manifest using every section.
func BenchmarkDecodeJSONGizmo(b *testing.B) {
	data, err := os.ReadFile("testdata/gizmo-wire.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbeddedWire: a PM building one offer's manifest.
func BenchmarkEmbeddedWire(b *testing.B) {
	layer := map[string]any{
		"depends-on": "gizmo",
		"skills":     []any{map[string]any{"source": map[string]any{"path": "guidance"}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		m, _ := Embedded("gizmo", Layer{"Cargo.toml", layer})
		if _, err := m.WireJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
