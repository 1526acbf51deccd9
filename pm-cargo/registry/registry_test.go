package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIndexPath(t *testing.T) {
	for name, want := range map[string]string{"a": "1/a", "AB": "2/ab", "abc": "3/a/abc", "Serde": "se/rd/serde", "serde_json": "se/rd/serde_json"} {
		if got := IndexPath(name); got != want {
			t.Errorf("IndexPath(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseIndexFile(t *testing.T) {
	data := []byte(`{"name":"x","vers":"1.0.0","deps":[],"cksum":"aa","features":{},"yanked":false}

{"name":"x","vers":"1.1.0","deps":[],"cksum":"bb","features":{},"yanked":true,"v":2,"features2":{}}
`)
	vs, err := ParseIndexFile("x", data)
	if err != nil || len(vs) != 2 || !vs[1].Yanked || vs[0].Cksum != "aa" {
		t.Fatalf("ParseIndexFile = %+v, %v", vs, err)
	}
	if _, err := ParseIndexFile("x", []byte("{\"name\":\"x\"}\n")); err == nil || !strings.Contains(err.Error(), "x:1") {
		t.Errorf("line without vers: %v", err)
	}
	if _, err := ParseIndexFile("x", []byte("{}\nnot json\n")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestParseCacheFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cache-skilled"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := ParseCacheFile("skilled", data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		s := v.Vers
		if v.Yanked {
			s += " yanked"
		}
		got = append(got, s)
	}
	if strings.Join(got, ",") != "1.0.0,1.1.0,1.2.0 yanked,2.0.0-beta.1" {
		t.Errorf("versions = %v", got)
	}
	for _, bad := range [][]byte{nil, {3, 2}, {9, 2, 0, 0, 0, 'x', 0}, {3, 2, 0, 0, 0, 'e', 0, '1', 0, 'x', 0}} {
		if _, err := ParseCacheFile("bad", bad); err == nil {
			t.Errorf("ParseCacheFile(%q) succeeded", bad)
		}
	}
}

func TestClient(t *testing.T) {
	var auth, agent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, agent = r.Header.Get("Authorization"), r.UserAgent()
		if auth != "secret-token" {
			http.Error(w, "log in", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/index/config.json":
			json.NewEncoder(w).Encode(map[string]any{"dl": "http://x/dl", "api": "http://" + r.Host, "auth-required": true})
		case "/index/3/f/foo":
			w.Write([]byte(`{"name":"foo","vers":"0.1.0","cksum":"cc","yanked":false}` + "\n"))
		case "/api/v1/crates":
			if r.URL.Query().Get("q") != "fo o" || r.URL.Query().Get("per_page") != "5" {
				http.Error(w, "bad query", 400)
				return
			}
			w.Write([]byte(`{"crates":[{"name":"foo","max_version":"0.1.0","description":" Foo things \n"},{"name":"nodesc","max_version":"1.0.0","description":null},{"name":"","max_version":"1"}],"meta":{"total":3}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &Client{Index: srv.URL + "/index/", Token: "secret-token"}
	ctx := context.Background()
	cfg, err := c.Config(ctx)
	if err != nil || !cfg.AuthRequired || cfg.API != srv.URL {
		t.Fatalf("Config = %+v, %v", cfg, err)
	}
	if auth != "secret-token" || !strings.HasPrefix(agent, "symposium-pm-cargo") {
		t.Errorf("Authorization %q, User-Agent %q", auth, agent)
	}
	c.AuthRequired = cfg.AuthRequired
	vs, err := c.Versions(ctx, "foo")
	if err != nil || len(vs) != 1 || vs[0].Vers != "0.1.0" {
		t.Errorf("Versions = %+v, %v", vs, err)
	}
	_, err = c.Versions(ctx, "nope")
	var se *StatusError
	if !errors.As(err, &se) || !se.NotFound() {
		t.Errorf("missing crate: %v", err)
	}
	hits, err := c.Search(ctx, cfg.API, "fo o", 5)
	if err != nil || len(hits) != 2 || hits[0].Description != "Foo things" || hits[1].Description != "" {
		t.Errorf("Search = %+v, %v", hits, err)
	}
	if _, err := c.Search(ctx, "", "x", 5); err == nil {
		t.Error("search without an api succeeded")
	}
	bad := &Client{Index: "http://user:pw@127.0.0.1:1/index/"}
	_, err = bad.Config(ctx)
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("unreachable registry: %v (must not show the password)", err)
	}
}

func FuzzParseIndexFile(f *testing.F) {
	f.Add([]byte(`{"name":"x","vers":"1.0.0","cksum":"aa","yanked":false}` + "\n"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := ParseIndexFile("fuzz", data)
		if err != nil {
			return
		}
		for _, v := range vs {
			if v.Name == "" || v.Vers == "" {
				t.Fatalf("accepted %+v", v)
			}
		}
	})
}

func FuzzParseCacheFile(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "cache-skilled")); err == nil {
		f.Add(data)
	}
	f.Add([]byte{3, 2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseCacheFile("fuzz", data)
	})
}
