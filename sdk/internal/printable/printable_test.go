package printable

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"plain text":                        "plain text",
		"two\nlines\tand a tab":             "two\nlines\tand a tab",
		"x\x1b]0;title\x07\x1b[2J":          "x]0;title[2J",
		"bell\a, nul\x00, del\x7f":          "bell, nul, del",
		"c1 \u0085 and \u009b":              "c1  and ",
		"sep\u2028para\u2029":               "seppara",
		"admin\u202e\u2066txt.exe\u2069":    "admintxt.exe",
		"mark\u200e\u200f\u061c":            "mark",
		"bad \xff utf-8":                    "bad \uFFFD utf-8",
		"caf\u00e9 \u65e5\u672c \U0001F600": "caf\u00e9 \u65e5\u672c \U0001F600",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("x\x1b[2J\u202e\xff\n\t")
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		for _, r := range got {
			if Hidden(r) {
				t.Fatalf("String(%q) = %q keeps %U", s, got, r)
			}
		}
		if String(got) != got {
			t.Fatalf("String is not idempotent on %q", s)
		}
	})
}
