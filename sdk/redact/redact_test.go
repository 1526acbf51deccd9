package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://user:s3cr3t@127.0.0.1:8080/simple/", "http://***@127.0.0.1:8080/simple/"},
		{"https://t0ken@pkgs.example.com/simple", "https://***@pkgs.example.com/simple"},
		{"https://__token__:pypi-AgE@h/simple/?x=1", "https://***@h/simple/?x=1"},
		{"https://pypi.org/simple/", "https://pypi.org/simple/"},
		{"https://u:p@h.example/x?q=1", "https://***@h.example/x?q=1"},
		{"https://h.example/x", "https://h.example/x"},
		{"sparse+https://tok@reg.example/", "sparse+https://***@reg.example/"},
		{"https://user:pass@r.example/x?token=1", "https://***@r.example/x?token=***"},
		{"https://r.example/x?a=1&token=s3cr3t", "https://r.example/x?a=1&token=***"},
		{"https://s3.example/t.tgz?X-Amz-Signature=abc&X-Amz-Credential=k", "https://s3.example/t.tgz?X-Amz-Signature=***&X-Amz-Credential=***"},
		{"ssh://git:s3cret@host/r", "ssh://***@host/r"},
		// Unparsable, or parsed without user information although the
		// authority holds an '@'.
		{"http://user:s3cr3t@[::1/simple", "http://***@[::1/simple"},
		{"0://user:s3cret@host", "0://***@host"},
		{"0://#:s3cret@0", "0://***@0"},
		{"0://\":s3cret@", "0://***@"},
		{"https://host/no-secret", "https://host/no-secret"},
		// An empty host typed before the user information: a parser reads
		// it as the path.
		{"https:///user:tok3n@github.com/o/r", "https:///***@github.com/o/r"},
		{"0:///:s3cret@", "0:///***@"},
		{"file:///srv/git/reg", "file:///srv/git/reg"},
		{"https://host/path/a:b@c", "https://host/path/a:b@c"},
		// scp-like addresses: a user alone is an address, a password is not.
		{"git@github.com:o/r.git", "git@github.com:o/r.git"},
		{"git:s3cret@github.com:o/r.git", "***@github.com:o/r.git"},
		{"", ""},
	} {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"GET https://user:s3cret@example.com/index/x failed", "GET https://***@example.com/index/x failed"},
		{"sparse+https://tok@reg.example/ and http://a:b@c/d", "sparse+https://***@reg.example/ and http://***@c/d"},
		{"no url here", "no url here"},
		{"https://example.com/a@b/c", "https://example.com/a@b/c"},
		{"error: `https://u:p@h`", "error: `https://***@h`"},
		{`remote include "https://user:s3cr3t@reqs.example/more.txt" is not read offline`, `remote include "https://***@reqs.example/more.txt" is not read offline`},
		{`editable "git+https://t0k@github.com/o/r.git" and git+ssh://git@host:x/y`, `editable "git+https://***@github.com/o/r.git" and git+ssh://***@host:x/y`},
		{`no credentials: https://pypi.org/simple/ a@b`, `no credentials: https://pypi.org/simple/ a@b`},
		{`weird https://u:p@ss@host/x`, `weird https://***@host/x`},
		{`trailing ://`, `trailing ://`},
		{"GET https://user:s3cret@registry.example/x 401", "GET https://***@registry.example/x 401"},
		{"//registry.example/:_authToken=npm_abcdef found", "//registry.example/:_authToken=*** found"},
		{"password: hunter2", "password: ***"},
		{"npm ERR! _auth = dXNlcjpwYXNz", "npm ERR! _auth = ***"},
		{`{"token": "s3cr3t", "name": "x"}`, `{"token": "***", "name": "x"}`},
		{"see https://h/x?token=abc&page=2", "see https://h/x?token=***&page=2"},
		{"> Authorization: Bearer abc.def\n< HTTP/1.1 401", "> Authorization: ***\n< HTTP/1.1 401"},
		{"cookie:session=abc", "cookie:***"},
		{"CARGO_REGISTRIES_CORP_TOKEN=s3cr3t cargo fetch", "CARGO_REGISTRIES_CORP_TOKEN=*** cargo fetch"},
		{"tokens: 3 of 5", "tokens: 3 of 5"},
		{"plain text", "plain text"},
		{`password = "correct horse battery staple"`, `password = "***"`},
		{`token = "Bearer cio_abcdef0123456789"`, `token = "***"`},
		{`{"token": "Bearer npm_abcdef0123456789", "x": 1}`, `{"token": "***", "x": 1}`},
		{`token = 'two words' kept`, `token = '***' kept`},
		{`password = "unterminated rest`, `password = "***`},
		{"token: Bearer abc.def next", "token: *** next"},
		{"error: failed to download from `https://dl.example.com/x-1.0.0.crate?key=SECRETVALUE`", "error: failed to download from `https://dl.example.com/x-1.0.0.crate?key=***`"},
		{"GET https://acct.blob.core.windows.net/c/x.whl?sv=2022-11-02&sig=SECRETVALUE: 403", "GET https://acct.blob.core.windows.net/c/x.whl?sv=2022-11-02&sig=***: 403"},
		{"GET https://b.s3.amazonaws.com/x.tgz?X-Amz-Credential=AKIA&X-Amz-Signature=SECRETVALUE (403)", "GET https://b.s3.amazonaws.com/x.tgz?X-Amz-Credential=***&X-Amz-Signature=*** (403)"},
		{"https://h/a?sig=1,https://u:p@h2/b?key=2.", "https://h/a?sig=***,https://***@h2/b?key=***."},
		{"https://h/page?q=1&per_page=2", "https://h/page?q=1&per_page=2"},
		{"", ""},
	} {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHeader(t *testing.T) {
	h := http.Header{
		"Authorization": {"Bearer s3cr3t"},
		"Cookie":        {"a=b"},
		"X-Api-Key":     {"k"},
		"Referer":       {"https://u:p@h/x"},
		"Accept":        {"application/json"},
	}
	got := Header(h)
	for k, want := range map[string]string{"Authorization": Mask, "Cookie": Mask, "X-Api-Key": Mask, "Referer": "https://***@h/x", "Accept": "application/json"} {
		if got.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, got.Get(k), want)
		}
	}
	if h.Get("Authorization") != "Bearer s3cr3t" {
		t.Error("Header changed its argument")
	}
}

