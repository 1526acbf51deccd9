package cargopm

import (
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
