package manifest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// MarkerFile marks an installed copy of a skill; directories holding it are
// skipped when scanning skill groups.
const MarkerFile = ".symposium"

// ScanSkills lists the SKILL.md files of a skill group directory (reference
// §6.5): every regular file named SKILL.md at any depth, skipping
// directories that hold a .symposium marker, then dropping any whose
// directory lies inside the directory of a shallower one. A missing
// directory yields none. Paths are absolute when dir is. The walk is
// [WalkSkills] with the default bounds, inside dir opened as an os.Root: a
// symbolic link leading out of dir is not followed.
func ScanSkills(dir string) []string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	res := WalkSkills(context.Background(), root, []string{"."}, WalkLimits{})
	out := make([]string, len(res.Skills))
	for i, f := range res.Skills {
		out[i] = filepath.Join(dir, f)
	}
	// Shallowest first, then by name, as Symposium lists them.
	depth := func(p string) int { return strings.Count(filepath.ToSlash(p), "/") }
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(depth(a)-depth(b), strings.Compare(a, b)) })
	return out
}

// Report is the result of checking one plugin: a manifest file, a plugin
// directory or one entry of a registry.
type Report struct {
	// File is the file checked (a SYMPOSIUM.toml, a SKILL.md or a JSON wire
	// manifest), as reached from the path the caller gave.
	File string `json:"file"`
	// Entry is the registry entry key when a registry was checked.
	Entry string `json:"entry,omitempty"`
	// Kind is "plugin" or "skill".
	Kind string `json:"kind"`
	// Name is the plugin name, when known.
	Name string `json:"name,omitempty"`
	// Valid is false when any problem is an error.
	Valid bool `json:"valid"`
	// RequiresUse marks a dormant registry plugin.
	RequiresUse bool `json:"requires_use,omitempty"`
	// Skills are the SKILL.md files found in the plugin's source.path
	// groups, each with its skill name when it parsed.
	Skills []SkillReport `json:"skills,omitempty"`
	// Problems are the errors and warnings, errors first in reference order.
	Problems []Problem `json:"problems,omitempty"`
	// Plugin is the validated plugin, nil when invalid.
	Plugin *Plugin `json:"-"`
}

// SkillReport is one skill found while checking a plugin.
type SkillReport struct {
	File string `json:"file"`
	Name string `json:"name,omitempty"`
}

// CheckOptions configures [CheckPath].
type CheckOptions struct {
	// Origin is the rule set for manifest files and plugin directories
	// (default OriginRegistry). Registry entries always use OriginRegistry.
	Origin Origin
	// DefaultName is the name for workspace and package origins; the
	// directory name when empty.
	DefaultName string
}

// CheckPath checks what a registry or plugin maintainer points at (the
// `symposium-pm validate` command, like Symposium's `plugin validate`): a
// manifest file (SYMPOSIUM.toml or any TOML manifest, a JSON wire manifest,
// or a SKILL.md), a plugin directory (one holding SYMPOSIUM.toml or
// SKILL.md), or a registry directory, whose entries are enumerated with the
// registry layout rules. A registry with no entries is an error. For each
// plugin, the SKILL.md files of its source.path groups are parsed strictly
// (lenient for the workspace origin) and a group without any is a warning.
// The error is for a path that cannot be read at all.
func CheckPath(path string, opts CheckOptions) ([]Report, error) {
	if opts.Origin == 0 {
		opts.Origin = OriginRegistry
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []Report{checkFile(path, "", opts)}, nil
	}
	if kind, ok := Classify(path); ok {
		return []Report{checkEntry(path, "", kind, opts)}, nil
	}
	entries, err := Enumerate(path)
	if err != nil {
		return nil, err
	}
	misnamed := misnamedFiles(path)
	if len(entries) == 0 && len(misnamed) == 0 {
		return nil, fmt.Errorf("%s: no plugins found: a registry holds directories with %s or %s", path, ManifestFile, SkillFile)
	}
	reports := make([]Report, 0, len(entries))
	regOpts := CheckOptions{Origin: OriginRegistry}
	for _, e := range entries {
		reports = append(reports, checkEntry(filepath.Join(path, filepath.FromSlash(e.Path)), e.Path, e.Kind, regOpts))
	}
	for _, f := range misnamed {
		want := ManifestFile
		kind := EntryPlugin
		if strings.EqualFold(filepath.Base(f), SkillFile) {
			want, kind = SkillFile, EntrySkill
		}
		rel, _ := filepath.Rel(path, filepath.Dir(f))
		reports = append(reports, Report{File: f, Entry: filepath.ToSlash(rel), Kind: kind.String(), Problems: []Problem{{
			File:    f,
			Message: fmt.Sprintf("the file must be named exactly %s; Symposium does not read this directory as a plugin", want),
		}}})
	}
	slices.SortStableFunc(reports, func(a, b Report) int { return comparePaths(a.Entry, b.Entry) })
	return reports, nil
}

