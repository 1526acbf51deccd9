package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// Fuzz targets: no input may panic; whatever decodes must round-trip.
// Seed corpora live in testdata/fuzz/<target>/.

func FuzzDecodeTOML(f *testing.F) {
	f.Add([]byte("name = \"p\"\ndepends-on = \"serde\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeTOML(data)
		if err != nil {
			return
		}
		Validate(m, ValidateOptions{})
		Validate(m, ValidateOptions{Origin: OriginWorkspace, DefaultName: "w", AgentsSyncing: true})
		checkRoundTrip(t, m)
	})
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`{"name":"p","depends-on":["serde"]}`))
	f.Add([]byte(`{"name":"p","x":null,"y":[1,2.5,null,{"z":null}],"defaults":{"skills":null},"n":12345678901234567890}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeJSON(data)
		checkSameAsFromTable(t, data, m, err)
		if err != nil {
			return
		}
		Validate(m, ValidateOptions{Origin: OriginPackage, DefaultName: "pkg"})
		checkRoundTrip(t, m)
	})
}

// checkSameAsFromTable: DecodeJSON, which normalizes the tree it decoded
// in place, decodes a JSON object as FromTable does from the same tree
// (which copies it): the same manifest, or an error in both.
func checkSameAsFromTable(t *testing.T, data []byte, m *Manifest, err error) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree map[string]any
	if dec.Decode(&tree) != nil || tree == nil {
		return
	}
	if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
		return
	}
	want, werr := FromTable(tree)
	if (err == nil) != (werr == nil) {
		t.Fatalf("DecodeJSON error %v, FromTable error %v", err, werr)
	}
	if err != nil {
		if err.Error() != werr.Error() {
			t.Fatalf("DecodeJSON error %q, FromTable error %q", err, werr)
		}
		return
	}
	got, gerr := m.WireJSON()
	exp, eerr := want.WireJSON()
	if (gerr == nil) != (eerr == nil) || !bytes.Equal(got, exp) {
		t.Fatalf("DecodeJSON gives %s (%v), FromTable %s (%v)", got, gerr, exp, eerr)
	}
}

// checkRoundTrip: wire JSON decodes back to the same wire JSON, and so does
// the TOML encoding when the value is representable in TOML.
func checkRoundTrip(t *testing.T, m *Manifest) {
	t.Helper()
	j1, err := m.WireJSON()
	if err != nil {
		return // e.g. a non-finite float in an unknown key
	}
	mj, err := DecodeJSON(j1)
	if err != nil {
		t.Fatalf("own wire JSON does not decode: %v\n%s", err, j1)
	}
	j2, err := mj.WireJSON()
	if err != nil || !bytes.Equal(j1, j2) {
		t.Fatalf("JSON round trip changed the manifest: %v\n%s\n%s", err, j1, j2)
	}
	tb, err := EncodeTOML(mj)
	if err != nil {
		return // TOML cannot hold everything JSON can (nulls in arrays)
	}
	mt, err := DecodeTOML(tb)
	if err != nil {
		t.Fatalf("own TOML does not decode: %v\n%s", err, tb)
	}
	j3, err := mt.WireJSON()
	if err != nil || !bytes.Equal(j1, j3) {
		t.Fatalf("TOML round trip changed the manifest: %v\n%s\n%s\n%s", err, j1, tb, j3)
	}
}
