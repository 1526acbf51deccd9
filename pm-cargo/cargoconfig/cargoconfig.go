// Package cargoconfig reads the parts of cargo's configuration that decide
// where crates come from: source replacement ([source.*] with replace-with,
// registry, local-registry and directory) and the crates.io protocol. Files
// are found as cargo finds them: .cargo/config.toml (or the legacy
// .cargo/config, which wins when both exist, and which cargo warns is
// deprecated) in the working directory and each ancestor, then
// $CARGO_HOME/config.toml; nearer files win.
package cargoconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// CratesIOSparse is crates.io's sparse index URL.
const CratesIOSparse = "sparse+https://index.crates.io/"

// CratesIOGit is crates.io's git index URL, the id cargo records in
// Cargo.lock for crates.io packages however they were fetched.
const CratesIOGit = "registry+https://github.com/rust-lang/crates.io-index"

// SourceKind is how a source delivers crates.
type SourceKind int

// Source kinds.
const (
	// Registry is an index (sparse+ or git) plus downloads.
	Registry SourceKind = iota
	// LocalRegistry is a directory of .crate files with an index.
	LocalRegistry
	// Directory is a directory of unpacked crates (cargo vendor).
	Directory
)

// Source is the source crates.io resolves to after replacement.
type Source struct {
	// Name is the [source.<name>] that finally serves crates, or
	// "crates-io".
	Name string
	Kind SourceKind
	// Index is the index URL of a Registry source, with its sparse+ prefix
	// for sparse indexes.
	Index string
	// Dir is the absolute directory of a LocalRegistry or Directory source.
	Dir string
}

// Sparse reports whether the source is a sparse HTTP index, and its base URL
// without the sparse+ prefix (always ending in "/").
func (s Source) Sparse() (string, bool) {
	if s.Kind != Registry || !strings.HasPrefix(s.Index, "sparse+") {
		return "", false
	}
	u := strings.TrimPrefix(s.Index, "sparse+")
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u, true
}

// Config is the merged configuration.
type Config struct {
	// Files are the config files read, nearest first.
	Files []string
	// Warnings are what cargo warns about the files it reads: a legacy
	// .cargo/config beside a .cargo/config.toml, which cargo reads
	// instead, and a legacy .cargo/config alone, which cargo reads as
	// deprecated (CARGO_HOME's config likewise).
	Warnings []Warning
	// sources maps a source name to its definition, nearest file winning.
	sources map[string]sourceDef
	// protocol is registries.crates-io.protocol, or "".
	protocol string
	// HTTPProxy is http.proxy, the proxy cargo uses for every request
	// ("[protocol://]host[:port]"), or "". CARGO_HTTP_PROXY overrides it.
	HTTPProxy string
}

type sourceDef struct {
	ReplaceWith   string `toml:"replace-with"`
	Registry      string `toml:"registry"`
	LocalRegistry string `toml:"local-registry"`
	Directory     string `toml:"directory"`
	base          string // directory that relative paths are relative to
	file          string
}

type rawConfig struct {
	Source     map[string]sourceDef `toml:"source"`
	Registries map[string]struct {
		Protocol string `toml:"protocol"`
	} `toml:"registries"`
	HTTP struct {
		Proxy string `toml:"proxy"`
	} `toml:"http"`
}

// Warning is something cargo warns about its configuration files.
type Warning struct {
	// File is the file the warning is about.
	File    string
	Message string
}

// configFile returns the configuration file cargo reads in dir, or "":
// the legacy extensionless config when it exists, else config.toml. When
// both exist (and are not one file through a link), cargo reads config and
// warns, and so does configFile; when config exists alone, cargo reads it
// and warns that it is deprecated, and so does configFile.
func configFile(dir string, warnings *[]Warning) string {
	legacy, toml := filepath.Join(dir, "config"), filepath.Join(dir, "config.toml")
	lfi, err := os.Stat(legacy)
	if err != nil || !lfi.Mode().IsRegular() {
		if fi, err := os.Stat(toml); err == nil && fi.Mode().IsRegular() {
			return toml
		}
		return ""
	}
	tfi, err := os.Stat(toml)
	switch {
	case err != nil:
		*warnings = append(*warnings, Warning{File: legacy, Message: fmt.Sprintf(
			"`%s` is deprecated in favor of `config.toml` (cargo still reads it, and warns); rename it to %s, "+
				"or, if you need to support cargo 1.38 or earlier, make `config` a symbolic link to `config.toml`",
			legacy, toml)})
	case !os.SameFile(lfi, tfi):
		*warnings = append(*warnings, Warning{File: toml, Message: fmt.Sprintf(
			"both `%s` and `%s` exist. Using `%s` (as cargo does); merge them into %s and delete %s",
			legacy, toml, legacy, toml, legacy)})
	}
	return legacy
}

