package simpleapi

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:s3cr3t@127.0.0.1:8080/simple/": "http://***@127.0.0.1:8080/simple/",
		"https://t0ken@pkgs.example.com/simple":     "https://***@pkgs.example.com/simple",
		"https://__token__:pypi-AgE@h/simple/?x=1":  "https://***@h/simple/?x=1",
		"https://pypi.org/simple/":                  "https://pypi.org/simple/",
		"http://user:s3cr3t@[::1/simple":            "<unparseable URL>",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactText(t *testing.T) {
	for in, want := range map[string]string{
		`remote include "https://user:s3cr3t@reqs.example/more.txt" is not read offline`: `remote include "https://***@reqs.example/more.txt" is not read offline`,
		`editable "git+https://t0k@github.com/o/r.git" and git+ssh://git@host:x/y`:       `editable "git+https://***@github.com/o/r.git" and git+ssh://***@host:x/y`,
		`no credentials: https://pypi.org/simple/ a@b`:                                   `no credentials: https://pypi.org/simple/ a@b`,
		`weird https://u:p@ss@host/x`:                                                    `weird https://***@host/x`,
		`trailing ://`:                                                                   `trailing ://`,
		`plain text`:                                                                     `plain text`,
	} {
		if got := RedactText(in); got != want {
			t.Errorf("RedactText(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRedactText(f *testing.F) {
	f.Add("https://user:secret@host/x")
	f.Add("a://@://b@c@")
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactText(s)
		if again := RedactText(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if strings.HasPrefix(s, "https://secret@") && strings.HasPrefix(out, "https://secret") {
			t.Fatalf("%q -> %q", s, out)
		}
	})
}
