// Package npmrc reads npm's configuration the way the npm CLI layers it:
// npm_config_* environment variables over the project .npmrc over the user's
// ~/.npmrc (or $npm_config_userconfig) over the global npmrc
// ($npm_config_globalconfig, else $PREFIX/etc/npmrc).
//
// It answers what a registry client needs: the default registry, per-scope
// registries (@scope:registry), credentials keyed by "nerf-darted" registry
// URLs (//host/path/:_authToken, :_auth, :username + :_password), proxies
// and TLS settings. Credentials are only ever turned into request headers:
// nothing in this package formats them into a string meant for people.
package npmrc

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/netproxy"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// DefaultRegistry is npm's default registry.
const DefaultRegistry = "https://registry.npmjs.org/"

// Env is the environment the configuration is read from
// (pmserver.Env satisfies it).
type Env interface {
	Lookup(key string) (string, bool)
	Environ() []string
}

// Config is the merged configuration.
type Config struct {
	values map[string]string
	// Files lists the configuration files that were read, in precedence order
	// (highest first), for diagnostics.
	Files []string
	// Consulted lists every configuration file Load looked for, present or
	// not, so that a caller persisting what it derived from the
	// configuration can notice a file appearing, changing or vanishing.
	Consulted []string
	// Unreadable holds, for each configuration file that exists but was
	// not read (a FIFO, a device, a directory, one over
	// pkgfile.MaxManifest, or a read that failed), the error naming it.
	// Such a file is left out, as an absent one is.
	Unreadable []error
}

// Load reads the configuration that applies to the project in dir. Files
// that do not exist are skipped; unreadable lines are ignored as npm does.
// Each file is read with pkgfile.ReadUserFile (links followed, at most
// pkgfile.MaxManifest bytes): one that cannot be read is skipped too, and
// listed in Unreadable.
func Load(dir string, env Env) *Config {
	c := &Config{values: map[string]string{}}
	lookup := func(k string) string { v, _ := env.Lookup(k); return v }

	// Layers from lowest to highest precedence; later ones overwrite.
	var layers []string
	global := envConfig(env, "globalconfig")
	if global == "" {
		prefix := envConfig(env, "prefix")
		if prefix == "" {
			prefix = lookup("PREFIX")
		}
		if prefix == "" {
			prefix = nodePrefix(lookup("PATH"))
		}
		if prefix != "" {
			global = filepath.Join(prefix, "etc", "npmrc")
		}
	}
	user := envConfig(env, "userconfig")
	if user == "" {
		if home := lookup("HOME"); home != "" {
			user = filepath.Join(home, ".npmrc")
		}
	}
	project := ""
	if dir != "" {
		project = filepath.Join(dir, ".npmrc")
	}
	for _, f := range []string{global, user, project} {
		if f == "" {
			continue
		}
		if f == project && f == user {
			continue // npm skips the project file when it is the user file
		}
		c.Consulted = append(c.Consulted, f)
		data, err := pkgfile.ReadUserFile(f, pkgfile.MaxManifest)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				c.Unreadable = append(c.Unreadable, fmt.Errorf("npm configuration file left out: %w", err))
			}
			continue
		}
		layers = append(layers, f)
		for k, v := range parse(data, lookup) {
			c.values[k] = v
		}
	}
	for _, kv := range env.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if key, ok := envKey(k); ok && v != "" {
			c.values[key] = v
		}
	}
	for i := len(layers) - 1; i >= 0; i-- {
		c.Files = append(c.Files, layers[i])
	}
	return c
}

// EnvSources returns, sorted, the variables of env that Load derives the
// configuration from without reading a file: every npm_config_* variable
// (any case of the prefix) and HOME, PREFIX and PATH, which choose the user
// and global files, each as "NAME=value". A persisted answer that depends
// on the configuration keys on them (by hash), since a file's stamp cannot
// show a change of the environment. ${VAR} references inside the files are
// not among them: only reading the files tells which they are.
func EnvSources(env Env) []string {
	var out []string
	for _, kv := range env.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := envKey(k); ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HOME", "PREFIX", "PATH"} {
		v, _ := env.Lookup(k)
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// envConfig returns npm_config_<key> from env (any case of the prefix).
func envConfig(env Env, key string) string {
	for _, kv := range env.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if ek, ok := envKey(k); ok && ek == key {
			return v
		}
	}
	return ""
}

