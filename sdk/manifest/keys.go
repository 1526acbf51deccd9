package manifest

// The schema's key names, each spelled once: decoding, encoding, validation
// and the hint tables use these constants.
const (
	keyName            = "name"
	keyDependsOn       = "depends-on"
	keyPredicates      = "predicates"
	keyDefaults        = "defaults"
	keyInstallations   = "installations"
	keyHooks           = "hooks"
	keySkills          = "skills"
	keyMCPServers      = "mcp_servers"
	keySubcommand      = "subcommand"
	keyPredicate       = "predicate"
	keyPlugins         = "plugins"
	keySource          = "source"
	keyCrate           = "crate"
	keyVersion         = "version"
	keyGit             = "git"
	keyGlobal          = "global"
	keyURL             = "url"
	keyExecutable      = "executable"
	keyScript          = "script"
	keyArgs            = "args"
	keyRequirements    = "requirements"
	keyInstallCommands = "install_commands"
	keyEvent           = "event"
	keyAgent           = "agent"
	keyMatcher         = "matcher"
	keyCommand         = "command"
	keyFormat          = "format"
	keyPath            = "path"
	keyType            = "type"
	keyEnv             = "env"
	keyValue           = "value"
	keyHeaders         = "headers"
	keyMeta            = "_meta"
	keyDescription     = "description"
	keyAudience        = "audience"
	keyCargo           = "cargo"

	// Retired keys, still recognised to give a migration hint.
	keyRetiredCrates    = "crates"
	keyRetiredCratePath = "crate_path"
	keyRetiredWhere     = "where"
)

// The keys package migrate reads and writes, exported for it: the retired
// ones and the current ones they became.
const (
	// KeyDependsOn is the gate of plugins, skill groups and servers.
	KeyDependsOn = keyDependsOn
	// KeyPredicates is the list of predicates of a gate.
	KeyPredicates = keyPredicates
	// KeySkills is the array of skill groups.
	KeySkills = keySkills
	// KeyMCPServers is the array of MCP servers.
	KeyMCPServers = keyMCPServers
	// KeySubcommand is the table of subcommands.
	KeySubcommand = keySubcommand
	// KeyPlugins is the array of plugin references.
	KeyPlugins = keyPlugins
	// KeySource is a skill group's or plugin reference's source.
	KeySource = keySource
	// KeyCargo is a source naming a crate (source.cargo).
	KeyCargo = keyCargo
	// KeyPath is a source's directory (source.path).
	KeyPath = keyPath
	// KeyCrate is the retired source.crate (and source = "crate").
	KeyCrate = keyCrate
	// KeyRetiredCrates is the retired gate, now depends-on.
	KeyRetiredCrates = keyRetiredCrates
	// KeyRetiredCratePath is the retired source.crate_path.
	KeyRetiredCratePath = keyRetiredCratePath
	// KeyRetiredWhere is the retired top-level [where] table.
	KeyRetiredWhere = keyRetiredWhere

	// FuncRetiredCrate and FuncDependsOn are the predicate functions
	// crate(...) and depends-on(...), which share their spelling with the
	// keys: crate(...) was retired with crates.
	FuncRetiredCrate = keyCrate
	FuncDependsOn    = keyDependsOn
)