type stringer struct{}

func (stringer) String() string { return "https://u:s3cr3t@h/" }

func TestHandlerAndReplaceAttr(t *testing.T) {
	var a, b bytes.Buffer
	loggers := []*slog.Logger{
		slog.New(Handler(slog.NewTextHandler(&a, nil))).With("base", "https://tok@h/"),
		slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: ReplaceAttr})).With("base", "https://tok@h/"),
	}
	for _, l := range loggers {
		l.WithGroup("g").Warn("fetch https://u:s3cr3t@h/x failed",
			"url", "https://u:s3cr3t@h/x",
			"err", errors.New("GET https://u:s3cr3t@h/x: 401"),
			"s", stringer{},
			"list", []string{"password=s3cr3t"},
			slog.Group("inner", "u", "https://u:s3cr3t@h/"))
	}
	for i, out := range []string{a.String(), b.String()} {
		if strings.Contains(out, "s3cr3t") || strings.Contains(out, "tok@") {
			t.Errorf("logger %d shows a secret: %s", i, out)
		}
		if !strings.Contains(out, "***@h") {
			t.Errorf("logger %d lost the host: %s", i, out)
		}
	}
	if !strings.Contains(a.String(), "fetch https://***@h/x failed") {
		t.Errorf("Handler left the message: %s", a.String())
	}
}

func TestError(t *testing.T) {
	if Error(nil) != "" {
		t.Error("Error(nil) not empty")
	}
	if got := Error(errors.New("https://a:b@h")); got != "https://***@h" {
		t.Errorf("Error = %q", got)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"https://user:secret@host/x", "a://@://b@c@", "password: x", "Authorization: Bearer t", "h?token=a&b=c", `"token":"v"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if again := Text(out); again != out {
			t.Fatalf("Text not idempotent: %q -> %q -> %q", s, out, again)
		}
		u := URL(s)
		if again := URL(u); again != u {
			t.Fatalf("URL not idempotent: %q -> %q -> %q", s, u, again)
		}
		// A secret in the user information of a URL never survives.
		in := s + " https://SECRETSECRET@host/"
		if strings.Contains(Text(in), "SECRETSECRET") {
			t.Fatalf("Text(%q) = %q", in, Text(in))
		}
		in = "https://user:SECRETSECRET@" + strings.Map(func(r rune) rune {
			if strings.ContainsRune("/?#@ \t\r\n\"'`\\<>()[]{},;%", r) {
				return -1
			}
			return r
		}, s) + "/x"
		if strings.Contains(URL(in), "SECRETSECRET") {
			t.Fatalf("URL(%q) = %q", in, URL(in))
		}
	})
}
