package netproxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFor(t *testing.T) {
	cargo := FromEnv(env(map[string]string{"HTTPS_PROXY": "proxy.example:3128", "http_proxy": "http://u:pw@plain.example:80", "NO_PROXY": "internal.example,.corp"}))
	npm := FromEnv(env(map[string]string{"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "internal.example"}))
	for _, tt := range []struct {
		name   string
		s      Settings
		target string
		want   string
	}{
		{"https from env without scheme", cargo, "https://index.crates.io/config.json", "http://proxy.example:3128"},
		{"http from lower-case env", cargo, "http://index.example/x", "http://u:pw@plain.example:80"},
		{"no_proxy exact", cargo, "https://internal.example/x", ""},
		{"no_proxy subdomain of name", cargo, "https://a.internal.example/x", ""},
		{"no_proxy dot suffix", cargo, "https://a.b.corp/x", ""},
		{"loopback", cargo, "http://127.0.0.1:8080/x", ""},
		{"localhost", cargo, "https://localhost:8443/x", ""},
		{"ipv6 loopback", cargo, "http://[::1]:80/x", ""},
		{"npm https", npm, "https://registry.npmjs.org/x", "http://proxy:3128"},
		{"npm no_proxy", npm, "https://a.internal.example/x", ""},
		{"npm http without http proxy", npm, "http://registry.example/x", ""},
		{"star", Settings{HTTPS: "http://p:1", NoProxy: "*"}, "https://h/x", ""},
		{"cidr", Settings{HTTPS: "http://p:1", NoProxy: "10.0.0.0/8"}, "https://10.1.2.3/x", ""},
		{"port-specific", Settings{HTTPS: "http://p:1", NoProxy: "h.example:8443"}, "https://h.example/x", "http://p:1"},
		{"socks", Settings{HTTPS: "socks5://p:1080"}, "https://h/x", "socks5://p:1080"},
		{"none", Settings{}, "https://h/x", ""},
	} {
		u, _ := url.Parse(tt.target)
		p, err := tt.s.For(u)
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: For(%s) = %q, %v; want %q", tt.name, tt.target, got, err, tt.want)
		}
		req, _ := http.NewRequest("GET", tt.target, nil)
		p, err = tt.s.Func()(req)
		got = ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: Func()(%s) = %q, %v; want %q", tt.name, tt.target, got, err, tt.want)
		}
	}
}

func TestOverride(t *testing.T) {
	base := Settings{HTTP: "http://env:1", HTTPS: "http://env:2", NoProxy: "a"}
	got := base.Override(Settings{HTTPS: "http://cfg:3"})
	want := Settings{HTTP: "http://env:1", HTTPS: "http://cfg:3", NoProxy: "a"}
	if got != want {
		t.Errorf("Override = %+v, want %+v", got, want)
	}
	if got := base.Override(Settings{}); got != base {
		t.Errorf("empty Override changed %+v to %+v", base, got)
	}
}

func TestFromEnvPrefersUpperCase(t *testing.T) {
	s := FromEnv(env(map[string]string{"HTTP_PROXY": "http://upper:1", "http_proxy": "http://lower:1", "no_proxy": "x"}))
	if s.HTTP != "http://upper:1" || s.NoProxy != "x" || s.HTTPS != "" {
		t.Errorf("FromEnv = %+v", s)
	}
	if FromEnv(nil) != (Settings{}) {
		t.Error("FromEnv(nil) not empty")
	}
}

func TestInvalidProxyHidesCredentials(t *testing.T) {
	s := Settings{HTTPS: "http://user:s3cr3t@bad host:1"}
	u, _ := url.Parse("https://h/x")
	_, err := s.For(u)
	if err == nil {
		t.Fatal("no error for a malformed proxy")
	}
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "invalid proxy setting") {
		t.Errorf("error %q", err)
	}
	req, _ := http.NewRequest("GET", "https://h/x", nil)
	if _, err := s.Func()(req); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("Func error %v", err)
	}
}

func FuzzFor(f *testing.F) {
	f.Add("http://u:secret@p:1", "h.example,.corp,10.0.0.0/8", "https://a.corp/x")
	f.Add("p:3128", "*", "http://h/")
	f.Add("%zz", "", "https://[::1]/")
	f.Fuzz(func(t *testing.T, proxy, noProxy, target string) {
		u, err := url.Parse(target)
		if err != nil {
			return
		}
		s := Settings{HTTP: proxy, HTTPS: proxy, NoProxy: noProxy}
		_, err = s.For(u)
		if err != nil && strings.Contains(proxy, "://") {
			if _, rest, _ := strings.Cut(proxy, "://"); strings.Contains(rest, ":secret@") && strings.Contains(err.Error(), ":secret@") {
				t.Fatalf("error shows the password: %v", err)
			}
		}
	})
}

// TestFromToolEnv: libcurl's and urllib's reading, lower case first and
// ALL_PROXY for a scheme without a proxy of its own.
func TestFromToolEnv(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want Settings
	}{
		{"all for both", map[string]string{"ALL_PROXY": "http://all:1"}, Settings{HTTP: "http://all:1", HTTPS: "http://all:1"}},
		{"lower-case all first", map[string]string{"ALL_PROXY": "http://up:1", "all_proxy": "http://low:1"}, Settings{HTTP: "http://low:1", HTTPS: "http://low:1"}},
		{"scheme's own wins", map[string]string{"all_proxy": "http://all:1", "HTTPS_PROXY": "http://s:1"}, Settings{HTTP: "http://all:1", HTTPS: "http://s:1"}},
		{"lower case first", map[string]string{"HTTPS_PROXY": "http://up:1", "https_proxy": "http://low:1", "NO_PROXY": "a", "no_proxy": "b"}, Settings{HTTPS: "http://low:1", NoProxy: "b"}},
		{"upper case read", map[string]string{"HTTP_PROXY": "http://up:1"}, Settings{HTTP: "http://up:1"}},
		{"none", nil, Settings{}},
	} {
		if got := FromToolEnv(env(tt.env)); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := FromToolEnv(nil); got != (Settings{}) {
		t.Errorf("nil getenv: %+v", got)
	}
}
