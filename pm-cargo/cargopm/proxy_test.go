package cargopm

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
)

// proxyPM returns a PM on ws whose session environment is env, with
// HOME and CARGO_HOME fresh unless env sets them, and whose system git
// configuration is system ("" for none): no file of the machine's is read.
func proxyPM(t *testing.T, ws string, env map[string]string, system string) *PM {
	t.Helper()
	if env["HOME"] == "" {
		env["HOME"] = t.TempDir()
	}
	if env["CARGO_HOME"] == "" {
		env["CARGO_HOME"] = t.TempDir()
	}
	p := newPM(t, ws, env)
	p.gitSystemConfig = system
	return p
}

// proxyFor is p's proxy for target, "" for none, "error: ..." for an error.
func proxyFor(p *PM, target string) string {
	req, _ := http.NewRequest("GET", target, nil)
	u, err := p.proxy(req)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case u == nil:
		return ""
	}
	return u.String()
}

// TestProxySources: the proxy cargo would use (cargo's
// util::network::proxy::http_proxy: cargo's http.proxy, else git's
// http.proxy through libgit2's git_config_open_default, else libcurl's
// environment, which reads each variable in lower case first and
// all_proxy/ALL_PROXY for a scheme with no proxy of its own), with the
// environment's no_proxy applying to every source, as in libcurl.
func TestProxySources(t *testing.T) {
	const target = "https://index.crates.io/config.json"
	gitHome := t.TempDir()
	cargotest.WriteFiles(t, gitHome, map[string]string{".gitconfig": "[user]\n\tname = x\n[http]\n\tproxy = http://git.example:3128\n"})
	xdg := t.TempDir()
	cargotest.WriteFiles(t, xdg, map[string]string{"git/config": "[http]\n\tproxy = xdg.example:8080\n"})
	sysDir := t.TempDir()
	cargotest.WriteFiles(t, sysDir, map[string]string{"gitconfig": "[http]\n\tproxy = http://system.example:1\n", "broken": "[http\n\tproxy = http://broken.example:1\n"})
	system, broken := filepath.Join(sysDir, "gitconfig"), filepath.Join(sysDir, "broken")
	emptyHome := t.TempDir()
	cargotest.WriteFiles(t, emptyHome, map[string]string{".gitconfig": "[http]\n\tproxy = \"\"\n"})
	cargoWS := t.TempDir()
	cargotest.WriteFiles(t, cargoWS, map[string]string{".cargo/config.toml": "[http]\nproxy = \"cfg.example:8080\"\n"})

	for _, tc := range []struct {
		name   string
		ws     string
		env    map[string]string
		system string
		target string
		want   string
	}{
		{"git http.proxy in ~/.gitconfig", "", map[string]string{"HOME": gitHome}, "", target, "http://git.example:3128"},
		{"git http.proxy for http too", "", map[string]string{"HOME": gitHome}, "", "http://registry.example/x", "http://git.example:3128"},
		{"git http.proxy in XDG_CONFIG_HOME", "", map[string]string{"XDG_CONFIG_HOME": xdg}, "", target, "http://xdg.example:8080"},
		{"git http.proxy in /etc/gitconfig", "", map[string]string{}, system, target, "http://system.example:1"},
		{"~/.gitconfig over /etc/gitconfig", "", map[string]string{"HOME": gitHome}, system, target, "http://git.example:3128"},
		{"git's over the environment", "", map[string]string{"HOME": gitHome, "https_proxy": "http://env.example:1", "ALL_PROXY": "http://all.example:1"}, "", target, "http://git.example:3128"},
		{"cargo's over git's", cargoWS, map[string]string{"HOME": gitHome}, "", target, "http://cfg.example:8080"},
		{"CARGO_HTTP_PROXY over git's", "", map[string]string{"HOME": gitHome, "CARGO_HTTP_PROXY": "http://var.example:1"}, "", target, "http://var.example:1"},
		{"no_proxy over git's", "", map[string]string{"HOME": gitHome, "no_proxy": "crates.io"}, "", target, ""},
		{"git's empty http.proxy turns the environment's off", "", map[string]string{"HOME": emptyHome, "HTTPS_PROXY": "http://env.example:1"}, "", target, ""},
		{"a malformed git configuration is not used", "", map[string]string{"HTTPS_PROXY": "http://env.example:1"}, broken, target, "http://env.example:1"},
		{"ALL_PROXY", "", map[string]string{"ALL_PROXY": "http://all.example:1"}, "", target, "http://all.example:1"},
		{"all_proxy before ALL_PROXY", "", map[string]string{"ALL_PROXY": "http://upper.example:1", "all_proxy": "http://lower.example:1"}, "", target, "http://lower.example:1"},
		{"https_proxy over all_proxy", "", map[string]string{"all_proxy": "http://all.example:1", "HTTPS_PROXY": "http://s.example:1"}, "", target, "http://s.example:1"},
		{"https_proxy before HTTPS_PROXY", "", map[string]string{"HTTPS_PROXY": "http://upper.example:1", "https_proxy": "http://lower.example:1"}, "", target, "http://lower.example:1"},
		{"HTTPS_PROXY alone", "", map[string]string{"HTTPS_PROXY": "http://proxy.corp.example:3128"}, "", target, "http://proxy.corp.example:3128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := tc.ws
			if ws == "" {
				ws = t.TempDir()
			}
			if got := proxyFor(proxyPM(t, ws, tc.env, tc.system), tc.target); got != tc.want {
				t.Errorf("proxy for %s = %q, want %q", tc.target, got, tc.want)
			}
		})
	}
}

