package gitcache

import (
	"errors"
	"os"
	"path/filepath"
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
	home := func(gitconfig string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	withProxy := home("[http]\n\tproxy = http://git-config.example:8080\n")
	noProxy := home("[http]\n\tproxy =\n")
	broken := home("[http\n\tproxy = http://x\n")
	global := filepath.Join(home("[http]\n\tproxy = http://other.example:1\n"), ".gitconfig")
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
		err  string
	}{
		{"none", nil, "", ""},
		{"git http.proxy over the environment", map[string]string{"HOME": withProxy, "https_proxy": "http://env.example:1"}, "http://git-config.example:8080", ""},
		{"git http.proxy empty: direct", map[string]string{"HOME": noProxy, "https_proxy": "http://env.example:1"}, "", ""},
		{"no_proxy still applies", map[string]string{"HOME": withProxy, "no_proxy": "git.example"}, "", ""},
		{"GIT_CONFIG_GLOBAL", map[string]string{"HOME": withProxy, "GIT_CONFIG_GLOBAL": global}, "http://other.example:1", ""},
		{"git configuration that does not parse", map[string]string{"HOME": broken}, "", ".gitconfig"},
		{"all_proxy", map[string]string{"ALL_PROXY": "http://all.example:3128"}, "http://all.example:3128", ""},
		{"lower case first", map[string]string{"HTTPS_PROXY": "http://up.example:1", "https_proxy": "http://low.example:1"}, "http://low.example:1", ""},
		{"no_proxy", map[string]string{"all_proxy": "http://all.example:1", "no_proxy": "git.example"}, "", ""},
		{"malformed", map[string]string{"https_proxy": "http://u:s3cret@[::1"}, "", "invalid proxy setting"},
	} {
		got, err := r.proxy(func(k string) string {
			if k == "GIT_CONFIG_NOSYSTEM" {
				return "1" // not this machine's /etc/gitconfig
			}
			return tt.env[k]
		})
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
