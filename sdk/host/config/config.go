// Package config reads the host's configuration: which package managers to
// run, which plugin registries to read, and the user's enablement choices.
//
// The user file is $SYMPOSIUM_HOME/config.toml, else
// $XDG_CONFIG_HOME/symposium/config.toml, else ~/.symposium/config.toml; a
// workspace may add .symposium/config.toml, whose entries are appended to
// the user's. Errors name the file and line.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/suggest"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// File names.
const (
	FileName      = "config.toml"
	WorkspaceFile = ".symposium/config.toml"
)

// RecommendationsName and RecommendationsURL identify the default
// recommendations registry.
const (
	RecommendationsName = "symposium-recommendations"
	RecommendationsURL  = "https://github.com/symposium-dev/recommendations"
	UserPluginsName     = "user-plugins"
)

// Config is the merged configuration of one host invocation.
type Config struct {
	// Dir is the user config directory (relative registry paths resolve
	// against it).
	Dir string
	// Files are the files read, in order.
	Files []string
	// Recommendations and UserPlugins say whether the built-in registries are
	// on ([defaults] symposium-recommendations / user-plugins).
	Recommendations bool
	UserPlugins     bool
	// PackageManagers are the [[package-manager]] entries.
	PackageManagers []PackageManager
	// Registries are the [[registry]] entries, built-ins first.
	Registries []Registry
	// Plugins are the enablement lists.
	Plugins Plugins
}

