// Package manifest is Symposium's plugin manifest (the SYMPOSIUM.toml
// schema), exactly, in Go.
//
// It provides:
//
//   - the raw schema as typed Go values ([Manifest] and the tables it holds),
//     decoded from TOML ([DecodeTOML]) or JSON ([DecodeJSON]) and encoded back
//     ([EncodeTOML], [Manifest.WireJSON]) with the exact key spellings of the
//     upstream schema (`depends-on`, `mcp_servers`, `install_commands`,
//     singular `subcommand` and `predicate`, ...). Keys the typed view does not
//     know are kept in each table's Extra map, so TOML → JSON → TOML → JSON is
//     stable and a host can report them;
//   - validation ([Validate]) with the upstream rules and error order, returning
//     the validated view ([Plugin], whose gates are parsed predicates,
//     [ParseGate]) and positioned [Problem]s;
//   - the layered merge every PM uses for package-embedded plugins
//     ([Embedded]).
//
// The other jobs live in packages of their own, so a program imports only
// what it uses:
//
//   - [github.com/symposium-dev/symposium-pm/sdk/manifest/predicate]: the
//     predicate language and its evaluation (the host supplies the runner
//     of shell() predicates);
//   - [github.com/symposium-dev/symposium-pm/sdk/manifest/skill]: SKILL.md
//     front matter and the bounded walk of skill groups;
//   - [github.com/symposium-dev/symposium-pm/sdk/manifest/layout]: the
//     registry layout (entries, bare-skill plugins) and checking what a
//     maintainer points at (`symposium-pm validate`);
//   - [github.com/symposium-dev/symposium-pm/sdk/manifest/migrate]: rewriting
//     retired keys in place.
//
// # Decoding versus validation
//
// Decoding fails only on syntax errors and on known keys holding a value of
// the wrong type (a string where an array is required, ...): a typed value
// cannot hold those. Everything else, including unknown keys in tables that
// reject them, bad dependency atoms and bad predicates, is kept by the
// decoder and reported by [Validate], whose first problem is the one
// Symposium would report first: parse-level problems (unknown keys, atoms,
// predicates, in document order) come before the validation pipeline
// (in Symposium's order).
//
// # Origins and default skill groups
//
// [Validate] applies the rules of the manifest's [Origin]. A registry
// manifest must be named, may not carry `[defaults]`, and is dormant
// (Plugin.RequiresUse) when nothing in it mentions a dependency. A workspace
// manifest gets the `skills` group (and `.agents/skills` gated by
// workspace-member() when agents-syncing) unless `[defaults] skills =
// false`. A package-embedded manifest gets its default `skills` group from
// [Embedded], in the PM, so it is on the wire; validation with
// [OriginPackage] adds nothing more.
//
// # Line numbers
//
// The TOML decoder does not expose key positions, so [DecodeTOML] runs a
// small scanner over the accepted document to map each field path to its
// line; [Manifest.Line] answers for a path or its nearest recorded parent.
// Manifests decoded from JSON have no lines.
//
// # Deliberate differences from Symposium
//
// Symposium silently drops an installation's source when its tagged fields do
// not parse (an unknown kind such as "binary" or "local", a missing `crate`, a
// typo'd key next to `source`). This package reports each of those as a hard
// error instead, and also a cargo/github key (crate, version, global, url)
// given without any source. An empty string is treated as an absent key
// (`name = ""` is a missing name).
//
// Dependency atoms and predicates differ from Symposium as package
// predicate says.
//
// Legacy keys still found in registries get migration hints: `crates`,
// `where.crates`, `source = "crate"`, `source.crate`, `source.crate_path`,
// `[[plugins]] source.crate`, `crate(...)`, and SKILL.md `crates:`. A broken
// SKILL.md inside a plugin's skill group fails `symposium-pm validate`
// (Symposium skips the skill with a warning); so does a directory holding a
// wrongly cased Symposium.toml or skill.md.
package manifest
