package cargopm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const searchToken = "cio_SECRET_TOKEN_123"

// seenRequests records "server path Authorization" for each request the
// test servers receive.
type seenRequests struct {
	mu  sync.Mutex
	all []string
}

func (s *seenRequests) add(server string, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, server+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
}

func (s *seenRequests) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

// mirrorRegistry serves a sparse index at /index/ whose config.json names
// a web API on a second server. config.json says authRequired; when locked,
// every answer of the index server but a 401 needs the token (sent as
// cargo sends it: the whole Authorization header), and so does the API
// when authRequired. It returns the workspace, whose .cargo/config.toml
// replaces crates-io with that index ("mirror").
func mirrorRegistry(t *testing.T, seen *seenRequests, authRequired, locked bool) string {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add("api", r)
		if authRequired && r.Header.Get("Authorization") != searchToken {
			http.Error(w, "log in", http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"crates":[{"name":"found","max_version":"1.0.0","description":"d"}],"meta":{"total":1}}`))
	}))
	t.Cleanup(api.Close)
	index := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add("index", r)
		if locked && r.Header.Get("Authorization") != searchToken {
			w.Header().Set("WWW-Authenticate", `Cargo login_url="https://registry.example/me"`)
			http.Error(w, "log in", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/index/config.json" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"dl": api.URL + "/dl", "api": api.URL, "auth-required": authRequired})
	}))
	t.Cleanup(index.Close)
	ws := t.TempDir()
	cargotest.WriteFiles(t, ws, map[string]string{".cargo/config.toml": "[source.crates-io]\nreplace-with = \"mirror\"\n\n[source.mirror]\nregistry = \"sparse+" + index.URL + "/index/\"\n"})
	return ws
}

// TestSearchSendsTokenOnlyWhenAsked: search hands the user's token to a
// registry as cargo does (RFC 3139; cargo's HttpRegistry::load retries
// config.json with the token only after a 401, and ops::registry gives the
// web API handle a token only when config.json says auth-required): never
// to a public registry nor to the API host it names, and to an
// auth-required one's API, after a 401 on config.json when the index
// itself is locked.
func TestSearchSendsTokenOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		authRequired, locked bool
		want                 []string
	}{
		{"public registry", false, false, []string{"index /index/config.json ", "api /api/v1/crates "}},
		{"auth-required, public config.json", true, false, []string{"index /index/config.json ", "api /api/v1/crates " + searchToken}},
		{"auth-required, config.json answers 401", true, true, []string{
			"index /index/config.json ", "index /index/config.json " + searchToken, "api /api/v1/crates " + searchToken,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen seenRequests
			ws := mirrorRegistry(t, &seen, tc.authRequired, tc.locked)
			p := newPM(t, ws, map[string]string{"HOME": t.TempDir(), "CARGO_HOME": t.TempDir(), "CARGO_REGISTRIES_MIRROR_TOKEN": searchToken})
			hits, err := p.Search(context.Background(), "found")
			if err != nil || len(hits) != 1 || hits[0].ID.Name != "found" {
				t.Fatalf("search: %v %v", hits, err)
			}
			if got := seen.get(); !slices.Equal(got, tc.want) {
				t.Errorf("requests (server, path, Authorization):\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestSearchLockedRegistryWithoutToken: a registry whose config.json
// answers 401 when the user has no token for it fails search with -32012,
// status 401, saying (as cargo does) how to configure one; one that
// rejects the token says so, without showing it.
func TestSearchLockedRegistryWithoutToken(t *testing.T) {
	var seen seenRequests
	ws := mirrorRegistry(t, &seen, true, true)
	for _, tc := range []struct {
		token, want string
	}{
		{"", "run `cargo login --registry mirror` or set CARGO_REGISTRIES_MIRROR_TOKEN"},
		{"wrong-s3cr3t", "the registry rejected the token configured for `mirror`"},
	} {
		env := map[string]string{"HOME": t.TempDir(), "CARGO_HOME": t.TempDir()}
		if tc.token != "" {
			env["CARGO_REGISTRIES_MIRROR_TOKEN"] = tc.token
		}
		_, err := newPM(t, ws, env).Search(context.Background(), "found")
		wantCode(t, "search of a locked registry", err, protocol.CodeRegistry)
		var data protocol.RegistryData
		if pe, ok := err.(*protocol.Error); !ok || pe.DecodeData(&data) != nil || data.Status != http.StatusUnauthorized || !strings.HasSuffix(data.URL, "/index/config.json") {
			t.Errorf("token %q: %v (data %+v), want status 401 naming config.json", tc.token, err, data)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.token != "" && strings.Contains(err.Error(), tc.token)) {
			t.Errorf("token %q: %v, want it to say %q and not show the token", tc.token, err, tc.want)
		}
	}
}

// TestHTTPClientRedirectPolicy: the PM's own HTTP client (every registry
// request goes through it) keeps the token on a redirect within its origin
// and drops it on a redirect to another port of the same host, where
// net/http's default policy would copy it (it compares host names only),
// as libcurl drops it for cargo.
func TestHTTPClientRedirectPolicy(t *testing.T) {
	var seen seenRequests
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.add("other", r) }))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add("origin", r)
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/there", http.StatusFound)
		}
	}))
	defer origin.Close()
	p := newPM(t, t.TempDir(), map[string]string{"HOME": t.TempDir(), "CARGO_HOME": t.TempDir()})
	for _, path := range []string{"/same", "/away"} {
		req, _ := http.NewRequest("GET", origin.URL+path, nil)
		req.Header.Set("Authorization", searchToken)
		resp, err := p.httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []string{"origin /same " + searchToken, "origin /here " + searchToken, "origin /away " + searchToken, "other /there "}
	if got := seen.get(); !slices.Equal(got, want) {
		t.Errorf("requests (server, path, Authorization):\n%q\nwant\n%q", got, want)
	}
}
