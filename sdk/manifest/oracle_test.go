package manifest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Python's tomllib (a second, independent TOML parser) reads every
// fixture and every EncodeTOML output to the same value as the wire JSON:
// the decoder loses nothing and the encoder writes TOML others read the
// same way.
func TestOracleTOMLAgainstPythonTomllib(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	files, _ := filepath.Glob("testdata/valid/*.toml")
	more, _ := filepath.Glob("testdata/registry/*/SYMPOSIUM.toml")
	files = append(files, more...)
	var docs [][]byte
	var wires []any
	for _, f := range files {
		data := readFile(t, f)
		m, err := DecodeTOML(data)
		if err != nil {
			continue
		}
		wire, err := m.WireJSON()
		if err != nil {
			t.Fatal(err)
		}
		enc, err := EncodeTOML(m)
		if err != nil {
			t.Fatal(err)
		}
		var w any
		if err := json.Unmarshal(wire, &w); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, data, enc)
		wires = append(wires, w, w)
	}
	// One python process reads all documents (JSON list of strings in, JSON list of values out).
	in, _ := json.Marshal(func() []string {
		s := make([]string, len(docs))
		for i, d := range docs {
			s[i] = string(d)
		}
		return s
	}())
	cmd := exec.Command(py, "-c", `
import json, sys, tomllib
docs = json.load(sys.stdin)
json.dump([tomllib.loads(d) for d in docs], sys.stdout, default=str)
`)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "No module named 'tomllib'") {
			t.Skip("python3 has no tomllib (needs 3.11)")
		}
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var got []any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(docs) {
		t.Fatalf("python read %d documents of %d", len(got), len(docs))
	}
	for i := range docs {
		if !reflect.DeepEqual(got[i], wires[i]) {
			kind := "fixture"
			if i%2 == 1 {
				kind = "EncodeTOML output"
			}
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(wires[i])
			t.Errorf("%s %s:\ntomllib: %s\nwire:    %s", kind, strings.SplitN(string(docs[i-i%2]), "\n", 2)[0], g, w)
		}
	}
}
