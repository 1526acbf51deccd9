// Package pyproject reads the dependency declarations of a pyproject.toml:
// PEP 621 [project] dependencies and optional-dependencies, PEP 735
// [dependency-groups], Poetry's [tool.poetry] dependency tables and groups,
// uv workspace members, and the [tool.symposium] plugin table.
package pyproject

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/requirement"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Dep is one declared direct dependency.
type Dep struct {
	// Name is the PEP 503 normalized name.
	Name string
	// Req is the declaration parsed as PEP 508 (for Poetry tables, only
	// the name and, for exact pins, the specifier).
	Req requirement.Requirement
	// Group says where it was declared: "project", "optional:<extra>",
	// "group:<name>", "poetry", "poetry-group:<name>".
	Group string
	// Path is the local source tree of a path dependency (Poetry's
	// path = "..."), as written, or "".
	Path string
}

// Project is what a pyproject.toml declares.
type Project struct {
	// Name is the project's normalized name ("" when the file has none).
	Name string
	// Version is the [project] or [tool.poetry] version, as written.
	Version string
	// Deps are the direct dependencies, in declaration order per table.
	Deps []Dep
	// WorkspaceMembers and WorkspaceExclude are [tool.uv.workspace] globs.
	WorkspaceMembers []string
	WorkspaceExclude []string
	// LocalSources maps normalized names to the directories
	// [tool.uv.sources] gives them (path = "..."), as written.
	LocalSources map[string]string
	// Symposium is the raw [tool.symposium] table, or nil.
	Symposium map[string]any
	// Problems are declarations that could not be understood (skipped).
	Problems []error
}

type file struct {
	Project *struct {
		Name                 string              `toml:"name"`
		Version              string              `toml:"version"`
		Dependencies         []string            `toml:"dependencies"`
		OptionalDependencies map[string][]string `toml:"optional-dependencies"`
	} `toml:"project"`
	DependencyGroups map[string][]any `toml:"dependency-groups"`
	Tool             struct {
		Poetry *struct {
			Name            string                 `toml:"name"`
			Version         string                 `toml:"version"`
			Dependencies    map[string]any         `toml:"dependencies"`
			DevDependencies map[string]any         `toml:"dev-dependencies"`
			Group           map[string]poetryGroup `toml:"group"`
		} `toml:"poetry"`
		UV struct {
			Workspace struct {
				Members []string `toml:"members"`
				Exclude []string `toml:"exclude"`
			} `toml:"workspace"`
			DevDependencies []string                  `toml:"dev-dependencies"`
			Sources         map[string]map[string]any `toml:"sources"`
		} `toml:"uv"`
		Symposium map[string]any `toml:"symposium"`
	} `toml:"tool"`
}

type poetryGroup struct {
	Dependencies map[string]any `toml:"dependencies"`
}

// Parse decodes a pyproject.toml.
func Parse(data []byte) (*Project, error) {
	var f file
	if err := tomlfile.Unmarshal("pyproject.toml", data, &f); err != nil {
		return nil, err
	}
	p := &Project{Symposium: f.Tool.Symposium}
	add := func(group, s string) {
		r, err := requirement.Parse(s)
		if err != nil {
			p.Problems = append(p.Problems, fmt.Errorf("%s: %w", group, err))
			return
		}
		p.Deps = append(p.Deps, Dep{Name: r.Normalized(), Req: r, Group: group})
	}
	if f.Project != nil {
		p.Name = pyname.Normalize(f.Project.Name)
		p.Version = f.Project.Version
		for _, d := range f.Project.Dependencies {
			add("project", d)
		}
		for _, extra := range sortedKeys(f.Project.OptionalDependencies) {
			for _, d := range f.Project.OptionalDependencies[extra] {
				add("optional:"+extra, d)
			}
		}
	}
	for _, g := range sortedKeys(f.DependencyGroups) {
		for _, item := range f.DependencyGroups[g] {
			switch v := item.(type) {
			case string:
				add("group:"+g, v)
			case map[string]any:
				// {include-group = "other"}: the other group is read anyway.
				if _, ok := v["include-group"]; !ok {
					p.Problems = append(p.Problems, fmt.Errorf("dependency-groups.%s: table without include-group", g))
				}
			default:
				p.Problems = append(p.Problems, fmt.Errorf("dependency-groups.%s: expected a requirement string or {include-group = \"…\"}, found %s", g, tomlfile.ValueWords(item)))
			}
		}
	}
	for _, d := range f.Tool.UV.DevDependencies {
		add("group:dev", d)
	}
	if po := f.Tool.Poetry; po != nil {
		if p.Name == "" {
			p.Name = pyname.Normalize(po.Name)
		}
		if p.Version == "" {
			p.Version = po.Version
		}
		p.addPoetry("poetry", po.Dependencies)
		p.addPoetry("poetry-group:dev", po.DevDependencies)
		for _, g := range sortedKeys(po.Group) {
			p.addPoetry("poetry-group:"+g, po.Group[g].Dependencies)
		}
	}
	for name, src := range f.Tool.UV.Sources {
		if path, ok := src["path"].(string); ok && path != "" {
			if p.LocalSources == nil {
				p.LocalSources = map[string]string{}
			}
			p.LocalSources[pyname.Normalize(name)] = path
		}
	}
	p.WorkspaceMembers = f.Tool.UV.Workspace.Members
	p.WorkspaceExclude = f.Tool.UV.Workspace.Exclude
	// The project's own name (self-referencing extras such as
	// "myproj[test]") is not a dependency.
	if p.Name != "" {
		p.Deps = slices.DeleteFunc(p.Deps, func(d Dep) bool { return d.Name == p.Name })
	}
	return p, nil
}

func (p *Project) addPoetry(group string, deps map[string]any) {
	for _, name := range sortedKeys(deps) {
		if name == "python" {
			continue
		}
		if !pyname.Valid(name) {
			p.Problems = append(p.Problems, fmt.Errorf("%s: bad dependency name %q", group, name))
			continue
		}
		r := requirement.Requirement{Name: name}
		// A bare exact version ("1.2.3" or "==1.2.3") is a pin; Poetry's
		// ^ and ~ ranges are kept out of the PEP 440 specifier.
		var c, path string
		switch v := deps[name].(type) {
		case string:
			c = v
		case map[string]any:
			c, _ = v["version"].(string)
			path, _ = v["path"].(string)
		}
		if c != "" {
			if pin, ok := poetryPin(c); ok {
				r.Specifier = "==" + pin
			}
		}
		p.Deps = append(p.Deps, Dep{Name: pyname.Normalize(name), Req: r, Group: group, Path: path})
	}
}

// poetryPin reports the exact version of a Poetry constraint that names
// one ("1.2.3", "==1.2.3").
func poetryPin(c string) (string, bool) {
	c = strings.TrimSpace(c)
	if c != "" && strings.ContainsRune("=<>!~^*", rune(c[0])) {
		r, err := requirement.Parse("x" + c)
		if err != nil {
			return "", false
		}
		return r.Pin()
	}
	r, err := requirement.Parse("x==" + c)
	if err == nil {
		return r.Pin()
	}
	return "", false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
