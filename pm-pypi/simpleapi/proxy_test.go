package simpleapi

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadConfigProxy: pip's own proxy setting, in pip 23's order: PIP_PROXY,
// else proxy = in an [install] section of any configuration file, else in
// a [global] one, the later file winning within a section; an empty value
// sets nothing. (Checked against pip 23.2: an [install] proxy in a file
// under XDG_CONFIG_DIRS wins over a [global] one in PIP_CONFIG_FILE.)
func TestLoadConfigProxy(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) string {
		path := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	xdgInstall := write("xdg-install/pip/pip.conf", "[install]\nproxy = http://install.proxy:3128\n")
	xdgGlobal := write("xdg-global/pip/pip.conf", "[global]\nproxy = http://site.proxy:3128\n")
	global := write("global.conf", "[global]\nindex-url = https://idx.example/simple/\nproxy = http://user:pw@global.proxy:3128\n")
	empty := write("empty.conf", "[install]\nproxy =\n")
	for name, tc := range map[string]struct {
		env         map[string]string
		proxy, from string
	}{
		"none":                          {map[string]string{"HOME": dir}, "", ""},
		"pip.conf [global]":             {map[string]string{"PIP_CONFIG_FILE": global}, "http://user:pw@global.proxy:3128", global},
		"later file, same section":      {map[string]string{"XDG_CONFIG_DIRS": filepath.Dir(filepath.Dir(xdgGlobal)), "PIP_CONFIG_FILE": global}, "http://user:pw@global.proxy:3128", global},
		"[install] over a later global": {map[string]string{"XDG_CONFIG_DIRS": filepath.Dir(filepath.Dir(xdgInstall)), "PIP_CONFIG_FILE": global}, "http://install.proxy:3128", xdgInstall},
		"empty value sets nothing":      {map[string]string{"XDG_CONFIG_DIRS": filepath.Dir(filepath.Dir(xdgGlobal)), "PIP_CONFIG_FILE": empty}, "http://site.proxy:3128", xdgGlobal},
		"PIP_PROXY over pip.conf":       {map[string]string{"PIP_CONFIG_FILE": global, "PIP_PROXY": "http://env.proxy:8080"}, "http://env.proxy:8080", "PIP_PROXY"},
		"empty PIP_PROXY":               {map[string]string{"PIP_CONFIG_FILE": global, "PIP_PROXY": ""}, "http://user:pw@global.proxy:3128", global},
		"devnull":                       {map[string]string{"XDG_CONFIG_DIRS": filepath.Dir(filepath.Dir(xdgGlobal)), "PIP_CONFIG_FILE": os.DevNull}, "", ""},
	} {
		cfg := LoadConfig(func(k string) string { return tc.env[k] })
		if cfg.Proxy != tc.proxy || cfg.ProxySource != tc.from {
			t.Errorf("%s: proxy %q from %q, want %q from %q", name, cfg.Proxy, cfg.ProxySource, tc.proxy, tc.from)
		}
	}
}

// TestProxies: the proxy each request goes through, as pip 23.2 chooses it
// (each case checked with pip download against recording proxies): the
// environment as urllib reads it (lower case first, all_proxy for a scheme
// without its own, no_proxy), then pip's own proxy over all of it, no_proxy
// included.
func TestProxies(t *testing.T) {
	const (
		a = "http://a.proxy:3128"
		b = "http://b.proxy:3128"
		c = "http://c.proxy:3128"
	)
	for name, tc := range map[string]struct {
		env         map[string]string
		pip         string
		http, https string // the proxy for http://pypi.example/ and https://pypi.example/
	}{
		"nothing":                       {nil, "", "", ""},
		"HTTP_PROXY, HTTPS_PROXY":       {map[string]string{"HTTP_PROXY": a, "HTTPS_PROXY": b}, "", a, b},
		"lower case first":              {map[string]string{"http_proxy": a, "HTTP_PROXY": b}, "", a, ""},
		"ALL_PROXY":                     {map[string]string{"ALL_PROXY": a}, "", a, a},
		"all_proxy":                     {map[string]string{"all_proxy": a}, "", a, a},
		"all_proxy first":               {map[string]string{"all_proxy": a, "ALL_PROXY": b}, "", a, a},
		"ALL_PROXY for the scheme left": {map[string]string{"HTTP_PROXY": b, "ALL_PROXY": a}, "", b, a},
		"NO_PROXY":                      {map[string]string{"ALL_PROXY": a, "NO_PROXY": "pypi.example"}, "", "", ""},
		"pip's proxy over the env":      {map[string]string{"HTTP_PROXY": a, "HTTPS_PROXY": b, "ALL_PROXY": c}, c, c, c},
		"pip's proxy ignores NO_PROXY":  {map[string]string{"NO_PROXY": "pypi.example"}, a, a, a},
		"pip's proxy alone":             {nil, b, b, b},
	} {
		s := Proxies(Config{Proxy: tc.pip}, func(k string) string { return tc.env[k] })
		for _, target := range []struct{ url, want string }{{"http://pypi.example/simple/", tc.http}, {"https://pypi.example/simple/", tc.https}} {
			u, _ := url.Parse(target.url)
			p, err := s.For(u)
			got := ""
			if p != nil {
				got = p.String()
			}
			if err != nil || got != target.want {
				t.Errorf("%s: %s goes through %q (%v), want %q", name, target.url, got, err, target.want)
			}
		}
	}
}
