package migrate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// FuzzTOML checks that the rewriter never panics and never turns a document
// that parsed into one that does not, and that it leaves a document it does
// not change byte for byte as it was.
func FuzzTOML(f *testing.F) {
	for _, c := range tomlCases {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("name = \"p\"\n[[skills]]\ncrates = [\"a\"]\nsource = { crate_path = \"skills\" }\n"))
	f.Add([]byte("[where]\ncrates = 'a'\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var before map[string]any
		parsed := toml.Unmarshal(in, &before) == nil
		out, changes, err := TOML(in)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%v\ninput: %q", err, in)
			}
			return
		}
		if !parsed {
			t.Fatalf("accepted a document that does not parse: %q", in)
		}
		var after map[string]any
		if err := toml.Unmarshal(out, &after); err != nil {
			t.Fatalf("output does not parse: %v\ninput: %q\noutput: %q", err, in, out)
		}
		if len(changes) == 0 && !bytes.Equal(in, out) {
			t.Fatalf("no changes reported but the text changed: %q → %q", in, out)
		}
	})
}

// FuzzSkillMD checks the same for SKILL.md front matter.
func FuzzSkillMD(f *testing.F) {
	for _, c := range skillCases {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("---\ncrates:\n- a\n- b\n---\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, changes, err := SkillMD(in)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%v\ninput: %q", err, in)
			}
			return
		}
		if len(changes) == 0 && !bytes.Equal(in, out) {
			t.Fatalf("no changes reported but the text changed: %q → %q", in, out)
		}
		if _, fm, ok := frontMatter(in); ok {
			var n yaml.Node
			if yaml.Unmarshal(fm, &n) != nil {
				return
			}
			_, nfm, ok := frontMatter(out)
			if !ok {
				t.Fatalf("front matter lost: %q → %q", in, out)
			}
			if err := yaml.Unmarshal(nfm, &n); err != nil {
				t.Fatalf("output front matter does not parse: %v\ninput: %q\noutput: %q", err, in, out)
			}
		}
	})
}
