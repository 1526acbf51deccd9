package npmpm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func TestDecodeTable(t *testing.T) {
	const file = "/ws/node_modules/p/SYMPOSIUM.toml"
	tests := []struct {
		name    string
		doc     string
		want    string // JSON of the table, when it decodes
		wantErr string // substring of the error, when it does not
	}{
		{name: "empty", doc: "", want: `{}`},
		{name: "scalars", doc: "name = \"x\"\nn = 3\nf = 1.5\nb = true\n", want: `{"b":true,"f":1.5,"n":3,"name":"x"}`},
		{name: "array of tables", doc: "[[skills]]\nsource.path = \"a\"\n[[skills]]\nsource.path = \"b\"\n", want: `{"skills":[{"source":{"path":"a"}},{"source":{"path":"b"}}]}`},
		{name: "syntax error on line 3", doc: "# comment\nname = \"x\"\nskills = = 1\n", wantErr: file + ":3: invalid TOML: "},
		{name: "table redefined on line 3", doc: "[defaults]\nskills = true\n[defaults]\n", wantErr: file + ":3: invalid TOML: "},
		{name: "unterminated string", doc: "name = \"x", wantErr: file + ":1: invalid TOML: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := decodeTable(file, []byte(tt.doc))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeTable(%q) = %v, %v; want an error containing %q", tt.doc, tbl, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeTable(%q): %v", tt.doc, err)
			}
			got, err := json.Marshal(tbl)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("decodeTable(%q) = %s, want %s", tt.doc, got, tt.want)
			}
		})
	}
}

// TestBrokenTOMLLayer checks that a package whose SYMPOSIUM.toml is not TOML
// is still offered, its TOML layer dropped and its package.json layer kept.
func TestBrokenTOMLLayer(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                        `{"name":"app","dependencies":{"broken":"^1"}}`,
		"node_modules/broken/package.json":    `{"name":"broken","version":"1.0.0","symposium":{"skills":[{"source":{"path":"docs"}}]}}`,
		"node_modules/broken/SYMPOSIUM.toml":  "name = \"renamed\"\n[defaults\nskills = false\n",
		"node_modules/fine/package.json":      `{"name":"fine","version":"2.0.0"}`,
		"node_modules/fine/SYMPOSIUM.toml":    "[defaults]\nskills = false\n[[skills]]\nsource.path = \"guide\"\n",
		"node_modules/fine/guide/a/SKILL.md":  "---\nname: a\ndescription: b\n---\n",
		"node_modules/broken/docs/a/SKILL.md": "---\nname: a\ndescription: b\n---\n",
	})
	p, _ := newPM(t, ws, nil)
	offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("broken", "1.0.0"), npmID("fine", "2.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range offers {
		got[o.ID.Name] = string(o.Manifest)
	}
	want := map[string]string{
		"broken": `{"name":"broken","skills":[{"source":{"path":"docs"}},{"source":{"path":"skills"}}]}`,
		"fine":   `{"defaults":{"skills":false},"name":"fine","skills":[{"source":{"path":"guide"}}]}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s manifest %s, want %s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("offers %v, want %v", got, want)
	}
}

// FuzzDecodeTable checks that any SYMPOSIUM.toml either is refused with an
// error naming the file, or yields a table the manifest layer accepts or
// reports, without panicking.
func FuzzDecodeTable(f *testing.F) {
	f.Add([]byte("name = \"p\"\n[defaults]\nskills = false\n[[skills]]\nsource.path = \"a\"\n"))
	f.Add([]byte("name = 1979-05-27T07:32:00Z\n[[skills]]\nsource.path = 'x'\nwhen = 07:32:00\n"))
	f.Add([]byte("skills = \"not a list\"\n"))
	f.Add([]byte("name = ["))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "SYMPOSIUM.toml"
		tbl, err := decodeTable(file, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), file+":") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		m, _ := manifest.Embedded("pkg", manifest.Layer{Source: sourceTOML, Table: tbl})
		wire, err := m.WireJSON()
		if err != nil {
			return // a float the wire form cannot hold, say
		}
		if !json.Valid(wire) {
			t.Fatalf("manifest of %q is invalid JSON %s", data, wire)
		}
	})
}
