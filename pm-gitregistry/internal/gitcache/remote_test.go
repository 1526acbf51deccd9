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

// TestRemoteProxy: the proxy is chosen as git's libcurl chooses it
// (all_proxy included, lower case first), and a malformed setting is an
// error naming it, never a quiet direct connection around it.
func TestRemoteProxy(t *testing.T) {
	r, err := parseRemote("https://git.example/r.git")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
		err  string
	}{
		{"none", nil, "", ""},
		{"all_proxy", map[string]string{"ALL_PROXY": "http://all.example:3128"}, "http://all.example:3128", ""},
		{"lower case first", map[string]string{"HTTPS_PROXY": "http://up.example:1", "https_proxy": "http://low.example:1"}, "http://low.example:1", ""},
		{"no_proxy", map[string]string{"all_proxy": "http://all.example:1", "no_proxy": "git.example"}, "", ""},
		{"malformed", map[string]string{"https_proxy": "http://u:s3cret@[::1"}, "", "invalid proxy setting"},
	} {
		got, err := r.proxy(func(k string) string { return tt.env[k] })
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: %v, want an error %q without the password", tt.name, err, tt.err)
			}
		case err != nil || got.URL != tt.want:
			t.Errorf("%s: proxy %q, %v; want %q", tt.name, got.URL, err, tt.want)
		}
	}
}
