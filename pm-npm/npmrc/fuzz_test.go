package npmrc

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad reads arbitrary bytes as a project .npmrc: loading never fails
// or panics, every registry answered is a URL ending in "/", and asking for
// credentials and proxies of arbitrary URLs is safe.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("registry=https://r.example/\n//r.example/:_authToken=${TOKEN}\n"), "@s/x", "https://r.example/@s%2fx")
	f.Add([]byte("@s:registry = \"https://s.example/npm\"\n//s.example/npm/:username=u\n//s.example/npm/:_password=cGFzcw==\n"), "@s/x", "https://s.example/npm/x/-/x-1.0.0.tgz")
	f.Add([]byte("\uFEFF; comment\n[section]\nkey[] = 'v'\nproxy=http://u:p@proxy:3128\nnoproxy=.example\n//h/:_auth=${A?}\\${B}\n"), "x", "http://h/x")
	f.Add([]byte("strict-ssl=false\ncafile=/nonexistent\nhttps-proxy=::\nregistry=\n=\n${\n"), "", "::")
	f.Fuzz(func(t *testing.T, data []byte, name, rawURL string) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, ".npmrc"), string(data))
		c := Load(dir, mapEnv{"HOME": t.TempDir(), "TOKEN": "tok", "A": "a"})
		if r := c.Registry(name); !strings.HasSuffix(r, "/") {
			t.Errorf("registry %q for %q does not end in /", r, name)
		}
		_ = c.Authorization(rawURL)
		_ = c.Authorization(c.Registry(name) + name)
		if u, err := url.Parse(rawURL); err == nil {
			_, _ = c.ProxySettings(mapEnv{}).For(u)
		}
		_, _ = c.StrictSSL(), c.CAFile()
	})
}
