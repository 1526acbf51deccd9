package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "cio_SECRET_TOKEN_123"

// requestLog records "host path Authorization" for each request a test
// server receives.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) add(what string, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, what+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
}

func (l *requestLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// TestTokenNotSentOverHTTPAfterRedirect: a sparse registry at
// https://example.com/index/ that wants a token (config.json answers 401
// without it) redirects config.json, asked for with the token, within
// https://example.com (the token follows, as with libcurl) and then to
// http://example.com/ (same host, plain HTTP). net/http would copy the
// Authorization header to the same host whatever the scheme; cargo's
// libcurl drops it on a change of scheme, host or port, and so must the
// client, with an http.Client of no redirect policy of its own (as the
// caller's may be).
func TestTokenNotSentOverHTTPAfterRedirect(t *testing.T) {
	var log requestLog
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add("http", r)
		w.Write([]byte(`{"dl":"https://example.com/dl","api":"https://example.com"}`))
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add("https", r)
		switch {
		case r.Header.Get("Authorization") != testToken:
			w.Header().Set("WWW-Authenticate", `Cargo login_url="https://example.com/me"`)
			http.Error(w, "log in", http.StatusUnauthorized)
		case r.URL.Path == "/index/config.json":
			http.Redirect(w, r, "/moved/config.json", http.StatusFound)
		default:
			http.Redirect(w, r, "http://example.com"+r.URL.Path, http.StatusFound)
		}
	}))
	defer tlsSrv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	// example.com:443 is the TLS server, example.com:80 the plain one.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch addr {
		case "example.com:443":
			addr = tlsSrv.Listener.Addr().String()
		case "example.com:80":
			addr = plain.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c := &Client{HTTP: &http.Client{Transport: tr, Timeout: 60 * time.Second}, Index: "https://example.com/index/", Token: testToken}
	if _, err := c.Config(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"https /index/config.json ",
		"https /index/config.json " + testToken,
		"https /moved/config.json " + testToken,
		"http /moved/config.json ",
	}
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("requests (where, path, Authorization):\n%q\nwant\n%q", got, want)
	}
}

// authRegistry is a sparse registry at /index/ with its web API at api
// (the same server when api is ""), whose config.json says authRequired;
// when locked, config.json answers 401 to a request without the token
// (and 403 to a wrong one), as RFC 3139 has a registry that wants one do.
func authRegistry(t *testing.T, log *requestLog, api string, authRequired, locked bool) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add("index", r)
		if locked {
			switch r.Header.Get("Authorization") {
			case "":
				http.Error(w, "log in", http.StatusUnauthorized)
				return
			case testToken:
			default:
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
		}
		switch r.URL.Path {
		case "/index/config.json":
			a := api
			if a == "" {
				a = srv.URL
			}
			json.NewEncoder(w).Encode(map[string]any{"dl": a + "/api/v1/crates", "api": a, "auth-required": authRequired})
		case "/index/3/f/foo":
			w.Write([]byte(`{"name":"foo","vers":"0.1.0","cksum":"cc","yanked":false}` + "\n"))
		case "/api/v1/crates":
			w.Write([]byte(`{"crates":[{"name":"foo","max_version":"0.1.0","description":"d"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTokenOnlyWhenAsked: the client sends the token as cargo does (RFC
// 3139; cargo's HttpRegistry and ops::registry): config.json without it,
// again with it only after a 401; index files and the web API with it
// only when config.json says auth-required (AuthRequired).
func TestTokenOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                 string
		authRequired, locked bool
		want                 []string
	}{
		{"public registry", false, false, []string{
			"index /index/config.json ", "index /index/3/f/foo ", "index /api/v1/crates ",
		}},
		{"public config.json, auth-required", true, false, []string{
			"index /index/config.json ", "index /index/3/f/foo " + testToken, "index /api/v1/crates " + testToken,
		}},
		{"401 then auth-required", true, true, []string{
			"index /index/config.json ", "index /index/config.json " + testToken,
			"index /index/3/f/foo " + testToken, "index /api/v1/crates " + testToken,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log requestLog
			srv := authRegistry(t, &log, "", tc.authRequired, tc.locked)
			c := &Client{Index: srv.URL + "/index/", Token: testToken}
			cfg, err := c.Config(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c.AuthRequired = cfg.AuthRequired
			if _, err := c.Versions(ctx, "foo"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Search(ctx, cfg.API, "foo", 5); err != nil {
				t.Fatal(err)
			}
			if got := log.get(); !slices.Equal(got, tc.want) {
				t.Errorf("requests (path, Authorization):\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestConfig401: a config.json that answers 401 without a token to send,
// or to the token sent, is a *StatusError of status 401 naming the URL,
// after one request (no token) or two (the token rejected), never
// showing the token.
func TestConfig401(t *testing.T) {
	for _, tc := range []struct {
		token    string
		requests int
	}{{"", 1}, {"wrong-token", 2}} {
		var log requestLog
		srv := authRegistry(t, &log, "", true, true)
		c := &Client{Index: srv.URL + "/index/", Token: tc.token}
		_, err := c.Config(context.Background())
		var se *StatusError
		if !errors.As(err, &se) || se.Status != http.StatusUnauthorized || se.URL != srv.URL+"/index/config.json" {
			t.Errorf("token %q: %v, want a 401 for config.json", tc.token, err)
		}
		if tc.token != "" && strings.Contains(err.Error(), tc.token) {
			t.Errorf("the error shows the token: %v", err)
		}
		if n := len(log.get()); n != tc.requests {
			t.Errorf("token %q: %d requests, want %d", tc.token, n, tc.requests)
		}
	}
}