// TestProxyGitXDGDefault: without XDG_CONFIG_HOME, git's XDG file is
// ~/.config/git/config.
func TestProxyGitXDGDefault(t *testing.T) {
	home := t.TempDir()
	cargotest.WriteFiles(t, home, map[string]string{".config/git/config": "[http]\n\tproxy = http://xdg-default.example:1\n"})
	if got := proxyFor(proxyPM(t, t.TempDir(), map[string]string{"HOME": home}, ""), "https://index.crates.io/config.json"); got != "http://xdg-default.example:1" {
		t.Errorf("proxy = %q, want git's http.proxy from ~/.config/git/config", got)
	}
}

// TestSearchThroughProxy: search reaches a registry only a forward proxy
// can reach (registry.invalid does not resolve) through the proxy named by
// git's http.proxy or by ALL_PROXY, as cargo would; the proxy receives
// absolute-form requests and serves the sparse index and the web API.
func TestSearchThroughProxy(t *testing.T) {
	var seen seenRequests
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add("proxy", r)
		if r.URL.Host != "registry.invalid" || !strings.HasPrefix(r.RequestURI, "http://registry.invalid/") {
			http.Error(w, "not a proxy request for registry.invalid", http.StatusBadGateway)
			return
		}
		switch r.URL.Path {
		case "/index/config.json":
			json.NewEncoder(w).Encode(map[string]any{"dl": "http://registry.invalid/api/v1/crates", "api": "http://registry.invalid"})
		case "/api/v1/crates":
			w.Write([]byte(`{"crates":[{"name":"proxied","max_version":"1.2.3","description":"via the proxy"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer proxy.Close()
	// A closed port: a proxy taken from the wrong source fails the search.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()

	ws := t.TempDir()
	cargotest.WriteFiles(t, ws, map[string]string{".cargo/config.toml": "[source.crates-io]\nreplace-with = \"mirror\"\n\n[source.mirror]\nregistry = \"sparse+http://registry.invalid/index/\"\n"})
	gitHome := t.TempDir()
	cargotest.WriteFiles(t, gitHome, map[string]string{".gitconfig": "[http]\n\tproxy = " + proxy.URL + "\n"})
	for name, env := range map[string]map[string]string{
		"git http.proxy": {"HOME": gitHome, "http_proxy": dead, "ALL_PROXY": dead},
		"ALL_PROXY":      {"ALL_PROXY": proxy.URL},
	} {
		t.Run(name, func(t *testing.T) {
			seen = seenRequests{}
			hits, err := proxyPM(t, ws, env, "").Search(context.Background(), "proxied")
			if err != nil || len(hits) != 1 || hits[0].ID.Name != "proxied" || hits[0].ID.Version != "1.2.3" {
				t.Fatalf("search: %v, %v", hits, err)
			}
			if got := seen.get(); len(got) != 2 || !strings.HasPrefix(got[0], "proxy /index/config.json") || !strings.HasPrefix(got[1], "proxy /api/v1/crates") {
				t.Errorf("the proxy saw %q, want config.json then the search", got)
			}
		})
	}
}
