package manifest

// ManifestFile is the exact file name of a plugin manifest.
const ManifestFile = "SYMPOSIUM.toml"

// Manifest is a raw, unvalidated plugin manifest: the SYMPOSIUM.toml schema
// (docs/manifests.md §2). Zero values and nil slices mean "absent"; a non-nil empty
// slice is an explicitly empty list and is encoded as such. Every table keeps
// the keys it does not know in Extra.
type Manifest struct {
	// Name is the plugin name (`name`).
	Name string
	// DependsOn is the top-level `depends-on` gate.
	DependsOn DependsOn
	// Predicates are the top-level function-call predicates (`predicates`).
	Predicates []string
	// Defaults is the `[defaults]` table.
	Defaults *Defaults
	// Installations are the `[[installations]]` tables.
	Installations []Installation
	// Hooks are the `[[hooks]]` tables.
	Hooks []Hook
	// Skills are the `[[skills]]` skill groups.
	Skills []SkillGroup
	// MCPServers are the `[[mcp_servers]]` tables.
	MCPServers []MCPServer
	// Subcommand maps a subcommand name to its `[subcommand.<name>]` body.
	Subcommand map[string]Subcommand
	// Predicate are the `[[predicate]]` custom predicate definitions.
	Predicate []PredicateDef
	// Plugins are the `[[plugins]]` chained plugin references.
	Plugins []PluginRef
	// Extra holds top-level keys the typed view does not know, including the
	// retired `crates`.
	Extra map[string]any

	// lines maps field paths to TOML line numbers when decoded from TOML,
	// worked out on first use (most manifests never need a line).
	lines *tomlLines
}

// DependsOn is the value of a `depends-on` key: one dependency atom written as
// a string, or a list of atoms (OR). The zero value is absent.
type DependsOn struct {
	// Atoms are the atoms as written (each parsed by [ParseAtom]).
	Atoms []string
	// Single records that the value was written as one string rather than an
	// array; it is encoded back the same way when there is exactly one atom.
	Single bool
}

// Atoms returns a `depends-on` list of the given atoms.
func Atoms(atoms ...string) DependsOn {
	return DependsOn{Atoms: append([]string{}, atoms...)}
}

// IsZero reports whether the key is absent.
func (d DependsOn) IsZero() bool { return d.Atoms == nil && !d.Single }

// Defaults is the `[defaults]` table.
type Defaults struct {
	// Skills controls the origin's default skill groups (`skills`, default
	// true).
	Skills *bool
	// Extra holds unknown keys (rejected by validation).
	Extra map[string]any
}

// SkillGroup is one `[[skills]]` table: a gated directory of skills.
type SkillGroup struct {
	DependsOn  DependsOn
	Predicates []string
	// Source says where the skills are; nil when absent.
	Source *SkillSource
	// Extra holds unknown keys, including the retired `crates`.
	Extra map[string]any
}

// SkillSource is a skill group's `source` table: exactly one of Path and Git
// is valid.
type SkillSource struct {
	// Path is a directory relative to the manifest's directory.
	Path string
	// Git is a GitHub URL, optionally with /tree/<ref>/<subdir>.
	Git string
	// Scalar is set when `source` was written as a plain string (the retired
	// `source = "crate"` form). It is never valid; it is kept so validation
	// can report it with a migration hint.
	Scalar string
	// Extra holds the other keys of the table, including the retired
	// `crate` and `crate_path`.
	Extra map[string]any

	// pathSet and gitSet record that a decoded table has a path or git key,
	// which an empty Path or Git does not tell: an empty path is present
	// (the plugin root) and excludes git.
	pathSet, gitSet bool
}

// hasPath reports whether s has a path: a path key when decoded, a
// nonempty Path when built in code.
func (s *SkillSource) hasPath() bool { return s.pathSet || s.Path != "" }

// hasGit reports whether s has a git key or a nonempty Git.
func (s *SkillSource) hasGit() bool { return s.gitSet || s.Git != "" }

// PluginRef is one `[[plugins]]` table: a chained reference to another
// package's plugin.
type PluginRef struct {
	DependsOn  DependsOn
	Predicates []string
	// Source names the package; nil when absent.
	Source *PluginSource
	// Extra holds unknown keys.
	Extra map[string]any
}

// PluginSource is a chained reference's `source` table.
type PluginSource struct {
	// Cargo is `source.cargo`; nil when absent.
	Cargo *CargoRef
	// Git and Path are the reserved `source.git` and `source.path` keys,
	// kept as written (rejected by validation).
	Git, Path any
	// Extra holds unknown keys.
	Extra map[string]any
}

// CargoRef is the value of `source.cargo`: a dependency atom string (Atom),
// a `{name, version}` table (Name, Version), or anything else (Other, kept
// as written and rejected by validation).
type CargoRef struct {
	Atom    string
	Name    string
	Version string
	Other   any
}

// Installation is one `[[installations]]` table, or an inline installation
// table (where Name is ignored). Unknown keys are ignored by Symposium; they
// are kept in Extra.
type Installation struct {
	Name            string
	Source          string // "cargo", "github" or empty
	Crate           string
	Version         string
	Git             string
	Global          *bool
	URL             string
	Executable      string
	Script          string
	Args            []string
	Requirements    []InstallRef
	InstallCommands []string
	Extra           map[string]any
}

// InstallRef references an installation: by Name (a string) or as an inline
// installation table (Inline). The zero value is absent.
type InstallRef struct {
	Name   string
	Inline *Installation
}

// IsZero reports whether the reference is absent.
func (r InstallRef) IsZero() bool { return r.Name == "" && r.Inline == nil }

// Hook is one `[[hooks]]` table.
type Hook struct {
	Name         string
	Event        string
	Agent        string
	Matcher      string
	Command      InstallRef
	Executable   string
	Script       string
	Args         []string
	Requirements []InstallRef
	Format       string
	Predicates   []string
	Extra        map[string]any
}

// MCPServer is one `[[mcp_servers]]` table: a gate plus an Agent Client
// Protocol MCP server description, tagged by Type ("http", "sse", or empty
// for stdio).
type MCPServer struct {
	DependsOn  DependsOn
	Predicates []string
	Type       string
	Name       string
	Command    string
	Args       []string
	Env        []NameValue
	URL        string
	Headers    []NameValue
	// Meta is the opaque `_meta` value.
	Meta  any
	Extra map[string]any
}

// NameValue is an MCP server environment variable or HTTP header.
type NameValue struct {
	Name  string
	Value string
	Meta  any
	Extra map[string]any

	// valueSet records that a decoded entry has a value key, which an
	// empty Value does not tell: the schema requires one.
	valueSet bool
}

// hasValue reports whether nv has a value: a value key when decoded, a
// nonempty Value when built in code.
func (nv NameValue) hasValue() bool { return nv.valueSet || nv.Value != "" }

// Subcommand is the body of one `[subcommand.<name>]` table.
type Subcommand struct {
	Description string
	Audience    string // "humans", "agents" or empty (agents)
	Command     InstallRef
	DependsOn   DependsOn
	Predicates  []string
	Extra       map[string]any
}

// PredicateDef is one `[[predicate]]` custom predicate definition.
type PredicateDef struct {
	Name    string
	Command InstallRef
	Args    []string
	Extra   map[string]any
}
