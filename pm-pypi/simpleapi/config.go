package simpleapi

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// Config is the index configuration: one primary index and extra ones.
type Config struct {
	Index string
	Extra []string
	// Source says where Index came from (for diagnostics).
	Source string
	// Proxy is pip's own proxy setting (PIP_PROXY, else proxy = in a pip
	// configuration file), "" when none is set. pip sends every request,
	// http and https, through it, whatever HTTP(S)_PROXY, ALL_PROXY and
	// NO_PROXY say. It may carry credentials: print it with redact.URL.
	Proxy string
	// ProxySource says where Proxy came from (for diagnostics).
	ProxySource string
	// Consulted lists the pip configuration files LoadConfig looked for,
	// read or absent, in the order it looked (none when PIP_CONFIG_FILE is
	// os.DevNull): a choice derived from Config is stale once one of them
	// is created, changed or removed. ConfigSources names the rest of
	// what the indexes were derived from.
	Consulted []string
}

// ConfigSources returns what LoadConfig(getenv) derives the indexes from,
// besides the files' contents: "PIP_CONFIG_FILE=<value>", each pip
// configuration file it consults (as Config.Consulted), then
// "<name>=<value>" for each variable naming indexes (PIP_INDEX_URL and
// PIP_EXTRA_INDEX_URL, the uv ones). Two environments with the same
// sources, and the same files, configure the same indexes. It reads no
// file; it stats PIP_CONFIG_FILE, as LoadConfig does. The values may hold
// credentials: hash them, never print them.
func ConfigSources(getenv func(string) string) []string {
	cf := getenv("PIP_CONFIG_FILE")
	out := []string{"PIP_CONFIG_FILE=" + cf}
	if cf != os.DevNull {
		out = append(out, pipConfigFiles(getenv, cf)...)
	}
	for _, k := range []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX"} {
		out = append(out, k+"="+getenv(k))
	}
	return out
}

// LoadConfig finds the configured index the way pip does, then uv:
//
//  1. PIP_INDEX_URL / PIP_EXTRA_INDEX_URL;
//  2. pip configuration files, later overriding earlier: /etc/xdg/pip/pip.conf
//     (each of XDG_CONFIG_DIRS), /etc/pip.conf, then the user's
//     $XDG_CONFIG_HOME/pip/pip.conf or ~/.config/pip/pip.conf and
//     ~/.pip/pip.conf (skipped when PIP_CONFIG_FILE names an existing
//     file), $VIRTUAL_ENV/pip.conf, then PIP_CONFIG_FILE; in each, [global]
//     then [install] index-url and extra-index-url; PIP_CONFIG_FILE=/dev/null
//     (os.DevNull) disables them all;
//  3. UV_DEFAULT_INDEX or UV_INDEX_URL, and UV_INDEX / UV_EXTRA_INDEX_URL;
//  4. PyPI.
//
// Proxy is pip's --proxy option as pip 23 reads it from its configuration:
// PIP_PROXY, else proxy = in an [install] section of any of those files
// (the last file that sets it), else in a [global] section (likewise);
// an empty value sets nothing. (pip orders a setting by section first,
// [global] below the command's section below the environment, and by file
// only within a section.)
//
// getenv reads the session environment.
func LoadConfig(getenv func(string) string) Config {
	cfg := Config{Index: DefaultIndex, Source: "default"}
	var index, source string
	var extra []string
	fromPip := false
	// pip's proxy, by section: [install] wins over [global].
	var proxy [2]struct{ value, source string }
	// pip configuration files.
	cf := getenv("PIP_CONFIG_FILE")
	if cf != os.DevNull {
		cfg.Consulted = pipConfigFiles(getenv, cf)
		for _, f := range cfg.Consulted {
			pc, ok := readPipConf(f)
			if !ok {
				continue
			}
			if pc.index != "" {
				index, source, fromPip = pc.index, f, true
			}
			if pc.extra != nil {
				extra = pc.extra
				fromPip = true
			}
			for i, v := range pc.proxy {
				if v != "" {
					proxy[i].value, proxy[i].source = v, f
				}
			}
		}
	}
	for _, p := range proxy {
		if p.value != "" {
			cfg.Proxy, cfg.ProxySource = p.value, p.source
		}
	}
	if v := getenv("PIP_PROXY"); v != "" {
		cfg.Proxy, cfg.ProxySource = v, "PIP_PROXY"
	}
	if v := getenv("PIP_INDEX_URL"); v != "" {
		index, source, fromPip = v, "PIP_INDEX_URL", true
	}
	if v := getenv("PIP_EXTRA_INDEX_URL"); v != "" {
		extra, fromPip = strings.Fields(v), true
	}
	if !fromPip {
		for _, k := range []string{"UV_INDEX_URL", "UV_DEFAULT_INDEX"} {
			if v := getenv(k); v != "" {
				index, source = v, k
			}
		}
		for _, k := range []string{"UV_EXTRA_INDEX_URL", "UV_INDEX"} {
			for _, v := range strings.Fields(getenv(k)) {
				// UV_INDEX entries may be name=url.
				if n, u, ok := strings.Cut(v, "="); ok && !strings.Contains(n, "/") {
					v = u
				}
				extra = append(extra, v)
			}
		}
	}
	if index != "" {
		cfg.Index, cfg.Source = index, source
	}
	cfg.Extra = extra
	return cfg
}

