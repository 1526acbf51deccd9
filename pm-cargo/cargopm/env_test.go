package cargopm

import "testing"

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"GET https://user:s3cret@example.com/index/x failed": "GET https://example.com/index/x failed",
		"sparse+https://tok@reg.example/ and http://a:b@c/d": "sparse+https://reg.example/ and http://c/d",
		"no url here":               "no url here",
		"https://example.com/a@b/c": "https://example.com/a@b/c",
		"error: `https://u:p@h`":    "error: `https://h`",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidCrateName(t *testing.T) {
	for name, ok := range map[string]bool{"serde": true, "serde_json": true, "a-b": true, "A1": true, "": false, "../x": false, "a b": false, "é": false} {
		if validCrateName(name) != ok {
			t.Errorf("validCrateName(%q) = %v", name, !ok)
		}
	}
}
