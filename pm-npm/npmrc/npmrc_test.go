package npmrc

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

type mapEnv map[string]string

func (m mapEnv) Lookup(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func write(t *testing.T, p, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLayers(t *testing.T) {
	home, proj, global := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(global, "etc", "npmrc"), "registry=https://global.example/\n@g:registry=https://g.example\n")
	write(t, filepath.Join(home, ".npmrc"), "; comment\nregistry = https://user.example/\n@u:registry=\"https://u.example/\"\n//u.example/:_authToken=${U_TOKEN}\n")
	write(t, filepath.Join(proj, ".npmrc"), "# project\n@p:registry=https://p.example/npm/\n//p.example/npm/:username=bob\n//p.example/npm/:_password=cGFzcw==\n")
	env := mapEnv{"HOME": home, "PREFIX": global, "U_TOKEN": "tok", "npm_config_@e:registry": "https://e.example/", "NPM_CONFIG_STRICT_SSL": "false"}
	c := Load(proj, env)
	for name, want := range map[string]string{
		"plain": "https://user.example/", "@g/x": "https://g.example/", "@u/x": "https://u.example/",
		"@p/x": "https://p.example/npm/", "@e/x": "https://e.example/", "@none/x": "https://user.example/",
	} {
		if got := c.Registry(name); got != want {
			t.Errorf("Registry(%q) = %q, want %q", name, got, want)
		}
	}
	if got := c.Authorization("https://u.example/@u%2fx"); got != "Bearer tok" {
		t.Errorf("token auth: %q", got)
	}
	if got := c.Authorization("https://p.example/npm/@p/x/-/x-1.0.0.tgz"); got != "Basic Ym9iOnBhc3M=" {
		t.Errorf("basic auth: %q", got)
	}
	if got := c.Authorization("https://p.example/other/x"); got != "" {
		t.Errorf("credentials sent outside their path: %q", got)
	}
	if c.StrictSSL() {
		t.Error("strict-ssl from env ignored")
	}
	if len(c.Files) != 3 || !strings.HasSuffix(c.Files[0], filepath.Join(proj, ".npmrc")) {
		t.Errorf("files %v", c.Files)
	}
}

func TestEnvKey(t *testing.T) {
	for in, want := range map[string]string{"npm_config_registry": "registry", "NPM_CONFIG_STRICT_SSL": "strict-ssl",
		"npm_config_//h/:_authToken": "//h/:_authToken", "npm_config__auth": "_auth"} {
		if got, ok := envKey(in); !ok || got != want {
			t.Errorf("envKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestProxy(t *testing.T) {
	c := Load("", mapEnv{})
	env := mapEnv{"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "internal.example"}
	for target, want := range map[string]string{
		"https://registry.npmjs.org/x": "http://proxy:3128",
		"https://a.internal.example/x": "",
		"http://127.0.0.1:9/x":         "",
		"http://registry.example/x":    "",
	} {
		u, _ := url.Parse(target)
		p, err := c.ProxySettings(env).For(u)
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != want {
			t.Errorf("%s: proxy %q, %v; want %q", target, got, err, want)
		}
	}
}

// TestProxyConfig checks npm's own keys: https-proxy, then proxy (also for
// https), over the environment, and noproxy.
func TestProxyConfig(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".npmrc"), "proxy=http://cfg-proxy:1\nnoproxy=.corp\n")
	c := Load(dir, mapEnv{"HOME": t.TempDir()})
	env := mapEnv{"HTTPS_PROXY": "http://env-https:2"}
	for target, want := range map[string]string{
		"https://registry.npmjs.org/x": "http://env-https:2",
		"http://registry.example/x":    "http://cfg-proxy:1",
		"https://a.corp/x":             "",
	} {
		u, _ := url.Parse(target)
		p, err := c.ProxySettings(env).For(u)
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != want {
			t.Errorf("%s: proxy %q, %v; want %q", target, got, err, want)
		}
	}
	if s := c.ProxySettings(mapEnv{}); s.HTTPS != "http://cfg-proxy:1" {
		t.Errorf("https falls back to proxy: %+v", s)
	}
}

// TestLoadBounded: a project .npmrc that is a FIFO, or a user one over
// pkgfile.MaxManifest, is left out at once and listed in Unreadable with
// an error naming it; the other layers still apply. With os.ReadFile the
// FIFO waited for a writer forever.
func TestLoadBounded(t *testing.T) {
	home, proj, global := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(global, "etc", "npmrc"), "registry=https://global.example/\n")
	if err := syscall.Mkfifo(filepath.Join(proj, ".npmrc"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(home, ".npmrc"), pkgfile.MaxManifest+1); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Config, 1)
	go func() { done <- Load(proj, mapEnv{"HOME": home, "PREFIX": global}) }()
	var c *Config
	select {
	case c = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Load still blocked on the FIFO .npmrc after 5 s")
	}
	if got := c.Registry("x"); got != "https://global.example/" {
		t.Errorf("Registry = %q, want the global layer's", got)
	}
	want := []struct {
		file string
		err  error
	}{{filepath.Join(home, ".npmrc"), pkgfile.ErrTooLarge}, {filepath.Join(proj, ".npmrc"), pkgfile.ErrNotRegular}}
	if len(c.Unreadable) != len(want) {
		t.Fatalf("Unreadable = %v, want %d errors", c.Unreadable, len(want))
	}
	for i, w := range want {
		if err := c.Unreadable[i]; !errors.Is(err, w.err) || !strings.Contains(err.Error(), w.file) {
			t.Errorf("Unreadable[%d] = %v, want %v naming %s", i, err, w.err, w.file)
		}
	}
}

// TestConsulted: Consulted names every file Load looked for, absent ones
// included, and Files only those it read.
func TestConsulted(t *testing.T) {
	home, proj, global := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".npmrc"), "registry=https://user.example/\n")
	c := Load(proj, mapEnv{"HOME": home, "PREFIX": global})
	want := []string{filepath.Join(global, "etc", "npmrc"), filepath.Join(home, ".npmrc"), filepath.Join(proj, ".npmrc")}
	if strings.Join(c.Consulted, "|") != strings.Join(want, "|") {
		t.Errorf("consulted %q, want %q", c.Consulted, want)
	}
	if len(c.Files) != 1 || c.Files[0] != want[1] {
		t.Errorf("files %q, want only %s", c.Files, want[1])
	}
}

// TestUserconfigDevNull: npm_config_userconfig=/dev/null (and the global
// file likewise) turns the user's file off, as npm reads it: an empty
// file, not one left out with a warning.
func TestUserconfigDevNull(t *testing.T) {
	c := Load(t.TempDir(), mapEnv{"HOME": t.TempDir(), "npm_config_userconfig": os.DevNull, "npm_config_globalconfig": os.DevNull})
	if len(c.Unreadable) != 0 {
		t.Errorf("Unreadable = %v, want none", c.Unreadable)
	}
}
