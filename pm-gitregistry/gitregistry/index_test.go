package gitregistry

import (
	"strings"
	"testing"
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
