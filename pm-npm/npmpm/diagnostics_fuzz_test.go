package npmpm

import (
	"strings"
	"testing"
)

// FuzzDepTableProblems: any package.json text gives problems without
// panicking, each naming the member in the user's terms.
func FuzzDepTableProblems(f *testing.F) {
	for _, s := range []string{
		`{"dependencies": ["left-pad"]}`,
		`{"dependencies": {"a": "1", "b": 2, "c": null}, "devDependencies": "x"}`,
		`{"peerDependencies": {"a": {"b": 1}}}`,
		`[1]`, `{`, `{"optionalDependencies": true}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, p := range depTableProblems([]byte(data)) {
			if strings.Contains(p, "interface {}") || strings.Contains(p, "Go ") {
				t.Fatalf("Go terms in %q", p)
			}
		}
	})
}

func TestDepTableProblems(t *testing.T) {
	for in, want := range map[string]string{
		`{"dependencies": ["left-pad"]}`:                          `"dependencies" is an array, not an object of package names to version ranges; its entries are ignored`,
		`{"devDependencies": {"a": "1", "b": 2, "c": {}}}`:        `"devDependencies": the version ranges of "b" (a number), "c" (an object) are not strings; those entries are ignored`,
		`{"dependencies": {"a": "^1"}, "peerDependencies": null}`: ``,
	} {
		got := strings.Join(depTableProblems([]byte(in)), " | ")
		if want == "" && got != "" || !strings.HasPrefix(got, want) {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
}
