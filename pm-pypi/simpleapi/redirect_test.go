package simpleapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestRedirectToPlainHTTPDropsCredentials: an index at
// https://user:secret@example.com/simple/ whose project page redirects to
// http://example.com/ (same host, plain http, as a misconfigured proxy or
// load balancer does) must not have the credentials sent in clear text:
// not with the redirected request, not with the download of a file the
// plain-http page links to. (The client sends credentials only as URL
// userinfo, which net/http turns into a basic Authorization header on each
// request and does not carry over a redirect to another origin; what kept
// them was the client re-attaching them to any URL on the index's host
// name, whatever the scheme and port.)
func TestRedirectToPlainHTTPDropsCredentials(t *testing.T) {
	file := []byte("not really a wheel")
	sum := sha256.Sum256(file)
	var mu sync.Mutex
	var plainAuth, tlsAuth []string
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		plainAuth = append(plainAuth, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/simple/demo/":
			w.Header().Set("Content-Type", jsonType)
			io.WriteString(w, `{"meta":{"api-version":"1.0"},"files":[{"filename":"demo-1.0-py3-none-any.whl","url":"../../files/demo-1.0-py3-none-any.whl","hashes":{"sha256":"`+hex.EncodeToString(sum[:])+`"}}]}`)
		case "/files/demo-1.0-py3-none-any.whl":
			w.Write(file)
		default:
			http.NotFound(w, r)
		}
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tlsAuth = append(tlsAuth, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, "http://example.com"+r.URL.Path, http.StatusFound)
	}))
	defer secure.Close()

	c := NewClient(Config{Index: "https://user:secret@example.com/simple/"}, noenv, "test")
	serveExampleCom(t, c, secure, plain)

	p, err := c.Project(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 {
		t.Fatalf("files: %+v", p.Files)
	}
	if u, _ := url.Parse(p.Files[0].URL); u.User != nil {
		t.Errorf("the file's URL on plain http carries the index's credentials: %s", u.Redacted())
	}
	var sb strings.Builder
	if _, err := c.Download(context.Background(), p.Files[0], &sb, 1<<20); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tlsAuth) != 1 || !strings.HasPrefix(tlsAuth[0], "/simple/demo/ Basic ") {
		t.Errorf("the https index received %q, want its credentials once", tlsAuth)
	}
	for _, a := range plainAuth {
		if path, auth, _ := strings.Cut(a, " "); auth != "" {
			t.Errorf("plain http received credentials for %s: %s", path, auth)
		}
	}
	if len(plainAuth) != 2 {
		t.Errorf("plain http requests: %q", plainAuth)
	}
}

// serveExampleCom points c's connections to example.com at two test
// servers: port 443 at secure (whose certificate names example.com), port
// 80 at plain.
func serveExampleCom(t *testing.T, c *Client, secure, plain *httptest.Server) {
	tr := c.HTTP.Transport.(*http.Transport)
	tr.TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch addr {
		case "example.com:443":
			addr = secure.Listener.Addr().String()
		case "example.com:80":
			addr = plain.Listener.Addr().String()
		default:
			t.Errorf("dialled %s", addr)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// TestRedirectHeaderCredentials: the client's redirect policy is
// sdk/redirect's, which drops Authorization and Cookie headers on a
// redirect to another scheme, host or port; net/http's own copies them to
// any URL on the same host name, http:// included. The client sets no
// such header itself today (its credentials are URL userinfo, see above);
// this holds the policy in place for the day it does.
func TestRedirectHeaderCredentials(t *testing.T) {
	got := make(chan string, 2)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "plain " + r.Header.Get("Authorization") + "|" + r.Header.Get("Cookie")
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "tls " + r.Header.Get("Authorization") + "|" + r.Header.Get("Cookie")
		http.Redirect(w, r, "http://example.com/simple/demo/", http.StatusFound)
	}))
	defer secure.Close()
	c := NewClient(Config{Index: "https://example.com/simple/"}, noenv, "test")
	serveExampleCom(t, c, secure, plain)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://example.com/simple/demo/", nil)
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Cookie", "session=secret")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a, b := <-got, <-got; a != "tls Bearer secret|session=secret" || b != "plain |" {
		t.Errorf("https://example.com received %q, then http://example.com received %q; want the credentials only over https", a, b)
	}
}

func TestCredentialsFollow(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		want     bool
	}{
		{"https://u:p@example.com/simple/", "https://example.com/files/a.whl", true},
		{"https://u:p@example.com/simple/", "https://EXAMPLE.com:443/files/a.whl", true},
		{"http://u:p@example.com:80/simple/", "http://example.com/files/a.whl", true},
		{"http://u:p@example.com/simple/", "https://example.com/files/a.whl", true},
		{"https://u:p@example.com/simple/", "http://example.com/files/a.whl", false},
		{"https://u:p@example.com/simple/", "https://example.com:8443/files/a.whl", false},
		{"http://u:p@example.com:8080/simple/", "https://example.com/files/a.whl", false},
		{"https://u:p@example.com/simple/", "https://files.example.com/a.whl", false},
		{"https://u:p@example.com/simple/", "https://example.org/a.whl", false},
	} {
		from, _ := url.Parse(tt.from)
		to, _ := url.Parse(tt.to)
		if got := credentialsFollow(from, to); got != tt.want {
			t.Errorf("%s -> %s: %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}
