package gitcache

import (
	"strings"
	"testing"
)

// FuzzParseRemote checks that any registry URL is parsed without panicking
// and that a password in it never reaches the URL shown in messages. A
// password is what stands in the user information: before the host of a
// URL with "://" (after any further slashes, up to the next '/' or '?',
// as redact.URL reads one the parser refuses), or before the '@' of an
// scp-like address. Text in the path of a URL, such as
// "0://host/:s3cret@", is the path.
func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{
		"https://github.com/symposium-dev/recommendations",
		"https://user:s3cret@git.example.com/org/reg.git",
		"http://127.0.0.1:8080/reg.git",
		"ssh://git@github.com/o/r.git",
		"git@github.com:o/r.git",
		"file:///srv/git/reg.git",
		"/srv/git/reg",
		"relative/path",
		"git://host/r",
		"ftp://host/r",
		"https://[::1]:99/x",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := parseRemote(raw)
		if err != nil {
			if strings.Contains(err.Error(), ":s3cret@") && inUserInfo(raw, ":s3cret@") {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if r.password != "" && len(r.password) > 3 && strings.Contains(r.url, r.password) {
			t.Fatalf("URL %q shows the password %q", r.url, r.password)
		}
	})
}

// inUserInfo reports whether secret occurs in raw where user information
// can stand: anywhere without "://", and with it only in the authority,
// the text after "://" and any further slashes up to the next '/' or '?'.
func inUserInfo(raw, secret string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return strings.Contains(raw, secret)
	}
	rest = strings.TrimLeft(rest, "/")
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, secret)
}

// FuzzValidateSubdir checks that an accepted subdir never climbs out of the
// repository.
func FuzzValidateSubdir(f *testing.F) {
	for _, s := range []string{"", ".", "registry", "a/b/c", "../x", "a/../b", "/abs", "a\\..\\b", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateSubdir(s) != nil {
			return
		}
		for _, part := range strings.Split(cleanSubdir(s), "/") {
			if part == ".." || part == "." || strings.ContainsRune(part, 0) {
				t.Fatalf("accepted %q with component %q", s, part)
			}
		}
	})
}
