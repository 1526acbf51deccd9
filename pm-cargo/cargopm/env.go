package cargopm

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargoconfig"
)

// cargoHome is CARGO_HOME from the session environment, else $HOME/.cargo.
func (p *PM) cargoHome() string {
	env := p.session().Env
	if h := env.Get("CARGO_HOME"); h != "" {
		return h
	}
	home := env.Get("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cargo")
}

// cargoBinary is the cargo the user chose: SYMPOSIUM_CARGO, else $CARGO,
// else cargo on the session's PATH.
func (p *PM) cargoBinary() (string, error) {
	env := p.session().Env
	for _, k := range []string{"SYMPOSIUM_CARGO", "CARGO"} {
		if v := env.Get(k); v != "" {
			return v, nil
		}
	}
	if path := env.Get("PATH"); path != "" {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" {
				continue
			}
			c := filepath.Join(dir, "cargo")
			if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return c, nil
			}
		}
	}
	return exec.LookPath("cargo")
}

// cargoConfig loads cargo's configuration as seen from the workspace.
func (p *PM) cargoConfig() (*cargoconfig.Config, error) {
	return cargoconfig.Load(p.session().Workspace, p.cargoHome())
}

// redact removes credentials embedded in URLs ("scheme://user:pass@host")
// from text such as cargo's stderr.
func redact(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/ \t\n\"'`")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			s = s[at+1:]
		}
	}
}

// validCrateName reports whether name can be a crate name: ASCII letters,
// digits, '-' and '_', at most 64 characters.
func validCrateName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// envVarName turns a registry name into its CARGO_REGISTRIES_<NAME>_TOKEN
// spelling.
func envVarName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// proxy chooses the HTTP proxy for a registry request from the session
// environment (the host's initialize env first): HTTPS_PROXY or HTTP_PROXY
// by scheme (upper or lower case), unless NO_PROXY names the host.
func (p *PM) proxy(req *http.Request) (*url.URL, error) {
	env := p.session().Env
	get := func(k string) string {
		if v := env.Get(k); v != "" {
			return v
		}
		return env.Get(strings.ToLower(k))
	}
	if noProxy(get("NO_PROXY"), req.URL.Hostname()) {
		return nil, nil
	}
	raw := get("HTTP_PROXY")
	if req.URL.Scheme == "https" {
		raw = get("HTTPS_PROXY")
	}
	if raw == "" {
		return nil, nil
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid proxy setting %q: %w", redact(raw), err)
	}
	return u, nil
}

// noProxy reports whether host is excluded by a NO_PROXY list: "*", exact
// names, and domain suffixes (".example.com" or "example.com" both cover
// sub.example.com). Loopback hosts are never proxied.
func noProxy(list, host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" {
		return true
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if h, _, err := net.SplitHostPort(e); err == nil {
			e = h
		}
		switch {
		case e == "":
		case e == "*":
			return true
		case host == strings.TrimPrefix(e, "."):
			return true
		case strings.HasSuffix(host, "."+strings.TrimPrefix(e, ".")):
			return true
		}
	}
	return false
}
