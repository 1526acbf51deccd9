package predicate

import (
	"reflect"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"depends-on(serde>=1)", "any(env(A), not(shell(x)))", "env(A=b)", "my(x)", "workspace-member()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		c := p.String()
		q, err := Parse(c)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", c, s, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("canonical %q of %q parses to a different value:\n%#v\n%#v", c, s, p, q)
		}
		if q.String() != c {
			t.Fatalf("canonical form not stable: %q then %q", c, q.String())
		}
	})
}

func FuzzParseAtom(f *testing.F) {
	for _, s := range []string{"serde", "*", "serde=1.0", "x>=1.2,<2", "@types/node^18"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAtom(s)
		if err != nil {
			return
		}
		b, err := ParseAtom(a.String())
		if err != nil || a != b {
			t.Fatalf("atom %q: canonical %q reparses to %#v, %v", s, a.String(), b, err)
		}
	})
}
