package gitregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// indexFormat versions the persisted index; bump it whenever what an index
// holds, or how it is derived, changes.
const indexFormat = 8

// index is every entry of one commit, derived once from its immutable tree
// and persisted beside it (indexfile.go).
type index struct {
	Format  int     `json:"format"`
	Commit  string  `json:"commit"`
	Entries []entry `json:"entries"`
	// Problem is why the registry as a whole offers nothing (its root is
	// itself an entry), or empty.
	Problem string `json:"problem,omitempty"`
	// Answer is the active_plugins answer as encoded, when it is known.
	Answer answer `json:"-"`
}

// answer is the active_plugins answer of a commit, encoded as the JSON array
// of its offers, for the registry name and commit directory it was encoded
// with: the offers' ids carry the name and their roots the directory, so
// the answer is served only when both are the same.
type answer struct {
	Name, Dir string
	// JSON is the answer's bytes, when they were read or encoded; nil when
	// only the head of the persisted index was (decodeHead).
	JSON []byte
	// Size and Sum are the length and CRC-32C of the persisted answer, as
	// its index's head gives them.
	Size int64
	Sum  uint32
}

// entry is one registry entry.
type entry struct {
	// Path is the entry directory relative to the registry root, '/'-separated.
	Path string `json:"path"`
	// Kind is "plugin" or "skill".
	Kind string `json:"kind"`
	// Name is the plugin name: the manifest's name, or the synthesized
	// skill plugin's.
	Name string `json:"name,omitempty"`
	// Description is a bare skill's description.
	Description string `json:"description,omitempty"`
	// Skills are the descriptions of the skills a plugin's local skill
	// groups hold, for search.
	Skills []string `json:"skills,omitempty"`
	// Groups are the directories, relative to the registry root and
	// '/'-separated ("." for the root itself), that Skills were read from:
	// a change below one of them changes the entry (derive.go).
	Groups []string `json:"groups,omitempty"`
	// Manifest is the raw manifest in wire form; nil when Problem is set.
	Manifest json.RawMessage `json:"manifest,omitempty"`
	// Problem says why the entry is not offered, or is empty.
	Problem string `json:"problem,omitempty"`
	// Note is a problem found in a manifest that is offered anyway, raw, for
	// the host to report.
	Note string `json:"note,omitempty"`
	// Home is the name of the commit directory that holds the entry
	// (gitcache.IsDirName), when the commit's own directory shares it
	// (share.go); empty for the commit's own. The cache records it
	// (gitcache.Cache.Shared); the persisted index keeps it for the
	// flagged entries of its head only.
	Home string `json:"-"`
}

// buildIndex enumerates the registry tree at dir (docs/manifests.md §9.2) and derives
// each entry's manifest. An entry that cannot be read is kept with its
// problem, never aborting the others.
func buildIndex(dir, commit string) *index {
	idx := &index{Format: indexFormat, Commit: commit, Entries: []entry{}}
	ents, err := layout.Enumerate(dir)
	if err != nil {
		idx.Problem = err.Error()
		return idx
	}
	for _, e := range ents {
		idx.Entries = append(idx.Entries, loadEntry(dir, e))
	}
	return idx
}

func loadEntry(root string, e layout.Entry) entry {
	ent := entry{Path: e.Path}
	dir := filepath.Join(root, filepath.FromSlash(e.Path))
	switch e.Kind {
	case layout.EntryPlugin:
		ent.Kind = "plugin"
		data, err := readCapped(filepath.Join(dir, manifest.ManifestFile))
		if err != nil {
			ent.Problem = err.Error()
			return ent
		}
		var note error
		ent.Name, ent.Manifest, note, err = rawManifest(data)
		if err != nil {
			ent.Problem = fmt.Sprintf("%s: %v", manifest.ManifestFile, err)
		} else if note != nil {
			ent.Note = fmt.Sprintf("%s: %v", manifest.ManifestFile, note)
		} else if m, err := manifest.DecodeTOML(data); err == nil {
			ent.Skills, ent.Groups = groupSkills(root, dir, m)
		}
	case layout.EntrySkill:
		ent.Kind = "skill"
		data, err := readCapped(filepath.Join(dir, skill.File))
		if err != nil {
			ent.Problem = err.Error()
			return ent
		}
		sk, err := skill.Parse(data, true)
		var m *manifest.Manifest
		if err != nil {
			var rsk *skill.Skill
			m, rsk = retiredSkill(path.Base(e.Path), data, err)
			if m == nil {
				ent.Problem = fmt.Sprintf("%s: %v", skill.File, err)
				return ent
			}
			ent.Note = retiredNote(err)
			ent.Name, ent.Description = m.Name, rsk.Description
		} else {
			m = layout.SkillPlugin(path.Base(e.Path), sk)
			ent.Name, ent.Description = m.Name, sk.Description
		}
		ent.Manifest, err = m.WireJSON()
		if err != nil {
			ent.Problem = err.Error()
		}
	default:
		ent.Problem = fmt.Sprintf("unknown entry kind %v", e.Kind)
	}
	return ent
}

