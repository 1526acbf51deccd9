package simpleapi

import "testing"

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
