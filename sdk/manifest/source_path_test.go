package manifest

import "testing"

// validateTOML decodes doc as a registry SYMPOSIUM.toml and validates it.
func validateTOML(t *testing.T, doc string) (*Plugin, []Problem) {
	t.Helper()
	m, err := DecodeTOML([]byte(doc))
	if err != nil {
		t.Fatalf("DecodeTOML: %v", err)
	}
	return Validate(m, ValidateOptions{Origin: OriginRegistry, File: "SYMPOSIUM.toml"})
}

// source.path and source.git are mutually exclusive (docs §5) even when the
// path is empty: an empty path is written, so it is present.
func TestSkillSourceEmptyPathAndGitAreExclusive(t *testing.T) {
	for _, src := range []string{
		"{ path = '', git = 'https://github.com/a/b' }",
		"{ path = 'skills', git = '' }",
		"{ path = '', git = '' }",
	} {
		p, ps := validateTOML(t, "name='x'\ndepends-on='a'\n[[skills]]\nsource = "+src+"\n")
		if p != nil || len(ps) != 1 || ps[0].Field != "skills[0].source" || ps[0].Message != "source.path and source.git are mutually exclusive" {
			t.Errorf("source = %s: plugin %v, problems %v; want the mutually-exclusive problem", src, p, ps)
		}
	}
}

// An empty source.path names the manifest's directory, the plugin root
// (docs §5: a directory relative to the manifest's directory); the valid
// group names it ".", which the host walks as the root.
func TestSkillSourceEmptyPathIsPluginRoot(t *testing.T) {
	for _, doc := range []string{
		"name='x'\ndepends-on='a'\n[[skills]]\nsource.path = ''\n",
		"name='x'\ndepends-on='a'\n[[skills]]\nsource = { path = '' }\n",
	} {
		p, ps := validateTOML(t, doc)
		if p == nil || len(ps) != 0 {
			t.Fatalf("%s: problems %v; want none", doc, ps)
		}
		if len(p.Skills) != 1 || p.Skills[0].Path != "." || p.Skills[0].Git != "" {
			t.Errorf("%s: skills %+v; want one group at path \".\"", doc, p.Skills)
		}
	}
	// The wire form keeps the empty path, and both JSON decoders read it
	// back as present.
	m, err := DecodeTOML([]byte("name='x'\n[[skills]]\nsource.path = ''\n"))
	if err != nil {
		t.Fatal(err)
	}
	wire, err := m.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{wire, []byte(`{"name":"x","skills":[{"source":{"path":""}}]}`)} {
		checkPlainAgrees(t, data)
		back, err := DecodeJSON(data)
		if err != nil {
			t.Fatalf("DecodeJSON(%s): %v", data, err)
		}
		if p, ps := Validate(back, ValidateOptions{Origin: OriginRegistry}); p == nil || p.Skills[0].Path != "." {
			t.Errorf("DecodeJSON(%s): problems %v; want the plugin root group", data, ps)
		}
	}
}

// A source with neither key is still refused.
func TestSkillSourceNeedsPathOrGit(t *testing.T) {
	p, ps := validateTOML(t, "name='x'\ndepends-on='a'\n[[skills]]\nsource = {}\n")
	if p != nil || len(ps) != 1 || ps[0].Message != "source must set path or git" {
		t.Errorf("plugin %v, problems %v; want \"source must set path or git\"", p, ps)
	}
}
