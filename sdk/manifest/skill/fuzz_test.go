package skill

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: x\ndescription: y\n---\nbody\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, strict bool) {
		s, err := Parse(data, strict)
		if err != nil {
			return
		}
		if strict && (s.Name == "" || s.Description == "") {
			t.Fatalf("strict parse accepted %#v", s)
		}
		for _, a := range s.DependsOn {
			if _, err := predicate.ParseAtom(a); err != nil {
				t.Fatalf("accepted bad atom %q", a)
			}
		}
	})
}
