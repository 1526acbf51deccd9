// Package pipfilelock reads pipenv's Pipfile.lock (pipfile-spec 6 and
// older).
package pipfilelock

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Lock is a decoded Pipfile.lock.
type Lock struct {
	PipfileSpec int
	// Packages are every locked package of every category.
	Packages []Package
}

// Package is one locked package.
type Package struct {
	// Name is normalized; Version is without its "==" ("" for path, VCS
	// and editable entries).
	Name     string
	Version  string
	Category string
	Editable bool
	Path     string
}

type rawEntry struct {
	Version  string `json:"version"`
	Editable bool   `json:"editable"`
	Path     string `json:"path"`
}

// Parse decodes a Pipfile.lock.
func Parse(data []byte) (*Lock, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &jsonfile.Error{File: "Pipfile.lock", Msg: "a Pipfile.lock must be a JSON object", Err: err}
		}
		return nil, jsonfile.Explain("Pipfile.lock", data, err)
	}
	l := &Lock{}
	metaRaw, ok := raw["_meta"]
	if !ok {
		return nil, fmt.Errorf("Pipfile.lock: no _meta section: not a pipenv lockfile")
	}
	var meta struct {
		PipfileSpec int `json:"pipfile-spec"`
	}
	if err := json.Unmarshal(metaRaw, &meta); err != nil {
		return nil, fmt.Errorf("Pipfile.lock: _meta: %w", inTerms(err))
	}
	if meta.PipfileSpec > 6 {
		return nil, fmt.Errorf("Pipfile.lock: pipfile-spec %d is not supported (this reader knows up to 6)", meta.PipfileSpec)
	}
	l.PipfileSpec = meta.PipfileSpec
	cats := make([]string, 0, len(raw))
	for k := range raw {
		if k != "_meta" {
			cats = append(cats, k)
		}
	}
	sort.Strings(cats)
	for _, c := range cats {
		var entries map[string]rawEntry
		if err := json.Unmarshal(raw[c], &entries); err != nil {
			return nil, fmt.Errorf("Pipfile.lock: section %q: %w", c, inTerms(err))
		}
		names := make([]string, 0, len(entries))
		for n := range entries {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !pyname.Valid(n) {
				return nil, fmt.Errorf("Pipfile.lock: section %q: bad package name %q", c, n)
			}
			e := entries[n]
			v := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(e.Version, "=="), "="))
			l.Packages = append(l.Packages, Package{Name: pyname.Normalize(n), Version: v, Category: c, Editable: e.Editable, Path: e.Path})
		}
	}
	return l, nil
}

// inTerms words an error of encoding/json about a part of the file in the
// file's terms, without a position (which would count from the part).
func inTerms(err error) error {
	var je *jsonfile.Error
	if errors.As(jsonfile.Explain("", nil, err), &je) {
		je.Line = 0
		return je
	}
	return err
}