// rawManifest turns a SYMPOSIUM.toml into its wire form without validating
// it, so the host sees exactly what the registry holds (retired and unknown
// keys included) and reports problems itself. Only a document that is not
// TOML at all is refused (err). A document the typed manifest cannot hold
// (a known key with a value of the wrong type) is passed through as decoded,
// with the decoder's complaint in note.
func rawManifest(data []byte) (name string, raw json.RawMessage, note, err error) {
	m, derr := manifest.DecodeTOML(data)
	if derr == nil {
		raw, err := m.WireJSON()
		return m.Name, raw, nil, err
	}
	// A known key holding a value of the wrong type: the typed view cannot
	// hold it, so pass the document through as it is.
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return "", nil, nil, fmt.Errorf("line %d: invalid TOML: %s", row, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return "", nil, nil, fmt.Errorf("invalid TOML: %w", err)
	}
	raw, err = json.Marshal(jsonable(tree))
	if err != nil {
		return "", nil, nil, fmt.Errorf("encode as JSON: %w", err)
	}
	name, _ = tree["name"].(string)
	return name, raw, derr, nil
}

// jsonable converts TOML date and time values to their TOML text: an
// offset date-time in RFC 3339, a local date, time or date-time as written
// without an offset.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return x.(fmt.Stringer).String()
	}
	return v
}

// maxGroupSkills bounds the skills read from one plugin's groups for search.
const maxGroupSkills = 256

// groupSkills returns the descriptions of the SKILL.md files below the
// plugin's local skill groups (source.path), staying inside root, and the
// group directories walked, relative to root.
func groupSkills(root, dir string, m *manifest.Manifest) (out, groups []string) {
	for _, g := range m.Skills {
		if g.Source == nil || g.Source.Path == "" || filepath.IsAbs(g.Source.Path) {
			continue
		}
		gdir := filepath.Join(dir, filepath.FromSlash(g.Source.Path))
		rel, err := filepath.Rel(root, gdir)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		groups = append(groups, filepath.ToSlash(rel))
		filepath.WalkDir(gdir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(out) >= maxGroupSkills {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && d.Name() == skill.File {
				if data, err := readCapped(p); err == nil {
					if sk, err := skill.Parse(data, false); err == nil && sk.Description != "" {
						out = append(out, sk.Description)
					}
				}
			}
			return nil
		})
	}
	return out, groups
}

// readCapped reads a SYMPOSIUM.toml or SKILL.md of the commit's
// directory, at most the manifest cap every PM reads package manifests
// with. Links in the directory were checked when it was written (each
// resolves inside it: gitcache), so they are followed. The directory is
// the cache's own, so the file is read as one (pkgfile.ReadOwnFile): a
// FIFO or a device put in its place since is refused once open, never
// waited on or read, and a file over the cap before it is read. The error
// names the file by its base name, the entry naming its directory.
func readCapped(p string) ([]byte, error) {
	data, err := pkgfile.ReadOwnFile(p, pkgfile.MaxManifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", filepath.Base(p), pkgfile.Cause(err))
	}
	return data, nil
}

// report logs the index's problems on stderr.
func (idx *index) report(log *slog.Logger) {
	if idx.Problem != "" {
		log.Warn("cannot list registry", "commit", idx.Commit, "err", idx.Problem)
	}
	for _, e := range idx.Entries {
		if e.Problem != "" {
			log.Warn("skipping registry entry", "entry", e.Path, "commit", idx.Commit, "err", e.Problem)
		} else if e.Note != "" {
			log.Warn("offering registry entry raw; the host will reject it", "entry", e.Path, "commit", idx.Commit, "err", e.Note)
		}
	}
}

// diagnose hands the index's problems to the host as diagnostics of the
// request ctx belongs to (docs/protocol.md §4.7): a registry that cannot be
// listed, and each entry skipped. Entries offered raw are not repeated:
// the host shows them invalid, with the reason.
func (idx *index) diagnose(ctx context.Context, registry, dir string) {
	if idx.Problem != "" {
		pmserver.Warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("registry %s (commit %s) cannot be listed: %s; it offers nothing", registry, short(idx.Commit), idx.Problem)})
	}
	for _, e := range idx.Entries {
		if e.Problem != "" {
			pmserver.Warn(ctx, pmserver.Diagnostic{
				Message: fmt.Sprintf("registry %s (commit %s): entry %s is not offered: %s", registry, short(idx.Commit), e.Path, e.Problem),
				File:    rootOf(dir, e),
			})
		}
	}
}

// short abbreviates a commit id for messages.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// present reports whether every entry's directory is still on disk below
// dir. It lists each directory that holds entries once (names only, no stat
// per entry), so a cache deleted in part is noticed on the hook path at the
// cost of one directory read per group of entries, not one stat per entry.
// An entry's files deleted while its directory stays are not noticed here;
// the host then finds them missing.
func (idx *index) present(dir string) bool {
	listed := map[string]map[string]bool{}
	for _, e := range idx.Entries {
		parent, name := path.Split(e.loc())
		names, ok := listed[parent]
		if !ok {
			names = map[string]bool{}
			// Opened without blocking: a FIFO put in a directory's place
			// is opened at once, and fails to list as anything not a
			// directory does.
			if f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(parent)), os.O_RDONLY|pkgfile.OwnOpenFlag, 0); err == nil {
				all, err := f.Readdirnames(-1)
				f.Close()
				if err != nil {
					return false
				}
				for _, n := range all {
					names[n] = true
				}
			}
			listed[parent] = names
		}
		if e.Path == "" || e.Path == "." {
			continue // the registry root itself
		}
		if !names[name] {
			return false
		}
	}
	return true
}

// match reports the entries a request names: the entry at that path, or
// else every entry whose plugin is so named.
func (idx *index) match(name string) []entry {
	name = strings.Trim(name, "/")
	for _, e := range idx.Entries {
		if e.Path == name {
			return []entry{e}
		}
	}
	var out []entry
	for _, e := range idx.Entries {
		if e.Name != "" && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}
