package cargopm

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"GET https://user:s3cret@example.com/index/x failed": "GET https://example.com/index/x failed",
		"sparse+https://tok@reg.example/ and http://a:b@c/d": "sparse+https://reg.example/ and http://c/d",
		"no url here":               "no url here",
		"https://example.com/a@b/c": "https://example.com/a@b/c",
		"error: `https://u:p@h`":    "error: `https://h`",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidCrateName(t *testing.T) {
	for name, ok := range map[string]bool{"serde": true, "serde_json": true, "a-b": true, "A1": true, "": false, "../x": false, "a b": false, "é": false} {
		if validCrateName(name) != ok {
			t.Errorf("validCrateName(%q) = %v", name, !ok)
		}
	}
}

func TestProxy(t *testing.T) {
	p := newPM(t, t.TempDir(), map[string]string{"HTTPS_PROXY": "proxy.example:3128", "http_proxy": "http://u:pw@plain.example:80", "NO_PROXY": "internal.example,.corp"})
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
