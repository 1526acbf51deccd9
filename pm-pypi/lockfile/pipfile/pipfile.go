// Package pipfile reads the dependency tables of a Pipfile: [packages],
// [dev-packages] and pipenv's custom package categories. It sits beside
// pipfilelock, the reader of the Pipfile.lock that pins them: pipenv's
// format is the pair.
package pipfile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Dep is one declared dependency.
type Dep struct {
	// Name is the PEP 503 normalized name.
	Name string
	// Category is the table: "packages", "dev-packages" or a custom one.
	Category string
	// Version is the exact version of an "==" pin, or "".
	Version string
	// Path is the local source tree of a path entry, as written, or "".
	Path string
}

// exactPin returns the version an "==" (or arbitrary-equality "===") spec
// pins, or "" for any other spec: a range, a wildcard, several clauses, a
// spec with markers, or one that is not a version after its operator.
func exactPin(spec string) string {
	spec = strings.TrimSpace(spec)
	v, ok := strings.CutPrefix(spec, "===")
	if !ok {
		if v, ok = strings.CutPrefix(spec, "=="); !ok {
			return ""
		}
	}
	v = strings.TrimSpace(v)
	if strings.ContainsAny(v, "=<>!~,;* \t\r\n") {
		return ""
	}
	return v
}

// notCategories are the Pipfile tables that do not list packages.
var notCategories = map[string]bool{"source": true, "requires": true, "pipenv": true, "scripts": true}

// Parse decodes a Pipfile.
func Parse(data []byte) ([]Dep, error) {
	var f map[string]any
	if err := tomlfile.Unmarshal("Pipfile", data, &f); err != nil {
		return nil, err
	}
	var cats []string
	for k := range f {
		if !notCategories[k] {
			cats = append(cats, k)
		}
	}
	sort.Slice(cats, func(i, j int) bool {
		rank := func(s string) int { return map[string]int{"packages": 0, "dev-packages": 1}[s] }
		ri, rj := rank(cats[i]), rank(cats[j])
		if cats[i] != "packages" && cats[i] != "dev-packages" {
			ri = 2
		}
		if cats[j] != "packages" && cats[j] != "dev-packages" {
			rj = 2
		}
		if ri != rj {
			return ri < rj
		}
		return cats[i] < cats[j]
	})
	var deps []Dep
	for _, c := range cats {
		tbl, ok := f[c].(map[string]any)
		if !ok {
			continue
		}
		names := make([]string, 0, len(tbl))
		for n := range tbl {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !pyname.Valid(n) {
				return nil, fmt.Errorf("Pipfile [%s]: bad package name %q", c, n)
			}
			d := Dep{Name: pyname.Normalize(n), Category: c}
			var spec string
			switch v := tbl[n].(type) {
			case string:
				spec = v
			case map[string]any:
				spec, _ = v["version"].(string)
				d.Path, _ = v["path"].(string)
			}
			d.Version = exactPin(spec)
			deps = append(deps, d)
		}
	}
	return deps, nil
}
