package manifest

import "testing"

// A digit-only key is a key, not an array index: the problem of
// [subcommand.42] carries the line of that header (6), not of its parent.
func TestNumericSubcommandNameHasItsLine(t *testing.T) {
	doc := "name='x'\ndepends-on='a'\n[subcommand.ok]\ndescription='d'\ncommand={executable='x'}\n[subcommand.42]\ncommand={executable='x'}\n"
	_, ps := validateTOML(t, doc)
	if len(ps) != 1 || ps[0].Field != "subcommand.42" || ps[0].Line != 6 {
		t.Fatalf("got %v; want one problem on subcommand.42, line 6", ps)
	}
}

// scanTOMLLines records digit-only key parts as keys (`a.0`) and only the
// positions of arrays and arrays of tables as indices (`a[0]`).
func TestScanTOMLLinesDigitKeys(t *testing.T) {
	src := `[t]
0 = 1
1.2 = [10, { 3 = 4 }]
[[arr]]
5 = 'x'
[[arr]]
[arr.7]
8 = 9
[u."10"]
`
	lines := scanTOMLLines([]byte(src))
	want := map[string]int{
		"t":          1,
		"t.0":        2,
		"t.1":        3,
		"t.1.2":      3,
		"t.1.2[0]":   3,
		"t.1.2[1]":   3,
		"t.1.2[1].3": 3,
		"arr":        4,
		"arr[0]":     4,
		"arr[0].5":   5,
		"arr[1]":     6,
		"arr[1].7":   7,
		"arr[1].7.8": 8,
		"u.10":       9,
	}
	for field, line := range want {
		if got, ok := lines[field]; !ok || got != line {
			t.Errorf("lines[%q] = %d, %v; want %d", field, got, ok, line)
		}
	}
	for _, wrong := range []string{"t[0]", "t[1]", "arr[0][5]", "arr[1][7]", "u[10]"} {
		if _, ok := lines[wrong]; ok {
			t.Errorf("lines holds %q", wrong)
		}
	}
}
