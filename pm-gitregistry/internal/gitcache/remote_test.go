package gitcache

import (
	"errors"
	"strings"
	"testing"
)

// TestParseRemoteHidesPassword checks that URLs the parsers refuse do not
// show their password in parseRemote's error, even where the parser's
// message quotes the URL with escapes, and that an accepted ssh URL
// with a password does not show it either.
func TestParseRemoteHidesPassword(t *testing.T) {
	for _, raw := range []string{"https://user:s3cret@host/r", "0://user:s3cret@host", "0://#:s3cret@0", "0://\":s3cret@", "ssh://git:s3cret@host/r",
		"https:///user:s3cret@host/r", "0:///:s3cret@"} {
		r, err := parseRemote(raw)
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseRemote(%q) error shows the password: %v", raw, err)
		}
		if err == nil && strings.Contains(r.url, "s3cret") {
			t.Errorf("parseRemote(%q) URL shows the password: %s", raw, r.url)
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

// TestParseRemoteGitURLDropsUserinfo: the git protocol has no
// authentication, so user information in a git:// URL is dropped from the
// URL kept to log and to store (state.json), as for https; it kept the
// password in clear.
func TestParseRemoteGitURLDropsUserinfo(t *testing.T) {
	for raw, want := range map[string]string{
		"git://alice:pw-secret@host/r.git":      "git://host/r.git",
		"git://alice:pw-secret@host:9419/r.git": "git://host:9419/r.git",
		"git://alice@host/r.git":                "git://host/r.git",
		"git://host/r.git":                      "git://host/r.git",
	} {
		r, err := parseRemote(raw)
		if err != nil {
			t.Fatalf("parseRemote(%q): %v", raw, err)
		}
		if r.url != want || strings.Contains(r.endpoint.String(), "pw-secret") {
			t.Errorf("parseRemote(%q) URL %q, endpoint %q; want %q", raw, r.url, r.endpoint.String(), want)
		}
		if err := r.scrub(errors.New("dial " + raw)); strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("parseRemote(%q): scrub leaves the password: %v", raw, err)
		}
	}
}