// envKey maps an environment variable name to an npm config key:
// npm_config_foo_bar → foo-bar; nerf-darted keys (npm_config_//host/:_authToken)
// keep their spelling.
func envKey(name string) (string, bool) {
	if len(name) <= len("npm_config_") || !strings.EqualFold(name[:len("npm_config_")], "npm_config_") {
		return "", false
	}
	k := name[len("npm_config_"):]
	if strings.HasPrefix(k, "//") {
		return k, true
	}
	var b strings.Builder
	for i, r := range k {
		if r == '_' && i > 0 {
			b.WriteByte('-')
			continue
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String()), true
}

// nodePrefix derives npm's default global prefix from the node on PATH: the
// directory above the one holding the node binary.
func nodePrefix(path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "node")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(filepath.Dir(p))
		}
	}
	return ""
}

// parse reads an ini-style npmrc: "key = value" lines, ";" and "#"
// comments, JSON-quoted values, ${VAR} (and ${VAR?}) expansion in keys and
// values. Section headers are ignored; "key[] = v" arrays keep the last value.
func parse(data []byte, lookup func(string) string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\uFEFF"))))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSuffix(strings.TrimSpace(k), "[]")
		if k == "" {
			continue
		}
		v = strings.TrimSpace(v)
		if !ok {
			v = "true"
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			var s string
			if json.Unmarshal([]byte(v), &s) == nil {
				v = s
			}
		} else if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		out[expand(k, lookup)] = expand(v, lookup)
	}
	return out
}

// expand replaces ${NAME} and ${NAME?} with the environment's value (empty
// when unset); a backslash before "$" keeps it literal.
func expand(s string, lookup func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '{' {
			if end := strings.IndexByte(s[i:], '}'); end > 0 {
				name := strings.TrimSuffix(s[i+2:i+end], "?")
				b.WriteString(lookup(name))
				i += end
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Get returns a configuration value and whether it is set.
func (c *Config) Get(key string) (string, bool) {
	v, ok := c.values[key]
	return v, ok
}

// Registry returns the registry for the package name: its scope's
// @scope:registry when set, else the default registry. The URL always ends
// in "/".
func (c *Config) Registry(name string) string {
	if strings.HasPrefix(name, "@") {
		if scope, _, ok := strings.Cut(name, "/"); ok {
			if r, ok := c.values[scope+":registry"]; ok && r != "" {
				return withSlash(r)
			}
		}
	}
	if r, ok := c.values["registry"]; ok && r != "" {
		return withSlash(r)
	}
	return DefaultRegistry
}

func withSlash(u string) string {
	if !strings.HasSuffix(u, "/") {
		return u + "/"
	}
	return u
}

// Authorization returns the Authorization header value for a request to
// rawURL, or "" when no credentials apply. Credentials are looked up by the
// URL's nerf dart ("//host[:port]/path/"), then each shorter path prefix,
// down to "//host/".
func (c *Config) Authorization(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	p := u.Path
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[:i+1]
	} else {
		p = "/"
	}
	for {
		key := "//" + u.Host + p
		if h := c.authFor(key); h != "" {
			return h
		}
		if p == "/" || p == "" {
			return ""
		}
		p = strings.TrimSuffix(p, "/")
		p = p[:strings.LastIndex(p, "/")+1]
	}
}

func (c *Config) authFor(nerf string) string {
	if t := c.values[nerf+":_authToken"]; t != "" {
		return "Bearer " + t
	}
	if a := c.values[nerf+":_auth"]; a != "" {
		return "Basic " + a
	}
	user, pass := c.values[nerf+":username"], c.values[nerf+":_password"]
	if user != "" && pass != "" {
		dec, err := base64.StdEncoding.DecodeString(pass)
		if err != nil {
			return ""
		}
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+string(dec)))
	}
	return ""
}

// ProxySettings returns npm's proxy settings, for netproxy: https-proxy
// (then HTTPS_PROXY, proxy, HTTP_PROXY) for https requests, proxy (then
// HTTP_PROXY) for http requests, and noproxy (then NO_PROXY); each key is
// read from the configuration, then from env as written and upper-cased.
// Loopback hosts are never proxied.
func (c *Config) ProxySettings(env Env) netproxy.Settings {
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := c.values[k]; ok && v != "" {
				return v
			}
			if v, ok := env.Lookup(k); ok && v != "" {
				return v
			}
			if v, ok := env.Lookup(strings.ToUpper(k)); ok && v != "" {
				return v
			}
		}
		return ""
	}
	return netproxy.Settings{
		HTTP:    get("proxy", "http_proxy"),
		HTTPS:   get("https-proxy", "https_proxy", "proxy", "http_proxy"),
		NoProxy: get("noproxy", "no_proxy"),
	}
}

// StrictSSL reports whether TLS certificates are verified (strict-ssl,
// default true).
func (c *Config) StrictSSL() bool {
	v, ok := c.values["strict-ssl"]
	return !ok || v != "false"
}

// CAFile returns the cafile setting, or "".
func (c *Config) CAFile() string { return c.values["cafile"] }
