// Package poetrylock reads Poetry's lockfile, poetry.lock, lock-version 1.x
// and 2.x.
package poetrylock

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Lock is a decoded poetry.lock.
type Lock struct {
	// LockVersion is [metadata] lock-version ("" in the oldest files).
	LockVersion string
	Packages    []Package
}

// Package is one [[package]] entry.
type Package struct {
	// Name is normalized.
	Name    string
	Version string
	// Category (1.x) and Groups (2.1) say which dependency tables it
	// serves, when the file records it.
	Category string
	Groups   []string
	// SourceType is "directory", "file", "url", "git" or "" (the index).
	SourceType string
	SourceURL  string
	// Markers (lock-version 2.1) are the PEP 508 markers under which the
	// lock installs this entry: one string, or one per group, any of
	// which holding selects it; none for every environment.
	Markers []string
}

type rawPackage struct {
	Name     string   `toml:"name"`
	Version  string   `toml:"version"`
	Category string   `toml:"category"`
	Groups   []string `toml:"groups"`
	// Markers is a string, or a table of strings by group (2.1).
	Markers any `toml:"markers"`
	Source  struct {
		Type string `toml:"type"`
		URL  string `toml:"url"`
	} `toml:"source"`
}

// rawHead is poetry.lock without its [[package]] tables.
type rawHead struct {
	Metadata struct {
		LockVersion string `toml:"lock-version"`
	} `toml:"metadata"`
}

type rawLock struct {
	Package []rawPackage `toml:"package"`
	rawHead
}

// Parse decodes a poetry.lock. It accepts lock-version >= 1 and < 3 (and
// files older than lock-version), and refuses newer majors.
func Parse(data []byte) (*Lock, error) {
	var raw rawLock
	// One [[package]] table at a time, the way Poetry writes the file;
	// anything else at once.
	if pkgs, ok := tomlfile.UnmarshalTables[rawPackage](data, "package", &raw.rawHead); ok {
		raw.Package = pkgs
	} else if err := tomlfile.Unmarshal("poetry.lock", data, &raw); err != nil {
		return nil, err
	}
	return fromRaw(&raw)
}

// ParseReader decodes the poetry.lock r reads, one [[package]] table at a
// time, without holding the whole file in memory; a file in a shape that
// cannot be read that way is read again from the start and decoded whole.
func ParseReader(r io.ReadSeeker) (*Lock, error) {
	var raw rawLock
	pkgs, whole, err := tomlfile.ReadTables[rawPackage](r, "package", &raw.rawHead)
	if err != nil {
		return nil, err
	}
	if whole != nil {
		return Parse(whole)
	}
	raw.Package = pkgs
	return fromRaw(&raw)
}

// fromRaw checks and converts a decoded poetry.lock.
func fromRaw(raw *rawLock) (*Lock, error) {
	lv := raw.Metadata.LockVersion
	if lv != "" {
		major, _, _ := strings.Cut(lv, ".")
		n, err := strconv.Atoi(major)
		if err != nil {
			return nil, fmt.Errorf("poetry.lock: bad lock-version %q", lv)
		}
		if n < 1 || n >= 3 {
			return nil, fmt.Errorf("poetry.lock: lock-version %s is not supported (this reader knows 1.x and 2.x)", lv)
		}
	}
	l := &Lock{LockVersion: lv, Packages: make([]Package, 0, len(raw.Package))}
	for i, rp := range raw.Package {
		if !pyname.Valid(rp.Name) {
			return nil, fmt.Errorf("poetry.lock: package %d: bad name %q", i+1, rp.Name)
		}
		markers, err := entryMarkers(rp.Markers)
		if err != nil {
			return nil, fmt.Errorf("poetry.lock: package %d (%s): %w", i+1, rp.Name, err)
		}
		l.Packages = append(l.Packages, Package{Name: pyname.Normalize(rp.Name), Version: rp.Version,
			Category: rp.Category, Groups: rp.Groups, SourceType: rp.Source.Type, SourceURL: rp.Source.URL,
			Markers: markers})
	}
	return l, nil
}

// entryMarkers reads a [[package]] entry's markers: a string, or a table
// giving one string per group (in group order, so the result does not
// depend on the decoder's map order).
func entryMarkers(v any) ([]string, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(m) == "" {
			return nil, nil
		}
		return []string{m}, nil
	case map[string]any:
		groups := slices.Sorted(maps.Keys(m))
		out := make([]string, 0, len(groups))
		for _, g := range groups {
			s, ok := m[g].(string)
			if !ok {
				return nil, fmt.Errorf("markers of group %q are not a string", g)
			}
			if strings.TrimSpace(s) == "" {
				return nil, nil // installed for this group everywhere
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("markers are neither a string nor a table of strings")
}