// PackageManager is a [[package-manager]] entry: a PM binary to run.
type PackageManager struct {
	Name    string            `toml:"name"`
	Command string            `toml:"command"`
	Path    string            `toml:"path"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	// Kind is "ecosystem" (the default: its offers are embedded in
	// dependencies and need consent) or "registry" (a source of plugins the
	// user added by hand, trusted like a [[registry]]).
	Kind string `toml:"kind"`
	// Source, when set, names an installation source (see the acquisition
	// machinery); Extra keeps its fields.
	Source string `toml:"source"`
	// Pos is where the entry is, for messages.
	Pos Pos `toml:"-"`
	// Extra holds the keys this version does not interpret.
	Extra map[string]any `toml:"-"`
}

// Registry is a [[registry]] entry: a git or local plugin registry.
type Registry struct {
	Name       string `toml:"name"`
	Git        string `toml:"git"`
	Path       string `toml:"path"`
	Ref        string `toml:"ref"`
	Subdir     string `toml:"subdir"`
	AutoUpdate *bool  `toml:"auto-update"`
	// Builtin marks the recommendations and user-plugins registries.
	Builtin bool `toml:"-"`
	Pos     Pos  `toml:"-"`
}

// AutoUpdates reports whether the registry refreshes on its own (default on).
func (r Registry) AutoUpdates() bool { return r.AutoUpdate == nil || *r.AutoUpdate }

// Pos is a position in a config file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Plugins holds the [plugins] enablement lists.
type Plugins struct {
	Disable    []Selector
	AutoEnable []Selector
	Use        []Selector
}

// Selector names plugins in [plugins]: a {pm, name} pair, or a bare name
// (any pm). Name may be "*" (every plugin); a name with '*' inside matches
// as a glob. Workspace, when set, limits a `use` entry to that workspace.
type Selector struct {
	PM        string
	Name      string
	Workspace string
	Pos       Pos
}

func (s Selector) String() string {
	out := s.Name
	if s.PM != "" {
		out = s.PM + ":" + s.Name
	}
	if s.Workspace != "" {
		out += " (in " + s.Workspace + ")"
	}
	return out
}

// Matches reports whether s names the plugin (pm, name) in workspace ws.
// Names compare case-sensitively, with '-' and '_' equal as Symposium does.
func (s Selector) Matches(pm, name, ws string) bool {
	if s.PM != "" && s.PM != pm {
		return false
	}
	if s.Workspace != "" && filepath.Clean(s.Workspace) != filepath.Clean(ws) {
		return false
	}
	if s.Name == "*" {
		return true
	}
	if strings.Contains(s.Name, "*") {
		return matchStars(normalize(s.Name), normalize(name))
	}
	return normalize(s.Name) == normalize(name)
}

// matchStars reports whether name matches pattern, in which each '*'
// stands for any run of characters, '/' included (an npm scope: "*-skills"
// matches "@acme/gizmo-skills"), and every other character for itself.
func matchStars(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(name, first) {
		return false
	}
	name = name[len(first):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return strings.HasSuffix(name, last)
}

func normalize(n string) string { return strings.ReplaceAll(n, "_", "-") }

// Error is a configuration problem at a position.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// UserDir returns the user config directory: $SYMPOSIUM_HOME, else
// $XDG_CONFIG_HOME/symposium, else ~/.symposium.
func UserDir(getenv func(string) string) string {
	if d := getenv("SYMPOSIUM_HOME"); d != "" {
		return d
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "symposium")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".symposium")
}

// CacheDir returns the cache directory handed to PMs: $SYMPOSIUM_HOME/cache,
// else $XDG_CACHE_HOME/symposium, else <user config dir>/cache.
func CacheDir(getenv func(string) string) string {
	if d := getenv("SYMPOSIUM_HOME"); d != "" {
		return filepath.Join(d, "cache")
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "symposium")
	}
	return filepath.Join(UserDir(getenv), "cache")
}

// MaxFileSize bounds a configuration file (1 MiB): a real one is a few
// KiB, and the workspace's comes with the repository.
const MaxFileSize = 1 << 20

// ReadFile reads the configuration file at path as Load does, with
// pkgfile.ReadUserFile: links are followed wherever they lead (a user's
// file is often a link into a dotfiles repository), but what they lead to
// must be a regular file (not a FIFO, which would wait for a writer, nor a
// device) of at most MaxFileSize bytes. Errors name the file and the
// cause; an absent file's wraps fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	return pkgfile.ReadUserFile(path, MaxFileSize)
}

// Load reads the user config (from the directory UserDir names) and the
// workspace's .symposium/config.toml, either of which may be absent. Each
// is read with ReadFile: a FIFO, a device or a file over MaxFileSize is an
// error naming it.
func Load(getenv func(string) string, workspace string) (*Config, error) {
	dir := UserDir(getenv)
	c := &Config{Dir: dir, Recommendations: true, UserPlugins: true}
	var errs []error
	for _, f := range []string{filepath.Join(dir, FileName), filepath.Join(workspace, WorkspaceFile)} {
		if workspace == "" && strings.HasSuffix(f, WorkspaceFile) {
			continue
		}
		data, err := ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot read the configuration: %w", err))
			continue
		}
		c.Files = append(c.Files, f)
		if err := c.parse(f, data); err != nil {
			errs = append(errs, err)
		}
	}
	c.addBuiltins()
	return c, errors.Join(errs...)
}

// Parse reads one config file's content into a fresh Config (built-in
// registries included), as Load does for each file.
func Parse(file string, data []byte, dir string) (*Config, error) {
	c := &Config{Dir: dir, Recommendations: true, UserPlugins: true, Files: []string{file}}
	err := c.parse(file, data)
	c.addBuiltins()
	return c, err
}

func (c *Config) addBuiltins() {
	var builtins []Registry
	if c.Recommendations {
		builtins = append(builtins, Registry{Name: RecommendationsName, Git: RecommendationsURL, Builtin: true})
	}
	if c.UserPlugins {
		builtins = append(builtins, Registry{Name: UserPluginsName, Path: filepath.Join(c.Dir, "plugins"), Builtin: true})
	}
	c.Registries = append(builtins, c.Registries...)
}

func (c *Config) parse(file string, data []byte) error {
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		msg := tomlfile.Words(strings.TrimPrefix(err.Error(), "toml: "))
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return &Error{Pos{file, line}, msg}
		}
		return &Error{Pos{File: file}, msg}
	}
	at := newPositions(file, data)
	// A key refused here is not decoded further (that would report the
	// same problem again, less clearly), but the others still are, so a
	// file with several mistakes reports them all at once rather than one
	// table per run.
	errs, bad := checkTop(tree, at)
	for k := range bad {
		delete(tree, k)
	}
	if d, ok := tree["defaults"].(map[string]any); ok {
		if b, ok := d[RecommendationsName].(bool); ok {
			c.Recommendations = b
		}
		if b, ok := d[UserPluginsName].(bool); ok {
			c.UserPlugins = b
		}
	}
	for i, m := range tables(tree, "package-manager") {
		pm, err := decodePM(m, at, i)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.PackageManagers = append(c.PackageManagers, pm)
	}
	for _, header := range []string{"registry", "plugin-source"} {
		for i, m := range tables(tree, header) {
			reg, err := decodeRegistry(m, at, header, i, c.Dir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c.Registries = append(c.Registries, reg)
		}
	}
	if p, ok := tree["plugins"].(map[string]any); ok {
		if err := c.Plugins.decode(p, at); err != nil {
			errs = append(errs, err)
		}
	}
	return joinSorted(errs)
}

// tables returns the array of tables at the top-level key (checked already).
func tables(tree map[string]any, key string) []map[string]any {
	list, _ := tree[key].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if t, ok := e.(map[string]any); ok {
			out = append(out, t)
		}
	}
	return out
}

// joinSorted joins errors, flattening joined ones, in line order.
func joinSorted(errs []error) error {
	var flat []error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		flat = append(flat, err)
	}
	for _, e := range errs {
		walk(e)
	}
	line := func(err error) int {
		var ce *Error
		if errors.As(err, &ce) {
			return ce.Pos.Line
		}
		return 0
	}
	slices.SortStableFunc(flat, func(a, b error) int { return cmp.Compare(line(a), line(b)) })
	return errors.Join(flat...)
}

func decodePM(m map[string]any, at *positions, i int) (PackageManager, error) {
	path := []string{"package-manager", fmt.Sprint(i)}
	pos := at.at(path...)
	pm := PackageManager{Pos: pos, Extra: map[string]any{}}
	_, hasSource := m["source"]
	valid := pmKeys
	if hasSource {
		valid = append(slices.Clone(pmKeys), sourceKeys...)
	}
	var errs []error
	for _, k := range sortedKeys(m, at, path...) {
		v := m[k]
		var err error
		switch k {
		case "name":
			pm.Name, err = str(v, k)
		case "command":
			pm.Command, err = str(v, k)
		case "path":
			pm.Path, err = str(v, k)
		case "source":
			pm.Source, err = str(v, k)
		case "kind":
			if pm.Kind, err = str(v, k); err == nil && pm.Kind != "ecosystem" && pm.Kind != "registry" {
				err = fmt.Errorf("kind must be \"ecosystem\" or \"registry\", not %q", pm.Kind)
			}
		case "args":
			pm.Args, err = strs(v, k)
		case "env":
			pm.Env, err = strMap(v, k)
		default:
			pm.Extra[k] = v
			if !slices.Contains(valid, k) {
				errs = append(errs, &Error{at.at(append(path, k)...), unknownKey("[[package-manager]]", k, valid)})
			}
		}
		if err != nil {
			errs = append(errs, &Error{at.at(append(path, k)...), "[[package-manager]] " + err.Error()})
		}
	}
	if len(errs) > 0 {
		return pm, errors.Join(errs...)
	}
	switch {
	case pm.Name == "":
		return pm, &Error{pos, "[[package-manager]] needs a name"}
	case pm.Command == "" && pm.Path == "" && pm.Source == "":
		return pm, &Error{pos, fmt.Sprintf("[[package-manager]] %q needs a command (or path, or an installation source)", pm.Name)}
	}
	if pm.Command == "" {
		pm.Command = pm.Path
	}
	return pm, nil
}

func decodeRegistry(m map[string]any, at *positions, header string, i int, dir string) (Registry, error) {
	path := []string{header, fmt.Sprint(i)}
	pos := at.at(path...)
	r := Registry{Pos: pos}
	var errs []error
	for _, k := range sortedKeys(m, at, path...) {
		v := m[k]
		var err error
		switch k {
		case "name":
			r.Name, err = str(v, k)
		case "git":
			r.Git, err = str(v, k)
		case "path":
			r.Path, err = str(v, k)
		case "ref":
			r.Ref, err = str(v, k)
		case "subdir":
			r.Subdir, err = str(v, k)
		case "auto-update":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("auto-update must be true or false")
			}
			r.AutoUpdate = &b
		default:
			err = errors.New(unknownKey("[["+header+"]]", k, registryKeys))
			errs = append(errs, &Error{at.at(append(path, k)...), err.Error()})
			continue
		}
		if err != nil {
			errs = append(errs, &Error{at.at(append(path, k)...), "[[" + header + "]] " + err.Error()})
		}
	}
	if len(errs) > 0 {
		return r, errors.Join(errs...)
	}
	switch {
	case r.Name == "":
		return r, &Error{pos, "[[" + header + "]] needs a name"}
	case r.Git == "" && r.Path == "":
		return r, &Error{pos, fmt.Sprintf("[[%s]] %q needs git or path", header, r.Name)}
	case r.Git != "" && r.Path != "":
		return r, &Error{pos, fmt.Sprintf("[[%s]] %q has both git and path; keep one", header, r.Name)}
	}
	if r.Path != "" && !filepath.IsAbs(r.Path) {
		r.Path = filepath.Join(dir, r.Path)
	}
	// A local repository written as a relative path is relative to the
	// config directory too, not to wherever the registry PM runs.
	if strings.HasPrefix(r.Git, "./") || strings.HasPrefix(r.Git, "../") {
		r.Git = filepath.Join(dir, r.Git)
	}
	return r, nil
}

func (p *Plugins) decode(m map[string]any, at *positions) error {
	var errs []error
	for _, k := range sortedKeys(m, at, "plugins") {
		v := m[k]
		var dst *[]Selector
		switch k {
		case "disable":
			dst = &p.Disable
		case "auto-enable":
			dst = &p.AutoEnable
		case "use":
			dst = &p.Use
		default:
			errs = append(errs, &Error{at.at("plugins", k), unknownKey("[plugins]", k, pluginsKeys)})
			continue
		}
		list, ok := v.([]any)
		if !ok {
			errs = append(errs, &Error{at.at("plugins", k), fmt.Sprintf("plugins.%s must be an array", k)})
			continue
		}
		for i, e := range list {
			pos := at.item(i, "plugins", k)
			s, err := selector(e, k == "use")
			if err != nil {
				errs = append(errs, &Error{pos, fmt.Sprintf("plugins.%s[%d]: %v", k, i, err)})
				continue
			}
			s.Pos = pos
			*dst = append(*dst, s)
		}
	}
	return errors.Join(errs...)
}

func selector(v any, allowWorkspace bool) (Selector, error) {
	switch e := v.(type) {
	case string:
		if e == "" {
			return Selector{}, fmt.Errorf("empty name")
		}
		return Selector{Name: e}, nil
	case map[string]any:
		var s Selector
		keys := []string{"pm", "name"}
		if allowWorkspace {
			keys = append(keys, "workspace")
		}
		names := make([]string, 0, len(e))
		for k := range e {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			str, ok := e[k].(string)
			switch {
			case k == "workspace" && !allowWorkspace:
				return s, fmt.Errorf("workspace is only allowed in use entries")
			case !slices.Contains(keys, k):
				if c := suggest.Closest(k, keys); c != "" {
					return s, fmt.Errorf("unknown key %q; did you mean %q? (keys: %s)", k, c, strings.Join(keys, ", "))
				}
				return s, fmt.Errorf("unknown key %q (keys: %s)", k, strings.Join(keys, ", "))
			case !ok:
				return s, fmt.Errorf("%s must be a string", k)
			}
			switch k {
			case "pm":
				s.PM = str
			case "name":
				s.Name = str
			case "workspace":
				if !filepath.IsAbs(str) {
					// A relative path would be read against whatever
					// directory discovery runs in, and never match.
					return s, fmt.Errorf("workspace must be an absolute path, not %q", str)
				}
				s.Workspace = str
			}
		}
		if s.Name == "" {
			return s, fmt.Errorf("needs a name")
		}
		return s, nil
	}
	return Selector{}, fmt.Errorf("must be a name or a {pm, name} table, not %s", describe(v))
}

// describe names a TOML value's type in the file's terms.
func describe(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

func str(v any, k string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", k)
	}
	return s, nil
}

func strs(v any, k string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an array of strings", k)
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d] must be a string", k, i)
		}
		out[i] = s
	}
	return out, nil
}

func strMap(v any, k string) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a table of strings", k)
	}
	out := make(map[string]string, len(m))
	for key, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s.%s must be a string", k, key)
		}
		out[key] = s
	}
	return out, nil
}
