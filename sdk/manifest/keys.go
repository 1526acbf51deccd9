package manifest

// The schema's key names, each spelled once: encoding, validation and the
// hint tables use these constants. (The decoder still spells them in its
// switch statements.)
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
