package cargopm

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestValidCrateName(t *testing.T) {
	for name, ok := range map[string]bool{"serde": true, "serde_json": true, "a-b": true, "A1": true, "": false, "../x": false, "a b": false, "é": false} {
		if validCrateName(name) != ok {
			t.Errorf("validCrateName(%q) = %v", name, !ok)
		}
	}
}

func TestProxy(t *testing.T) {
	p := proxyPM(t, t.TempDir(), map[string]string{"HTTPS_PROXY": "proxy.example:3128", "http_proxy": "http://u:pw@plain.example:80", "NO_PROXY": "internal.example,.corp"}, "")
	for target, want := range map[string]string{
		"https://index.crates.io/config.json": "http://proxy.example:3128",
		"http://index.example/x":              "http://u:pw@plain.example:80",
		"https://internal.example/x":          "",
		"https://a.b.corp/x":                  "",
		"http://127.0.0.1:8080/x":             "",
	} {
		req, _ := http.NewRequest("GET", target, nil)
		u, err := p.proxy(req)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != want {
			t.Errorf("proxy(%s) = %q, %v; want %q", target, got, err, want)
		}
	}
}

// TestCargoHTTPProxy checks that cargo's http.proxy (CARGO_HTTP_PROXY, else
// the configuration files) is used for both schemes, over the environment's
// HTTPS_PROXY, while NO_PROXY still applies.
func TestCargoHTTPProxy(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".cargo"), 0o755)
	os.WriteFile(filepath.Join(ws, ".cargo", "config.toml"), []byte("[http]\nproxy = \"cfg.example:8080\"\n"), 0o644)
	env := map[string]string{"CARGO_HOME": t.TempDir(), "HTTPS_PROXY": "http://env.example:3128", "NO_PROXY": "internal.example"}
	fromFile := newPM(t, ws, env)
	env["CARGO_HTTP_PROXY"] = "http://var.example:1"
	fromVar := newPM(t, ws, env)
	for _, tt := range []struct {
		p            *PM
		target, want string
	}{
		{fromFile, "https://index.crates.io/config.json", "http://cfg.example:8080"},
		{fromFile, "http://index.example/x", "http://cfg.example:8080"},
		{fromFile, "https://internal.example/x", ""},
		{fromVar, "https://index.crates.io/config.json", "http://var.example:1"},
	} {
		req, _ := http.NewRequest("GET", tt.target, nil)
		u, err := tt.p.proxy(req)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("proxy(%s) = %q, %v; want %q", tt.target, got, err, tt.want)
		}
	}
}

func TestRegistryToken(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "credentials.toml"), []byte("[registry]\ntoken = \"cio\"\n\n[registries.corp]\ntoken = \"corp-file\"\n"), 0o600)
	p := newPM(t, t.TempDir(), map[string]string{"CARGO_HOME": home, "CARGO_REGISTRIES_MY_REG_TOKEN": "from-env"})
	for name, want := range map[string]string{"crates-io": "cio", "corp": "corp-file", "my-reg": "from-env", "other": ""} {
		if got := p.registryToken(name); got != want {
			t.Errorf("registryToken(%q) = %q, want %q", name, got, want)
		}
	}
}
