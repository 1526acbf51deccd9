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
// getenv reads the session environment.
func LoadConfig(getenv func(string) string) Config {
	cfg := Config{Index: DefaultIndex, Source: "default"}
	var index, source string
	var extra []string
	fromPip := false
	// pip configuration files.
	cf := getenv("PIP_CONFIG_FILE")
	if cf != os.DevNull {
		for _, f := range pipConfigFiles(getenv, cf) {
			i, e, ok := readPipConf(f)
			if !ok {
				continue
			}
			if i != "" {
				index, source, fromPip = i, f, true
			}
			if e != nil {
				extra = e
				fromPip = true
			}
		}
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

// readPipConf reads index-url and extra-index-url from [global] and
// [install] of one INI file; [install] wins. The file is read with
// pkgfile.ReadUserFile, up to pkgfile.MaxManifest: one that cannot be read
// (absent, a FIFO, a device, oversize) is passed over as pip passes over
// an absent one.
func readPipConf(path string) (index string, extra []string, ok bool) {
	data, err := pkgfile.ReadUserFile(path, pkgfile.MaxManifest)
	if err != nil {
		return "", nil, false
	}
	return parsePipConf(data)
}

func parsePipConf(data []byte) (index string, extra []string, ok bool) {
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
	for _, s := range []string{"global", "install"} {
		if v, found := vals[s]["index-url"]; found && v != "" {
			index = v
		}
		if v, found := vals[s]["extra-index-url"]; found {
			extra = strings.Fields(v)
			if extra == nil {
				extra = []string{}
			}
		}
	}
	return index, extra, true
}
