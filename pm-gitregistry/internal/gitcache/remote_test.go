package gitcache

import (
	"strings"
	"testing"
)

// TestRedactUnparsable checks that URLs the parsers refuse still have what
// looks like a password hidden, in Redact and in parseRemote's error, even
// where the parser's message quotes the URL with escapes.
func TestRedactUnparsable(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://user:s3cret@host/r", "https://user:xxxxx@host/r"},
		{"0://user:s3cret@host", "0://user:xxxxx@host"},
		{"0://#:s3cret@0", "0://#:xxxxx@0"},
		{"0://\":s3cret@", "0://\":xxxxx@"},
		{"https://host/no-secret", "https://host/no-secret"},
	}
	for _, tt := range tests {
		if got := Redact(tt.raw); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.raw, got, tt.want)
		}
		if _, err := parseRemote(tt.raw); err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseRemote(%q) error shows the password: %v", tt.raw, err)
		}
	}
}

// TestRefNotFoundAbbreviation: a --ref that looks like an abbreviated
// commit id is not found as a ref, and the message says ids are given in
// full (issue 17: abbreviations are refused everywhere).
func TestRefNotFoundAbbreviation(t *testing.T) {
	for ref, hint := range map[string]bool{"abc1234": true, "ABC1234def": true, "main": false, "": false, "dead": true, "face-1": false} {
		msg := (&RefNotFoundError{URL: "u", Ref: ref}).Error()
		if got := strings.Contains(msg, "a commit id must be given in full, 40 hex digits"); got != hint {
			t.Errorf("ref %q: %q; hint %v, want %v", ref, msg, got, hint)
		}
	}
}
