package cargopm

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargoconfig"
	"github.com/symposium-dev/symposium-pm/sdk/gitconfig"
	"github.com/symposium-dev/symposium-pm/sdk/netproxy"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
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

// gitSystemConfig is git's system-wide configuration file, as libgit2
// finds it on Unix.
const gitSystemConfig = "/etc/gitconfig"

// proxy chooses the HTTP proxy for a registry request as cargo's libcurl
// handle would, from the session environment (the host's initialize env
// first): cargo's own http.proxy (CARGO_HTTP_PROXY, else the configuration
// files) for both schemes, else git's http.proxy (gitHTTPProxy), else the
// environment as libcurl reads it (netproxy.FromToolEnv: https_proxy or
// http_proxy by scheme, lower case first, then all_proxy/ALL_PROXY); the
// environment's no_proxy/NO_PROXY applies to all three, as in libcurl. A
// git http.proxy set to "" means no proxy at all: cargo hands it to libcurl
// as CURLOPT_PROXY, and an empty one turns the environment's off.
func (p *PM) proxy(req *http.Request) (*url.URL, error) {
	env := p.session().Env
	s := netproxy.FromToolEnv(env.Get)
	explicit := env.Get("CARGO_HTTP_PROXY")
	if explicit == "" {
		if cfg, err := p.cargoConfig(); err == nil {
			explicit = cfg.HTTPProxy
		}
	}
	if explicit == "" {
		git, found := p.gitHTTPProxy()
		if found && git == "" {
			return nil, nil
		}
		explicit = git
	}
	return s.Override(netproxy.Settings{HTTP: explicit, HTTPS: explicit}).For(req.URL)
}

// gitHTTPProxy returns http.proxy from the user's git configuration as
// cargo reads it (libgit2's git_config_open_default: /etc/gitconfig, then
// $XDG_CONFIG_HOME/git/config or ~/.config/git/config, then ~/.gitconfig,
// the later winning), with HOME and XDG_CONFIG_HOME from the session
// environment. A configuration libgit2 could not open (a file unreadable
// or malformed) yields nothing, as cargo then uses no git setting.
func (p *PM) gitHTTPProxy() (value string, found bool) {
	env := p.session().Env
	home := env.Get("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	files := gitconfig.Files(p.gitSystemConfig, home, env.Get("XDG_CONFIG_HOME"))
	value, found, err := gitconfig.Lookup(files, home, "http.proxy")
	if err != nil {
		p.session().Logger.Debug("cargo: git's http.proxy is not used, as cargo does not use it when git's configuration cannot be read", "error", redact.Error(err))
		return "", false
	}
	return value, found
}
