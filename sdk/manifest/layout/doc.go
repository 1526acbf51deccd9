// Package layout is the layout of a Symposium plugin registry: which
// directories are entries ([Classify], [Enumerate]: a plugin holds
// SYMPOSIUM.toml, a bare skill holds SKILL.md), the plugin a bare skill
// entry stands for ([SkillPlugin]), and checking what a registry or plugin
// maintainer points at, a manifest file, a plugin directory or a whole
// registry ([CheckPath], behind `symposium-pm validate`).
package layout
