package gitregistry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
)

func TestRawManifest(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantName string
		wantRaw  string // exact wire JSON, when set
		wantNote bool   // a known key holds a value of the wrong type
		wantErr  string // substring of the error, when the document is not TOML
	}{
		{name: "valid", doc: "name = \"p\"\n", wantName: "p", wantRaw: `{"name":"p"}`},
		{
			name:     "dates pass through as TOML text",
			doc:      "name = \"p\"\nskills = 3\nd = 1979-05-27\nwhen = 07:32:00.5\nat = 1979-05-27T07:32:00\nz = 1979-05-27T07:32:00Z\no = 1979-05-27T07:32:00+01:00\n",
			wantName: "p",
			wantRaw:  `{"at":"1979-05-27T07:32:00","d":"1979-05-27","name":"p","o":"1979-05-27T07:32:00+01:00","skills":3,"when":"07:32:00.5","z":"1979-05-27T07:32:00Z"}`,
			wantNote: true,
		},
		{
			name:     "wrong type in an array of tables",
			doc:      "name = \"p\"\n[[skills]]\nsource = 3\n[[skills]]\nsource.path = \"a\"\n",
			wantName: "p",
			wantRaw:  `{"name":"p","skills":[{"source":3},{"source":{"path":"a"}}]}`,
			wantNote: true,
		},
		{name: "syntax error on line 3", doc: "name = \"p\"\n\nskills = = 1\n", wantErr: "line 3: invalid TOML: "},
		{name: "table defined twice", doc: "[defaults]\n[defaults]\n", wantErr: "line 2: invalid TOML: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, raw, note, err := rawManifest([]byte(tt.doc))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("rawManifest(%q) error %v, want one starting %q", tt.doc, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("rawManifest(%q): %v", tt.doc, err)
			}
			if name != tt.wantName {
				t.Errorf("name %q, want %q", name, tt.wantName)
			}
			if string(raw) != tt.wantRaw {
				t.Errorf("raw %s, want %s", raw, tt.wantRaw)
			}
			if (note != nil) != tt.wantNote {
				t.Errorf("note %v, want one: %v", note, tt.wantNote)
			}
		})
	}
}

// TestRetiredSkill: a bare skill whose front matter uses the retired
// `crates` key is offered with the key carried into its synthesized
// manifest (issue 16), so the host rejects it with the migration hint
// instead of the entry vanishing; anything else wrong stays a problem.
func TestRetiredSkill(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantRaw string // wire JSON of the offered manifest; "" for none
	}{
		{"crates", "---\nname: old\ndescription: Old\ncrates: serde, tokio\n---\nbody\n",
			`{"crates":["serde","tokio"],"name":"old","skills":[{"source":{"path":"."}}]}`},
		{"crates-first-with-depends-on", "---\ncrates: serde\nname: old\ndescription: Old\ndepends-on: tokio\n---\n",
			`{"crates":["serde"],"depends-on":["tokio"],"name":"old","skills":[{"source":{"path":"."}}]}`},
		{"crates-flow-list", "---\nname: old\ndescription: Old\ncrates: [serde, tokio]\n---\n",
			`{"crates":["serde","tokio"],"name":"old","skills":[{"source":{"path":"."}}]}`},
		{"crates-block-list", "---\nname: old\ndescription: Old\ncrates:\n  - serde\n---\n",
			`{"crates":["serde"],"name":"old","skills":[{"source":{"path":"."}}]}`},
		{"crates-mapping", "---\nname: old\ndescription: Old\ncrates:\n  a: b\n---\n", ""},
		{"crates-without-name", "---\ndescription: Old\ncrates: serde\n---\n", ""},
		{"crates-and-bad-yaml-after", "---\nname: old\ndescription: Old\ncrates: serde\nx: [\n---\n", ""},
		{"no-front-matter", "plain\n", ""},
		{"bad-description", "---\nname: old\ndescription: \"\"\n---\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "e"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "e", "SKILL.md"), []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			ent := loadEntry(dir, layout.Entry{Path: "e", Kind: layout.EntrySkill})
			if tc.wantRaw == "" {
				if ent.Problem == "" || ent.Manifest != nil {
					t.Fatalf("entry = %+v; want a problem and no manifest", ent)
				}
				return
			}
			if ent.Problem != "" || string(ent.Manifest) != tc.wantRaw || !strings.Contains(ent.Note, "crates was renamed") {
				t.Fatalf("entry = problem %q note %q manifest %s; want manifest %s with a note", ent.Problem, ent.Note, ent.Manifest, tc.wantRaw)
			}
			m, err := manifest.DecodeJSON(ent.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			_, problems := manifest.Validate(m, manifest.ValidateOptions{Origin: manifest.OriginRegistry, DefaultName: "e"})
			if len(problems) == 0 || !strings.Contains(problems[0].Error(), "crates was renamed: write depends-on") {
				t.Fatalf("host validation = %v; want the migration hint", problems)
			}
		})
	}
}
