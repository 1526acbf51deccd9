// Package pylock reads PEP 751 lockfiles (pylock.toml, pylock.<name>.toml),
// lock-version 1.x.
package pylock

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// IsFileName reports whether name is a PEP 751 lockfile name: pylock.toml
// or pylock.<name>.toml (name without dots).
func IsFileName(name string) bool {
	mid, ok := strings.CutPrefix(name, "pylock.")
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, "toml")
	if !ok {
		return false
	}
	if mid == "" {
		return true
	}
	mid, ok = strings.CutSuffix(mid, ".")
	return ok && mid != "" && !strings.Contains(mid, ".")
}

// Lock is a decoded pylock.toml.
type Lock struct {
	LockVersion string
	CreatedBy   string
	Packages    []Package
}

// Package is one [[packages]] entry.
type Package struct {
	// Name is normalized; Version is "" for source trees that omit it.
	Name    string
	Version string
	Marker  string
	// Directory is the local source tree of a directory entry, or "".
	Directory string
	Editable  bool
}

type rawLock struct {
	LockVersion string `toml:"lock-version"`
	CreatedBy   string `toml:"created-by"`
	Packages    []struct {
		Name      string `toml:"name"`
		Version   string `toml:"version"`
		Marker    string `toml:"marker"`
		Directory *struct {
			Path     string `toml:"path"`
			Editable bool   `toml:"editable"`
		} `toml:"directory"`
	} `toml:"packages"`
}

// Parse decodes a pylock.toml. It refuses a lock-version whose major is not
// 1, as PEP 751 requires.
func Parse(data []byte) (*Lock, error) {
	var raw rawLock
	if err := tomlfile.Unmarshal("pylock.toml", data, &raw); err != nil {
		return nil, err
	}
	if raw.LockVersion == "" {
		return nil, fmt.Errorf("pylock.toml: lock-version is missing")
	}
	major, _, _ := strings.Cut(raw.LockVersion, ".")
	if n, err := strconv.Atoi(major); err != nil || n != 1 {
		return nil, fmt.Errorf("pylock.toml: lock-version %q is not supported (this reader knows 1.x)", raw.LockVersion)
	}
	l := &Lock{LockVersion: raw.LockVersion, CreatedBy: raw.CreatedBy}
	for i, rp := range raw.Packages {
		if !pyname.Valid(rp.Name) {
			return nil, fmt.Errorf("pylock.toml: package %d: bad name %q", i+1, rp.Name)
		}
		p := Package{Name: pyname.Normalize(rp.Name), Version: rp.Version, Marker: rp.Marker}
		if rp.Directory != nil {
			p.Directory, p.Editable = rp.Directory.Path, rp.Directory.Editable
		}
		l.Packages = append(l.Packages, p)
	}
	return l, nil
}
