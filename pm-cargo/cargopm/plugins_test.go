package cargopm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
)

func TestDecodeTable(t *testing.T) {
	const file = "/src/crate/SYMPOSIUM.toml"
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
		{name: "duplicate key on line 2", doc: "name = \"x\"\nname = \"y\"\n", wantErr: file + ":2: invalid TOML: "},
		{name: "unterminated array", doc: "name = [", wantErr: file + ":1: invalid TOML: "},
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
		m, _ := manifest.Embedded("crate", manifest.Layer{Source: fileLayer, Table: tbl})
		wire, err := m.WireJSON()
		if err != nil {
			return // a float the wire form cannot hold, say
		}
		if !json.Valid(wire) {
			t.Fatalf("manifest of %q is invalid JSON %s", data, wire)
		}
	})
}