// Load reads the configuration cargo would use when run in dir with the
// given CARGO_HOME. A file that does not parse is an error naming it.
func Load(dir, cargoHome string) (*Config, error) {
	c := &Config{sources: map[string]sourceDef{}}
	var files []string
	seen := map[string]bool{}
	for d := dir; ; {
		if p := configFile(filepath.Join(d, ".cargo"), &c.Warnings); p != "" {
			files = append(files, p)
			seen[p] = true
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if cargoHome != "" {
		var ws []Warning
		if p := configFile(cargoHome, &ws); p != "" && !seen[p] {
			files = append(files, p)
			c.Warnings = append(c.Warnings, ws...)
		}
	}
	for _, f := range files {
		data, err := pkgfile.ReadUserFile(f, pkgfile.MaxManifest)
		if err != nil {
			return nil, err
		}
		var raw rawConfig
		if err := tomlfile.Unmarshal(f, data, &raw); err != nil {
			return nil, err
		}
		// Paths in a config file are relative to the directory holding its
		// .cargo directory (for $CARGO_HOME/config.toml: CARGO_HOME's parent).
		base := filepath.Dir(filepath.Dir(f))
		for name, s := range raw.Source {
			old, ok := c.sources[name]
			if !ok {
				s.base, s.file = base, f
				c.sources[name] = s
				continue
			}
			// Nearer files were read first and win key by key.
			if old.ReplaceWith == "" {
				old.ReplaceWith = s.ReplaceWith
			}
			if old.Registry == "" && old.LocalRegistry == "" && old.Directory == "" {
				old.Registry, old.LocalRegistry, old.Directory, old.base, old.file = s.Registry, s.LocalRegistry, s.Directory, base, f
			}
			c.sources[name] = old
		}
		if r, ok := raw.Registries["crates-io"]; ok && c.protocol == "" {
			c.protocol = r.Protocol
		}
		if c.HTTPProxy == "" {
			c.HTTPProxy = raw.HTTP.Proxy
		}
	}
	c.Files = files
	return c, nil
}

// CratesIO follows crates-io's replace-with chain to the source that
// actually serves crates. env is consulted for
// CARGO_REGISTRIES_CRATES_IO_PROTOCOL.
func (c *Config) CratesIO(getenv func(string) string) (Source, error) {
	name := "crates-io"
	visited := map[string]bool{}
	for {
		if visited[name] {
			return Source{}, fmt.Errorf("cargo config: source replacement loops at [source.%s]", name)
		}
		visited[name] = true
		def, ok := c.sources[name]
		if !ok && name != "crates-io" {
			return Source{}, fmt.Errorf("cargo config: replace-with names [source.%s], which is not defined", name)
		}
		if def.ReplaceWith != "" {
			name = def.ReplaceWith
			continue
		}
		switch {
		case def.Registry != "":
			idx := def.Registry
			if !strings.HasPrefix(idx, "sparse+") && !strings.HasPrefix(idx, "registry+") {
				idx = "registry+" + idx
			}
			return Source{Name: name, Kind: Registry, Index: idx}, nil
		case def.LocalRegistry != "":
			return Source{Name: name, Kind: LocalRegistry, Dir: abs(def.base, def.LocalRegistry)}, nil
		case def.Directory != "":
			return Source{Name: name, Kind: Directory, Dir: abs(def.base, def.Directory)}, nil
		}
		if name != "crates-io" {
			return Source{}, fmt.Errorf("cargo config (%s): [source.%s] has no registry, local-registry or directory", def.file, name)
		}
		proto := c.protocol
		if getenv != nil {
			if v := getenv("CARGO_REGISTRIES_CRATES_IO_PROTOCOL"); v != "" {
				proto = v
			}
		}
		if proto == "git" {
			return Source{Name: name, Kind: Registry, Index: CratesIOGit}, nil
		}
		return Source{Name: name, Kind: Registry, Index: CratesIOSparse}, nil
	}
}

// Directories returns the directory sources (vendored crates) cargo
// builds from: those that crates-io's replace-with chain ends at, then
// those the chain of any other replaced source ([source."git+..."] after
// `cargo vendor`) ends at, by source name, without repeats. A directory
// source nothing is replaced with is not used by cargo, and not listed.
func (c *Config) Directories() []string {
	names := make([]string, 0, len(c.sources))
	for name, s := range c.sources {
		if s.ReplaceWith != "" && name != "crates-io" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	names = append([]string{"crates-io"}, names...)
	var out []string
	for _, name := range names {
		if dir, ok := c.replacedBy(name); ok && !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// replacedBy follows the replace-with chain from the source name and
// returns the directory of the directory source it ends at; false when
// name is not replaced, the chain ends elsewhere, loops, or names a source
// that is not defined.
func (c *Config) replacedBy(name string) (string, bool) {
	def, ok := c.sources[name]
	if !ok || def.ReplaceWith == "" {
		return "", false
	}
	visited := map[string]bool{name: true}
	for def.ReplaceWith != "" {
		name = def.ReplaceWith
		if visited[name] {
			return "", false
		}
		visited[name] = true
		if def, ok = c.sources[name]; !ok {
			return "", false
		}
	}
	if def.Directory == "" {
		return "", false
	}
	return abs(def.base, def.Directory), true
}

func abs(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
