// Package skilltree finds the skills of a plugin: the SKILL.md files of its
// skill groups ([Walk], [Scan], [Embeds]), walked as Symposium scans them
// (every SKILL.md at any depth, skipping directories marked as installed
// copies) but inside the plugin root opened as an os.Root and within depth,
// entry and time bounds ([Limits]): a symbolic link leading out of the root
// is reported, never followed.
//
// It reads no SKILL.md: package skill, which parses their front matter
// with a YAML parser, repeats this API for its callers. A PM that only
// asks whether a package embeds skills imports this package and does not
// link the YAML parser, whose initialization (with the larger binary it
// makes) cost every PM process about 1.5 ms of CPU and 48 page faults.
package skilltree
