package layout

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// EntryKind says what makes a directory a registry entry.
type EntryKind int

const (
	// EntryPlugin is a directory with a SYMPOSIUM.toml.
	EntryPlugin EntryKind = iota + 1
	// EntrySkill is a directory with a SKILL.md and no SYMPOSIUM.toml.
	EntrySkill
)

// String names the kind.
func (k EntryKind) String() string {
	switch k {
	case EntryPlugin:
		return "plugin"
	case EntrySkill:
		return "skill"
	}
	return fmt.Sprintf("EntryKind(%d)", int(k))
}

// Entry is one registry entry.
type Entry struct {
	// Path is the entry directory relative to the registry root, with '/'
	// separators; it is the entry's id key.
	Path string
	// Kind says whether the entry is a plugin or a bare skill.
	Kind EntryKind
}

// Classify reports whether dir is a registry entry: a plugin when it holds a
// regular file SYMPOSIUM.toml (this wins), else a bare skill when it holds a
// regular file SKILL.md. Symbolic links are followed.
func Classify(dir string) (EntryKind, bool) {
	if isFile(filepath.Join(dir, manifest.ManifestFile)) {
		return EntryPlugin, true
	}
	if isFile(filepath.Join(dir, skill.File)) {
		return EntrySkill, true
	}
	return 0, false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Enumerate lists the entries of a registry directory (docs/manifests.md §9.2): the
// directories under root that classify as entries, found by walking child
// directories (following symbolic links, hidden ones included) without
// descending into an entry, sorted by path component-wise. A missing or
// unreadable root yields no entries and no error; a root that is itself an
// entry is an error, since a registry must contain entries, not be one.
func Enumerate(root string) ([]Entry, error) {
	if kind, ok := Classify(root); ok {
		if kind == EntryPlugin {
			return nil, fmt.Errorf("%s: the registry root holds %s itself; a registry must contain plugin directories, not be one", root, manifest.ManifestFile)
		}
		return nil, fmt.Errorf("%s: the registry root holds %s itself; a registry must contain skill directories, not be one", root, skill.File)
	}
	var out []Entry
	visited := map[string]bool{}
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if visited[real] {
				return // a symlink cycle
			}
			visited[real] = true
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, de := range des {
			p := filepath.Join(dir, de.Name())
			if !isDir(de, p) {
				continue
			}
			r := de.Name()
			if rel != "" {
				r = rel + "/" + de.Name()
			}
			if kind, ok := Classify(p); ok {
				out = append(out, Entry{Path: r, Kind: kind})
				continue
			}
			walk(p, r)
		}
	}
	walk(root, "")
	slices.SortFunc(out, func(a, b Entry) int { return comparePaths(a.Path, b.Path) })
	return out, nil
}

// isDir reports whether a directory entry is a directory, following links.
func isDir(de fs.DirEntry, p string) bool {
	if de.IsDir() {
		return true
	}
	if de.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// comparePaths orders slash-separated paths component by component.
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// SkillPlugin builds the manifest of a bare-skill registry entry
// (docs/manifests.md §9.2): named after the skill (or dirName, the entry directory's
// name, when the front matter has no name), gated by the skill's
// `depends-on` and `predicates` hoisted to the plugin level, with one skill
// group `source.path = "."`. Whether it is dormant is decided by [manifest.Validate]
// with [manifest.OriginRegistry].
func SkillPlugin(dirName string, s *skill.Skill) *manifest.Manifest {
	m := &manifest.Manifest{Name: dirName}
	if s == nil {
		s = &skill.Skill{}
	}
	if s.Name != "" {
		m.Name = s.Name
	}
	if len(s.DependsOn) > 0 {
		m.DependsOn = manifest.Atoms(s.DependsOn...)
	}
	if len(s.Predicates) > 0 {
		m.Predicates = append([]string{}, s.Predicates...)
	}
	m.Skills = []manifest.SkillGroup{{Source: &manifest.SkillSource{Path: "."}}}
	return m
}
