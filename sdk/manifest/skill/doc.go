// Package skill reads Symposium skills: the front matter of a SKILL.md
// ([Parse]: name, description, depends-on, predicates, other fields) and the
// skill groups of a plugin ([Walk], [Scan], [Embeds]), walked as Symposium
// scans them (every SKILL.md at any depth, skipping directories marked as
// installed copies) but inside the plugin root opened as an os.Root and
// within depth, entry and time bounds ([Limits]): a symbolic link leading out
// of the root is reported, never followed.
//
// The walk is package skilltree's, repeated here. Code that only walks, and
// parses no front matter, imports skilltree instead: this package links a
// YAML parser, which every process importing it initializes.
package skill
