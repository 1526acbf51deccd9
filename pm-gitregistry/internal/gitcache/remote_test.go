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
