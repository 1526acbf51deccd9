package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and # want: lines")

// fixtureHeader reads the `# key: value` comment lines at the top of a
// fixture.
func fixtureHeader(data []byte) map[string]string {
	h := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "# ")
		if !ok {
			break
		}
		k, v, _ := strings.Cut(rest, ":")
		h[k] = strings.TrimSpace(v)
	}
	return h
}

func originOf(t *testing.T, h map[string]string) ValidateOptions {
	switch h["origin"] {
	case "", "registry":
		return ValidateOptions{Origin: OriginRegistry}
	case "workspace":
		return ValidateOptions{Origin: OriginWorkspace, DefaultName: "member", AgentsSyncing: h["agents-syncing"] == "true"}
	case "package":
		return ValidateOptions{Origin: OriginPackage, DefaultName: "pkg"}
	}
	t.Fatalf("unknown origin %q", h["origin"])
	return ValidateOptions{}
}

// problemsOf decodes and validates a TOML fixture.
func problemsOf(t *testing.T, data []byte) (*Plugin, []Problem) {
	m, err := DecodeTOML(data)
	if err != nil {
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("decode error is not Problems: %v", err)
		}
		return nil, ps
	}
	return Validate(m, originOf(t, fixtureHeader(data)))
}

func firstError(ps []Problem) (Problem, bool) {
	for _, p := range ps {
		if !p.Warning {
			return p, true
		}
	}
	return Problem{}, false
}

// Every invalid fixture's first error, with line, field and message, is
// the `# want:` line on its first line.
func TestInvalidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.toml")
	if len(files) < 80 {
		t.Fatalf("only %d invalid fixtures", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".toml"), func(t *testing.T) {
			data := readFile(t, f)
			want := fixtureHeader(data)["want"]
			p, ps := problemsOf(t, data)
			first, ok := firstError(ps)
			if !ok {
				t.Fatalf("valid (plugin %q), want %q", p.Name, want)
			}
			if p != nil {
				t.Errorf("a plugin was returned along with errors")
			}
			got := first.Error()
			if *update {
				lines := strings.SplitN(string(data), "\n", 2)
				if err := os.WriteFile(f, []byte("# want: "+got+"\n"+lines[1]), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("first error\n got %s\nwant %s", got, want)
			}
		})
	}
}

// Every valid fixture validates (with only the warnings it declares), its
// wire JSON and validated view match the goldens, and TOML → JSON → TOML →
// JSON is stable.
func TestValidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.toml")
	if len(files) < 20 {
		t.Fatalf("only %d valid fixtures", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		t.Run(name, func(t *testing.T) {
			data := readFile(t, f)
			h := fixtureHeader(data)
			m, err := DecodeTOML(data)
			if err != nil {
				t.Fatal(err)
			}
			p, ps := Validate(m, originOf(t, h))
			if p == nil {
				t.Fatalf("invalid: %v", Problems(ps))
			}
			var warns []string
			for _, w := range ps {
				warns = append(warns, w.Error())
			}
			if got, want := strings.Join(warns, " | "), h["warn"]; got != want && !*update {
				t.Errorf("warnings\n got %s\nwant %s", got, want)
			}
			wire, err := m.WireJSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata/golden", name+".wire.json"), indentJSON(t, wire))
			view, err := marshalJSON(p)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata/golden", name+".plugin.json"), indentJSON(t, view))
			roundTrip(t, data)
		})
	}
}

// Invalid fixtures that decode also round-trip: the wire form carries what
// validation will reject.
func TestRoundTripInvalidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.toml")
	for _, f := range files {
		data := readFile(t, f)
		if _, err := DecodeTOML(data); err != nil {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) { roundTrip(t, data) })
	}
}

// roundTrip checks TOML → JSON → TOML → JSON stability and that the
// problems found are the same whichever encoding was decoded.
func roundTrip(t *testing.T, data []byte) {
	t.Helper()
	m1, err := DecodeTOML(data)
	if err != nil {
		t.Fatal(err)
	}
	j1, err := m1.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	mj, err := DecodeJSON(j1)
	if err != nil {
		t.Fatalf("decoding own JSON: %v\n%s", err, j1)
	}
	bare := *m1
	bare.lines = nil
	if !reflect.DeepEqual(&bare, mj) {
		t.Errorf("TOML and its JSON decode to different values:\n%#v\n%#v", &bare, mj)
	}
	tb, err := EncodeTOML(mj)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := DecodeTOML(tb)
	if err != nil {
		t.Fatalf("decoding own TOML: %v\n%s", err, tb)
	}
	j2, err := m2.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(j1, j2) {
		t.Errorf("TOML → JSON → TOML → JSON changed the manifest:\n%s\n%s", j1, j2)
	}
	opts := originOf(t, fixtureHeader(data))
	_, ps1 := Validate(m1, opts)
	_, ps2 := Validate(mj, opts)
	if len(ps1) != len(ps2) {
		t.Fatalf("problems differ between TOML and JSON: %v vs %v", ps1, ps2)
	}
	for i := range ps1 {
		if ps1[i].Field != ps2[i].Field || ps1[i].Message != ps2[i].Message {
			t.Errorf("problem %d differs: %v vs %v", i, ps1[i], ps2[i])
		}
	}
}

func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil { // Indent keeps escapes as they are
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got %s\nwant %s", path, got, want)
	}
}
