package oneline

import "testing"

func TestFlatten(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"plain":             "plain",
		"a\nb":              "a b",
		"a\r\nb":            "a b",
		"a\rb":              "a b",
		"a\tb":              "a b",
		"a\n\nb\r\n":        "a  b ",
		"tab\tand\r\nlines": "tab and lines",
	} {
		if got := Flatten(in); got != want {
			t.Errorf("Flatten(%q) = %q, want %q", in, got, want)
		}
	}
}
