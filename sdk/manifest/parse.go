package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
)

// Parse-level checks: what Symposium's deserializer rejects before any
// validation runs (Symposium's order): unknown keys in tables that deny them,
// missing required keys and bad enum values of serde-required fields, and
// dependency atoms and predicates that do not parse. Problems come in
// document order when line numbers are known.

var (
	hookEvents   = []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"}
	hookAgents   = []string{"claude", "codex", "copilot", "gemini", "goose", "kiro", "opencode"}
	hookFormats  = []string{"symposium", "claude", "codex", "copilot", "gemini", "kiro"}
	audiences    = []string{"humans", "agents"}
	unknownHints = map[string]string{
		"mcp":              keyMCPServers,
		"mcp-servers":      keyMCPServers,
		"mcpServers":       keyMCPServers,
		"subcommands":      keySubcommand,
		"installation":     keyInstallations,
		"installable":      keyInstallations,
		"hook":             keyHooks,
		"skill":            keySkills,
		"plugin":           keyPlugins,
		"predicates_":      keyPredicates,
		"depends_on":       keyDependsOn,
		"dependsOn":        keyDependsOn,
		"dependencies":     keyDependsOn,
		"install-commands": keyInstallCommands,
		"path_exists":      keyPredicates,
	}
)

type checker struct {
	m        *Manifest
	problems Problems
}

func (c *checker) add(field, format string, args ...any) {
	c.problems = append(c.problems, Problem{Field: field, Line: c.m.Line(field), Message: fmt.Sprintf(format, args...)})
}

// parseProblems returns the parse-level problems of m, in document order.
func parseProblems(m *Manifest) Problems {
	c := &checker{m: m}
	c.unknown("", m.Extra, keyRetiredCrates)
	c.gate("", m.DependsOn, m.Predicates)
	if m.Defaults != nil {
		c.unknown(keyDefaults, m.Defaults.Extra)
	}
	for i := range m.Installations {
		p := indexPath(keyInstallations, i)
		if m.Installations[i].Name == "" {
			c.add(p, "an installation needs a name")
		}
		c.installationRefs(p, &m.Installations[i])
	}
	for i, h := range m.Hooks {
		p := indexPath(keyHooks, i)
		c.unknown(p, h.Extra)
		switch {
		case h.Name == "":
			c.add(p, "a hook needs a name")
		case h.Event == "":
			c.add(p, "hook %q needs an event (one of %s)", h.Name, quoteList(hookEvents))
		case !slices.Contains(hookEvents, h.Event):
			c.add(joinPath(p, keyEvent), "unknown hook event %q; expected one of %s", h.Event, quoteList(hookEvents))
		case h.Command.IsZero():
			c.add(p, "hook %q needs a command (an installation name or an inline installation table)", h.Name)
		}
		if h.Agent != "" && !slices.Contains(hookAgents, h.Agent) {
			c.add(joinPath(p, keyAgent), "unknown agent %q; expected one of %s", h.Agent, quoteList(hookAgents))
		}
		if h.Format != "" && !slices.Contains(hookFormats, h.Format) {
			c.add(joinPath(p, keyFormat), "unknown hook format %q; expected one of %s", h.Format, quoteList(hookFormats))
		}
		c.ref(joinPath(p, keyCommand), h.Command)
		for j, r := range h.Requirements {
			c.ref(indexPath(joinPath(p, keyRequirements), j), r)
		}
		c.gate(p, DependsOn{}, h.Predicates)
	}
	for i, g := range m.Skills {
		if len(g.Extra) == 0 && (g.Source == nil || len(g.Source.Extra) == 0) && len(g.DependsOn.Atoms) == 0 && len(g.Predicates) == 0 {
			continue // nothing to check: no path to spell out
		}
		p := indexPath(keySkills, i)
		c.unknown(p, g.Extra, keyRetiredCrates)
		if g.Source != nil {
			c.unknown(joinPath(p, keySource), g.Source.Extra, keyCrate, keyRetiredCratePath)
		}
		c.gate(p, g.DependsOn, g.Predicates)
	}
	for i, s := range m.MCPServers {
		p := indexPath(keyMCPServers, i)
		switch s.Type {
		case "http", "sse":
			if s.Name == "" || s.URL == "" || s.Headers == nil {
				c.add(p, "an MCP server with type = %q needs name, url and headers", s.Type)
			}
		default:
			if s.Name == "" || s.Command == "" || s.Args == nil || s.Env == nil {
				c.add(p, "an MCP server needs name, command, args and env (stdio), or type = \"http\" or \"sse\" with name, url and headers")
			}
		}
		for j, nv := range s.Env {
			switch {
			case nv.Name == "":
				c.add(indexPath(joinPath(p, keyEnv), j), "an environment entry needs a name")
			case !nv.hasValue():
				c.add(indexPath(joinPath(p, keyEnv), j), "an environment entry needs a value (\"\" for an empty one)")
			}
		}
		for j, nv := range s.Headers {
			switch {
			case nv.Name == "":
				c.add(indexPath(joinPath(p, keyHeaders), j), "a header needs a name")
			case !nv.hasValue():
				c.add(indexPath(joinPath(p, keyHeaders), j), "a header needs a value (\"\" for an empty one)")
			}
		}
		c.gate(p, s.DependsOn, s.Predicates)
	}
	for name := range keys(m.Subcommand) {
		s := m.Subcommand[name]
		p := joinPath(keySubcommand, name)
		c.unknown(p, s.Extra, keyRetiredCrates)
		switch {
		case s.Description == "":
			c.add(p, "subcommand %q needs a description", name)
		case s.Command.IsZero():
			c.add(p, "subcommand %q needs a command (an installation name or an inline installation table)", name)
		}
		if s.Audience != "" && !slices.Contains(audiences, s.Audience) {
			c.add(joinPath(p, keyAudience), "unknown audience %q; expected \"humans\" or \"agents\"", s.Audience)
		}
		c.ref(joinPath(p, keyCommand), s.Command)
		c.gate(p, s.DependsOn, s.Predicates)
	}
	for i, pd := range m.Predicate {
		p := indexPath(keyPredicate, i)
		c.unknown(p, pd.Extra)
		switch {
		case pd.Name == "":
			c.add(p, "a custom predicate needs a name")
		case pd.Command.IsZero():
			c.add(p, "custom predicate %q needs a command", pd.Name)
		}
		c.ref(joinPath(p, keyCommand), pd.Command)
	}
	for i, r := range m.Plugins {
		p := indexPath(keyPlugins, i)
		c.unknown(p, r.Extra)
		if r.Source == nil {
			c.add(p, "a chained plugin reference needs a source table with source.cargo")
		} else {
			c.unknown(joinPath(p, keySource), r.Source.Extra)
		}
		c.gate(p, r.DependsOn, r.Predicates)
	}
	sortProblemsByLine(c.problems)
	return c.problems
}

