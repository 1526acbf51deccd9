package manifest

import (
	"fmt"
	"maps"
)

// Layer is one source of a package-embedded plugin manifest: an
// ecosystem-native declaration (`[package.metadata.symposium]` in
// Cargo.toml, `"symposium"` in package.json, `[tool.symposium]` in
// pyproject.toml) or the package's SYMPOSIUM.toml.
type Layer struct {
	// Source names the layer in messages, e.g.
	// "Cargo.toml [package.metadata.symposium]".
	Source string
	// Table is the decoded TOML or JSON table; nil when the layer is absent.
	Table map[string]any
}

// DefaultSkillsPath is the directory of the default skill group a
// package-embedded plugin gets unless `[defaults] skills = false`.
const DefaultSkillsPath = "skills"

// Embedded builds the manifest of a package-embedded plugin from its layers
// (docs/manifests.md §11): layers in order, later over earlier. Each present layer
// is parsed on its own; one that fails to parse (wrong types, unknown keys
// where the schema rejects them, bad dependency atoms or predicates, retired
// predicate syntax) is dropped and reported in the returned errors, each a
// [Problem] naming the layer. The merge appends the list fields
// (installations, hooks, skills, mcp_servers, predicate, plugins) earlier
// first, unions subcommands (later wins), concatenates predicates (AND) and
// depends-on atoms (which lower to one any(...), OR), and lets the later
// layer win for name, defaults and unknown keys.
//
// The result's name defaults to pkgName. Unless the merged `[defaults]` says
// `skills = false`, the default skill group `{source = {path = "skills"}}`
// is appended after the declared groups. The PM, not the host,
// adds this group: it is part of the manifest put on the wire, and hosts
// validate package offers with [OriginPackage], which adds no default group.
// The `[defaults]` table itself is kept on the wire as declared.
func Embedded(pkgName string, layers ...Layer) (*Manifest, []error) {
	var errs []error
	merged := &Manifest{}
	for _, l := range layers {
		if l.Table == nil {
			continue
		}
		m, err := FromTable(l.Table)
		if err == nil {
			if ps := parseProblems(m); len(ps) > 0 {
				err = ps
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: layer ignored: %w", l.Source, err))
			continue
		}
		merge(merged, m)
	}
	if merged.Name == "" {
		merged.Name = pkgName
	}
	if merged.Defaults == nil || merged.Defaults.Skills == nil || *merged.Defaults.Skills {
		merged.Skills = append(merged.Skills, SkillGroup{Source: &SkillSource{Path: DefaultSkillsPath}})
	}
	return merged, errs
}

// merge layers over onto base.
func merge(base, over *Manifest) {
	if over.Name != "" {
		base.Name = over.Name
	}
	if !over.DependsOn.IsZero() {
		base.DependsOn = DependsOn{Atoms: append(append([]string{}, base.DependsOn.Atoms...), over.DependsOn.Atoms...)}
		if base.DependsOn.Atoms == nil {
			base.DependsOn.Atoms = []string{}
		}
		base.DependsOn.Single = len(base.DependsOn.Atoms) == 1 && over.DependsOn.Single && len(over.DependsOn.Atoms) == 1
	}
	base.Predicates = appendList(base.Predicates, over.Predicates)
	if over.Defaults != nil {
		base.Defaults = over.Defaults
	}
	base.Installations = appendList(base.Installations, over.Installations)
	base.Hooks = appendList(base.Hooks, over.Hooks)
	base.Skills = appendList(base.Skills, over.Skills)
	base.MCPServers = appendList(base.MCPServers, over.MCPServers)
	if over.Subcommand != nil {
		if base.Subcommand == nil {
			base.Subcommand = map[string]Subcommand{}
		}
		maps.Copy(base.Subcommand, over.Subcommand)
	}
	base.Predicate = appendList(base.Predicate, over.Predicate)
	base.Plugins = appendList(base.Plugins, over.Plugins)
	if over.Extra != nil {
		if base.Extra == nil {
			base.Extra = map[string]any{}
		}
		maps.Copy(base.Extra, over.Extra)
	}
}

// appendList appends over to base, keeping "explicitly empty" when either is.
func appendList[T any](base, over []T) []T {
	if over == nil {
		return base
	}
	if base == nil {
		base = make([]T, 0, len(over))
	}
	return append(base, over...)
}
