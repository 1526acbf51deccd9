package layout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

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
	Problems []manifest.Problem `json:"problems,omitempty"`
	// Plugin is the validated plugin, nil when invalid.
	Plugin *manifest.Plugin `json:"-"`
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
	Origin manifest.Origin
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
		opts.Origin = manifest.OriginRegistry
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []Report{checkFile(nil, path, "", opts)}, nil
	}
	if kind, ok := Classify(path); ok {
		return []Report{checkEntry(nil, path, "", kind, opts)}, nil
	}
	entries, err := Enumerate(path)
	if err != nil {
		return nil, err
	}
	misnamed := misnamedFiles(path)
	if len(entries) == 0 && len(misnamed) == 0 {
		return nil, fmt.Errorf("%s: no plugins found: a registry holds directories with %s or %s", path, manifest.ManifestFile, skill.File)
	}
	// The entries' manifests are read through the registry opened as a
	// root: a link between entries is followed, one leading out of the
	// registry is not.
	reg, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	reports := make([]Report, 0, len(entries))
	regOpts := CheckOptions{Origin: manifest.OriginRegistry}
	for _, e := range entries {
		reports = append(reports, checkEntry(reg, filepath.Join(path, filepath.FromSlash(e.Path)), e.Path, e.Kind, regOpts))
	}
	for _, f := range misnamed {
		want := manifest.ManifestFile
		kind := EntryPlugin
		if strings.EqualFold(filepath.Base(f), skill.File) {
			want, kind = skill.File, EntrySkill
		}
		rel, _ := filepath.Rel(path, filepath.Dir(f))
		reports = append(reports, Report{File: f, Entry: filepath.ToSlash(rel), Kind: kind.String(), Problems: []manifest.Problem{{
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
			if dir != root && n != manifest.ManifestFile && n != skill.File && (strings.EqualFold(n, manifest.ManifestFile) || strings.EqualFold(n, skill.File)) {
				out = append(out, p)
			}
		}
	}
	walk(root)
	return out
}

// checkEntry checks the entry at dir; reg, when not nil, is the registry
// holding it as entry, opened as a root.
func checkEntry(reg *os.Root, dir, entry string, kind EntryKind, opts CheckOptions) Report {
	name := manifest.ManifestFile
	if kind == EntrySkill {
		name = skill.File
	}
	r := checkFile(reg, filepath.Join(dir, name), entry, opts)
	return r
}

// readManifest reads a plugin's manifest file as PMs and the host read one:
// a regular file (never a FIFO or a device) of at most
// [pkgfile.MaxManifest] bytes, through reg when it is not nil (file is then
// entry's), else through the file's own directory, so that a link leading
// out of it is refused, not followed.
func readManifest(reg *os.Root, file, entry string) ([]byte, error) {
	if reg != nil {
		return pkgfile.ReadRoot(reg, path.Join(entry, filepath.Base(file)), pkgfile.MaxManifest)
	}
	return pkgfile.ReadFile(filepath.Dir(file), filepath.Base(file), pkgfile.MaxManifest)
}

// checkFile checks the manifest file of a plugin: entry's in the registry
// reg when reg is not nil.
func checkFile(reg *os.Root, file, entry string, opts CheckOptions) Report {
	r := Report{File: file, Entry: entry, Kind: EntryPlugin.String()}
	fail := func(ps ...manifest.Problem) Report {
		for i := range ps {
			ps[i].File = file
		}
		r.Problems = append(r.Problems, ps...)
		return r
	}
	data, err := readManifest(reg, file, entry)
	if err != nil {
		return fail(manifest.Problem{Message: "cannot be read: " + pkgfile.Cause(err)})
	}
	dir := filepath.Dir(file)
	vopts := manifest.ValidateOptions{Origin: opts.Origin, DefaultName: opts.DefaultName, File: file}
	if vopts.DefaultName == "" {
		if abs, err := filepath.Abs(dir); err == nil {
			vopts.DefaultName = filepath.Base(abs)
		}
	}
	var m *manifest.Manifest
	switch {
	case filepath.Base(file) == skill.File:
		r.Kind = EntrySkill.String()
		s, err := skill.Parse(data, true)
		if err != nil {
			return fail(skillProblem(file, err))
		}
		dirName := filepath.Base(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			dirName = filepath.Base(abs)
		}
		m = SkillPlugin(dirName, s)
		vopts.File = file
	case strings.EqualFold(filepath.Ext(file), ".json"):
		m, err = manifest.DecodeJSON(data)
	default:
		m, err = manifest.DecodeTOML(data)
	}
	if err != nil {
		var ps manifest.Problems
		if errors.As(err, &ps) {
			return fail(ps...)
		}
		return fail(manifest.Problem{Message: err.Error()})
	}
	r.Name = m.Name
	p, ps := manifest.Validate(m, vopts)
	r.Problems = ps
	if p == nil {
		return r
	}
	r.Plugin, r.Valid, r.Name, r.RequiresUse = p, true, p.Name, p.RequiresUse
	strict := opts.Origin != manifest.OriginWorkspace
	// Every look inside the plugin goes through its directory opened as an
	// os.Root: a link leading out of it is a problem, never followed.
	root, err := os.OpenRoot(dir)
	if err != nil {
		r.Valid, r.Plugin = false, nil
		return fail(manifest.Problem{Message: fmt.Sprintf("opening the plugin directory %s: %v", dir, pkgfile.Cause(err))})
	}
	defer root.Close()
	CheckSkills(context.Background(), &r, root, p, SkillCheck{File: file, Manifest: m, Strict: strict, WarnEmpty: true})
	return r
}

// SkillCheck says how [CheckSkills] reports.
type SkillCheck struct {
	// File is the manifest file the problems of a skill group are
	// reported against, and Manifest, when not nil, gives their lines.
	File     string
	Manifest *manifest.Manifest
	// Strict parses SKILL.md front matter strictly (every origin but the
	// workspace's).
	Strict bool
	// WarnEmpty warns about a skill group holding no SKILL.md (not wanted
	// for the default skills/ group a package gets without asking).
	WarnEmpty bool
}

// CheckSkills checks the local skill groups of the plugin p rooted at the
// directory opened as root, as Symposium and the PMs walk them: through
// root, so that a link leading out of it is a problem and never followed,
// each SKILL.md a regular file of at most [skill.MaxFileSize] bytes. The
// skills found are added to r; every problem is added to r, and any but a
// warning makes r invalid.
func CheckSkills(ctx context.Context, r *Report, root *os.Root, p *manifest.Plugin, c SkillCheck) {
	line := func(field string) int {
		if c.Manifest == nil {
			return 0
		}
		return c.Manifest.Line(field)
	}
	dir := root.Name()
	invalid := func(ps ...manifest.Problem) {
		r.Valid, r.Plugin = false, nil
		r.Problems = append(r.Problems, ps...)
	}
	for i, g := range p.Skills {
		if g.Path == "" {
			continue // git groups are fetched by the host, not checked here
		}
		field := fmt.Sprintf("skills[%d]", i)
		rel := filepath.FromSlash(g.Path)
		walk := skill.Walk(ctx, root, []string{rel}, skill.Limits{})
		for _, pr := range walk.Problems {
			invalid(manifest.Problem{File: c.File, Line: line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: %s", g.Path, pr)})
		}
		if more := walk.NProblems - len(walk.Problems); more > 0 {
			r.Problems = append(r.Problems, manifest.Problem{File: c.File, Line: line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: %d more entries left out", g.Path, more)})
		}
		if walk.Bound != "" || walk.Deep != "" {
			invalid(manifest.Problem{File: c.File, Line: line(field), Field: field,
				Message: fmt.Sprintf("skill group %q: the walk stopped at %s", g.Path, cmp.Or(walk.Bound, "the depth bound, at "+walk.Deep))})
		}
		if len(walk.Skills) == 0 && walk.NProblems == 0 {
			if c.WarnEmpty {
				r.Problems = append(r.Problems, manifest.Problem{File: c.File, Line: line(field), Field: field, Warning: true,
					Message: fmt.Sprintf("skill group %q contains no %s", g.Path, skill.File)})
			}
			continue
		}
		for _, rf := range walk.Skills {
			f := filepath.Join(dir, rf)
			data, err := pkgfile.ReadRoot(root, rf, skill.MaxFileSize)
			if err == nil {
				var s *skill.Skill
				if s, err = skill.Parse(data, c.Strict); err == nil {
					name := s.Name
					if name == "" {
						name = filepath.Base(filepath.Dir(f))
					}
					r.Skills = append(r.Skills, SkillReport{File: f, Name: name})
					continue
				}
			}
			invalid(skillProblem(f, err))
		}
	}
}

func skillProblem(file string, err error) manifest.Problem {
	var se *skill.Error
	if errors.As(err, &se) {
		return se.Problem(file)
	}
	// The problem names the file; pkgfile's errors name it too.
	return manifest.Problem{File: file, Message: "cannot be read: " + pkgfile.Cause(err)}
}
