package manifest

import (
	"strings"
	"testing"
)

// TestMCPEntriesNeedValue: an MCP server's env and headers entries are
// {name, value} pairs (docs/manifests.md §6.3); one without a value is a
// problem naming it, while an empty value is a value.
func TestMCPEntriesNeedValue(t *testing.T) {
	for _, tc := range []struct{ doc, problem string }{
		{"name='x'\ndepends-on='a'\n[[mcp_servers]]\nname='m'\ncommand='c'\nargs=[]\nenv=[{name='GIZMO_LOG'}]\n", "environment entry needs a value"},
		{"name='x'\ndepends-on='a'\n[[mcp_servers]]\ntype='http'\nname='m'\nurl='http://h'\nheaders=[{name='Authorization'}]\n", "header needs a value"},
		{"name='x'\ndepends-on='a'\n[[mcp_servers]]\nname='m'\ncommand='c'\nargs=[]\nenv=[{name='EMPTY', value=''}]\n", ""},
	} {
		m, err := DecodeTOML([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		p, ps := Validate(m, ValidateOptions{Origin: OriginRegistry, File: "SYMPOSIUM.toml"})
		switch {
		case tc.problem == "" && (p == nil || len(ps) > 0):
			t.Errorf("refused (%v):\n%s", ps, tc.doc)
		case tc.problem != "" && (p != nil || len(ps) != 1 || !strings.Contains(ps[0].Message, tc.problem)):
			t.Errorf("problems %v, want one saying %q:\n%s", ps, tc.problem, tc.doc)
		}
	}
	// The wire form keeps an absent value absent.
	m, _ := DecodeTOML([]byte("name='x'\n[[mcp_servers]]\nname='m'\ncommand='c'\nargs=[]\nenv=[{name='A'}]\n"))
	wire, err := m.WireJSON()
	if err != nil || strings.Contains(string(wire), `"value"`) {
		t.Errorf("wire form %s, %v: want no value key", wire, err)
	}
}
