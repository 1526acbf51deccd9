package registry

import (
	"bytes"
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
)

// TestTokenNotSentOverHTTPAfterRedirect: the registry is
// https://example.com/ with an _authToken. A tarball request redirected
// within the registry's origin keeps the token; one redirected to
// http://example.com/ (the same host, plain HTTP, where net/http would
// copy the header) does not carry it in clear text, as curl and Python's
// requests drop credentials on a change of scheme.
func TestTokenNotSentOverHTTPAfterRedirect(t *testing.T) {
	const token = "npm_SECRET_TOKEN_123"
	var mu sync.Mutex
	got := map[string]string{} // path → Authorization received
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["http "+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Write([]byte("tarball"))
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same/-/same-1.0.0.tgz":
			http.Redirect(w, r, "https://example.com/moved/-/same-1.0.0.tgz", http.StatusFound)
		case "/moved/-/same-1.0.0.tgz":
			mu.Lock()
			got["https "+r.URL.Path] = r.Header.Get("Authorization")
			mu.Unlock()
			w.Write([]byte("tarball"))
		default:
			http.Redirect(w, r, "http://example.com/pkg/-/pkg-1.0.0.tgz", http.StatusFound)
		}
	}))
	defer tlsSrv.Close()

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte("registry=https://example.com/\n//example.com/:_authToken="+token+"\ncafile="+ca+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := envWith{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(dir, "none")}
	c, err := New(npmrc.Load(dir, env), env, "test")
	if err != nil {
		t.Fatal(err)
	}
	// example.com:443 is the TLS registry (its test certificate names
	// example.com), example.com:80 the plain server.
	tr := c.http.Transport.(*http.Transport)
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch addr {
		case "example.com:443":
			addr = tlsSrv.Listener.Addr().String()
		case "example.com:80":
			addr = plain.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	for _, u := range []string{"https://example.com/pkg/-/pkg-1.0.0.tgz", "https://example.com/same/-/same-1.0.0.tgz"} {
		var buf bytes.Buffer
		if err := c.Download(context.Background(), u, &buf); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if a, ok := got["http /pkg/-/pkg-1.0.0.tgz"]; !ok || a != "" {
		t.Errorf("after an https->http redirect, http://example.com received Authorization %q (requested: %v)", a, ok)
	}
	if a := got["https /moved/-/same-1.0.0.tgz"]; a != "Bearer "+token {
		t.Errorf("a redirect within the registry's origin received Authorization %q, want the token", a)
	}
}