// unknown reports keys of a strict table other than the allowed retired
// ones (which validation reports with a migration hint).
func (c *checker) unknown(path string, extra map[string]any, retired ...string) {
	for k := range keys(extra) {
		if slices.Contains(retired, k) {
			continue
		}
		fp := joinPath(path, k)
		where := "this table"
		if path == "" {
			where = "a manifest"
		}
		if msg, ok := retiredHint(path, k, extra[k]); ok {
			c.add(fp, "%s", msg)
			continue
		}
		if hint, ok := unknownHints[k]; ok {
			c.add(fp, "unknown key %q in %s; did you mean %q?", k, where, hint)
			continue
		}
		if path != "" && (k == keyPath || k == keyGit) && c.isSkillGroup(path) {
			c.add(fp, "unknown key %q in a skills group; write source.%s", k, k)
			continue
		}
		c.add(fp, "unknown key %q in %s", k, where)
	}
}

// retiredHint explains keys of older manifest formats still found in
// registries: the top-level `where.crates` table and a chained reference's
// `source.crate`.
func retiredHint(path, key string, v any) (string, bool) {
	switch {
	case path == "" && key == keyRetiredWhere:
		if t, ok := v.(map[string]any); ok {
			if crates, ok := t[keyRetiredCrates]; ok {
				return fmt.Sprintf("where.crates was retired: write depends-on = %s", tomlInline(crates)), true
			}
		}
		return "the where table was retired: gate the plugin with depends-on and predicates", true
	case key == keyCrate && strings.HasPrefix(path, "plugins[") && strings.HasSuffix(path, "].source"):
		return fmt.Sprintf("source.crate was renamed: write source.cargo = %s", tomlInline(v)), true
	}
	return "", false
}

func (c *checker) isSkillGroup(path string) bool {
	var i int
	n, _ := fmt.Sscanf(path, "skills[%d]", &i)
	return n == 1 && path == indexPath(keySkills, i)
}

// ref checks the gates inside an inline installation (there are none) and
// recurses into its requirements: inline tables ignore unknown keys, so only
// the nested shapes are checked here.
func (c *checker) ref(path string, r InstallRef) {
	if r.Inline != nil {
		c.installationRefs(path, r.Inline)
	}
}

func (c *checker) installationRefs(path string, in *Installation) {
	for j, r := range in.Requirements {
		c.ref(indexPath(joinPath(path, keyRequirements), j), r)
	}
}

// gate parses every atom and predicate of an item's gate.
func (c *checker) gate(path string, d DependsOn, predicates []string) {
	for i, a := range d.Atoms {
		fp := joinPath(path, keyDependsOn)
		if !d.Single {
			fp = indexPath(fp, i)
		}
		if _, err := predicate.ParseAtom(a); err != nil {
			c.add(fp, "%v", err)
		}
	}
	for i, s := range predicates {
		if _, err := predicate.Parse(s); err != nil {
			c.add(indexPath(joinPath(path, keyPredicates), i), "%v", err)
		}
	}
}

func quoteList(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s)
	}
	return out
}
