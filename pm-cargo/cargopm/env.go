package cargopm

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargoconfig"
	"github.com/symposium-dev/symposium-pm/sdk/netproxy"
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
// by scheme (upper or lower case), unless NO_PROXY names the host; cargo's
// own http.proxy (CARGO_HTTP_PROXY, else the configuration files) wins for
// both schemes, as in cargo.
func (p *PM) proxy(req *http.Request) (*url.URL, error) {
	env := p.session().Env
	s := netproxy.FromEnv(env.Get)
	cargo := env.Get("CARGO_HTTP_PROXY")
	if cargo == "" {
		if cfg, err := p.cargoConfig(); err == nil {
			cargo = cfg.HTTPProxy
		}
	}
	return s.Override(netproxy.Settings{HTTP: cargo, HTTPS: cargo}).For(req.URL)
}