func pipConfigFiles(getenv func(string) string, cf string) []string {
	var files []string
	dirs := getenv("XDG_CONFIG_DIRS")
	if dirs == "" {
		dirs = "/etc/xdg"
	}
	for _, d := range filepath.SplitList(dirs) {
		files = append(files, filepath.Join(d, "pip", "pip.conf"))
	}
	files = append(files, "/etc/pip.conf")
	cfExists := false
	if cf != "" {
		if _, err := os.Stat(cf); err == nil {
			cfExists = true
		}
	}
	if !cfExists {
		if home := getenv("HOME"); home != "" {
			files = append(files, filepath.Join(home, ".pip", "pip.conf"))
			xdg := getenv("XDG_CONFIG_HOME")
			if xdg == "" {
				xdg = filepath.Join(home, ".config")
			}
			files = append(files, filepath.Join(xdg, "pip", "pip.conf"))
		}
	}
	if ve := getenv("VIRTUAL_ENV"); ve != "" {
		files = append(files, filepath.Join(ve, "pip.conf"))
	}
	if cf != "" {
		files = append(files, cf)
	}
	return files
}

// pipConf is what one pip configuration file sets.
type pipConf struct {
	// index and extra are index-url and extra-index-url, [install] over
	// [global]; extra is nil when unset, empty when set to nothing.
	index string
	extra []string
	// proxy is proxy = in [global] (0) and in [install] (1), "" when
	// unset or empty.
	proxy [2]string
}

// readPipConf reads index-url, extra-index-url and proxy from [global] and
// [install] of one INI file. The file is read with pkgfile.ReadUserFile, up
// to pkgfile.MaxManifest: one that cannot be read (absent, a FIFO, a
// device, oversize) is passed over as pip passes over an absent one.
func readPipConf(path string) (pipConf, bool) {
	data, err := pkgfile.ReadUserFile(path, pkgfile.MaxManifest)
	if err != nil {
		return pipConf{}, false
	}
	return parsePipConf(data), true
}

func parsePipConf(data []byte) pipConf {
	vals := map[string]map[string]string{}
	section := ""
	lastKey := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		// A continuation line (indented) extends the previous value.
		if (raw[0] == ' ' || raw[0] == '\t') && lastKey != "" && section != "" {
			vals[section][lastKey] += "\n" + line
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.ToLower(strings.TrimSpace(line[1 : len(line)-1]))
			if vals[section] == nil {
				vals[section] = map[string]string{}
			}
			lastKey = ""
			continue
		}
		k, v, found := strings.Cut(line, "=")
		if !found {
			k, v, found = strings.Cut(line, ":")
		}
		if !found || section == "" {
			continue
		}
		k = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
		vals[section][k] = strings.TrimSpace(v)
		lastKey = k
	}
	var pc pipConf
	for i, s := range []string{"global", "install"} {
		if v, found := vals[s]["index-url"]; found && v != "" {
			pc.index = v
		}
		if v, found := vals[s]["extra-index-url"]; found {
			pc.extra = strings.Fields(v)
			if pc.extra == nil {
				pc.extra = []string{}
			}
		}
		pc.proxy[i] = vals[s]["proxy"]
	}
	return pc
}