// misnamedFiles finds, in the directories of a registry that are not
// entries, files named like SYMPOSIUM.toml or SKILL.md in another case
// (Symposium.toml, skill.md): plugins their authors meant but Symposium
// does not see.
func misnamedFiles(root string) []string {
	var out []string
	visited := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if visited[real] {
				return
			}
			visited[real] = true
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, de := range des {
			p := filepath.Join(dir, de.Name())
			if isDir(de, p) {
				if _, ok := Classify(p); !ok {
					walk(p)
				}
				continue
			}
			n := de.Name()
			if dir != root && n != ManifestFile && n != SkillFile && (strings.EqualFold(n, ManifestFile) || strings.EqualFold(n, SkillFile)) {
				out = append(out, p)
			}
		}
	}
	walk(root)
	return out
}

func checkEntry(dir, entry string, kind EntryKind, opts CheckOptions) Report {
	name := ManifestFile
	if kind == EntrySkill {
		name = SkillFile
	}
	r := checkFile(filepath.Join(dir, name), entry, opts)
	return r
}

func checkFile(file, entry string, opts CheckOptions) Report {
	r := Report{File: file, Entry: entry, Kind: EntryPlugin.String()}
	fail := func(ps ...Problem) Report {
		for i := range ps {
			ps[i].File = file
		}
		r.Problems = append(r.Problems, ps...)
		return r
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fail(Problem{Message: err.Error()})
	}
	dir := filepath.Dir(file)
	vopts := ValidateOptions{Origin: opts.Origin, DefaultName: opts.DefaultName, File: file}
	if vopts.DefaultName == "" {
		if abs, err := filepath.Abs(dir); err == nil {
			vopts.DefaultName = filepath.Base(abs)
		}
	}
	var m *Manifest
	switch {
	case filepath.Base(file) == SkillFile:
		r.Kind = EntrySkill.String()
		s, err := ParseSkillMD(data, true)
		if err != nil {
			return fail(skillProblem(file, err))
		}
		dirName := filepath.Base(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			dirName = filepath.Base(abs)
		}
		m = SynthesizeSkillPlugin(dirName, s)
		vopts.File = file
	case strings.EqualFold(filepath.Ext(file), ".json"):
		m, err = DecodeJSON(data)
	default:
		m, err = DecodeTOML(data)
	}
	if err != nil {
		var ps Problems
		if errors.As(err, &ps) {
			return fail(ps...)
		}
		return fail(Problem{Message: err.Error()})
	}
	r.Name = m.Name
	p, ps := Validate(m, vopts)
	r.Problems = ps
	if p == nil {
		return r
	}
	r.Plugin, r.Valid, r.Name, r.RequiresUse = p, true, p.Name, p.RequiresUse
	strict := opts.Origin != OriginWorkspace
	// Every look inside the plugin goes through its directory opened as an
	// os.Root: a link leading out of it is a problem, never followed.
	root, err := os.OpenRoot(dir)
	if err != nil {
		r.Valid, r.Plugin = false, nil
		return fail(Problem{Message: fmt.Sprintf("opening the plugin directory %s: %v", dir, pathCause(err))})
	}
	defer root.Close()
	for i, g := range p.Skills {
		if g.Path == "" {
			continue // git groups are fetched by the host, not checked here
		}
		field := indexPath("skills", i)
		rel := filepath.FromSlash(g.Path)
		walk := WalkSkills(context.Background(), root, []string{rel}, WalkLimits{})
		for _, pr := range walk.Problems {
			r.Valid, r.Plugin = false, nil
			r.Problems = append(r.Problems, Problem{File: file, Line: m.Line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: %s", g.Path, pr)})
		}
		if more := walk.NProblems - len(walk.Problems); more > 0 {
			r.Problems = append(r.Problems, Problem{File: file, Line: m.Line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: %d more entries left out", g.Path, more)})
		}
		if walk.Bound != "" || walk.Deep != "" {
			r.Valid, r.Plugin = false, nil
			r.Problems = append(r.Problems, Problem{File: file, Line: m.Line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: the walk stopped at %s", g.Path, cmp.Or(walk.Bound, "the depth bound, at "+walk.Deep))})
		}
		if len(walk.Skills) == 0 && walk.NProblems == 0 {
			r.Problems = append(r.Problems, Problem{File: file, Line: m.Line(field), Field: field, Warning: true,
				Message: fmt.Sprintf("skill group %q contains no %s", g.Path, SkillFile)})
			continue
		}
		for _, rf := range walk.Skills {
			f := filepath.Join(dir, rf)
			data, err := pkgfile.ReadRoot(root, rf, MaxSkillFileSize)
			if err == nil {
				var s *Skill
				if s, err = ParseSkillMD(data, strict); err == nil {
					name := s.Name
					if name == "" {
						name = filepath.Base(filepath.Dir(f))
					}
					r.Skills = append(r.Skills, SkillReport{File: f, Name: name})
					continue
				}
			}
			r.Valid = false
			r.Plugin = nil
			r.Problems = append(r.Problems, skillProblem(f, err))
		}
	}
	return r
}

func skillProblem(file string, err error) Problem {
	var se *SkillError
	if errors.As(err, &se) {
		return se.Problem(file)
	}
	// The problem names the file; pkgfile's errors name it too.
	return Problem{File: file, Message: strings.TrimPrefix(err.Error(), file+": ")}
}
