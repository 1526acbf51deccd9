package gitregistry

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// writeTree writes files (slash paths to contents) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeChanges lists what differs between the directories a and b the way
// gitcache reports a change between two commits: a file whose content
// differs, or a whole directory present in only one of them (or a file in
// the other), without what is below it.
func treeChanges(t *testing.T, a, b, rel string) []gitcache.ChangedPath {
	t.Helper()
	names := map[string]bool{}
	kinds := func(dir string) map[string]bool { // name -> is a directory
		out := map[string]bool{}
		des, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, de := range des {
			out[de.Name()] = de.IsDir()
			names[de.Name()] = true
		}
		return out
	}
	ka, kb := kinds(a), kinds(b)
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	var out []gitcache.ChangedPath
	for _, n := range sorted {
		p := path.Join(rel, n)
		da, ina := ka[n]
		db, inb := kb[n]
		switch {
		case ina && inb && da && db:
			out = append(out, treeChanges(t, a, b, p)...)
		case ina && inb && !da && !db:
			x, _ := os.ReadFile(filepath.Join(a, filepath.FromSlash(p)))
			y, _ := os.ReadFile(filepath.Join(b, filepath.FromSlash(p)))
			if !bytes.Equal(x, y) {
				out = append(out, gitcache.ChangedPath{Path: p})
			}
		default:
			out = append(out, gitcache.ChangedPath{Path: p, Dir: da || db})
		}
	}
	return out
}

// randomRegistryFile returns a file name and content of the kinds a
// registry holds: plugins (valid, with skill groups inside, beside or
// above them, wrong-typed, not TOML), bare skills (valid, without front
// matter), and other files.
func randomRegistryFile(r *rand.Rand, n int) (string, string) {
	switch r.IntN(8) {
	case 0, 1:
		group := []string{"skills", "../shared", ".", "../..", "s"}[r.IntN(5)]
		return "SYMPOSIUM.toml", fmt.Sprintf("name = \"p%d\"\n\n[[skills]]\nsource.path = %q\n", n, group)
	case 2:
		return "SYMPOSIUM.toml", []string{"name = [1]\n", "name = \n", "name = \"bare\"\n"}[r.IntN(3)]
	case 3, 4, 5:
		if r.IntN(6) == 0 {
			return "SKILL.md", "no front matter\n"
		}
		return "SKILL.md", fmt.Sprintf("---\nname: s%d\ndescription: skill %d\n---\nBody.\n", n, n)
	case 6:
		return "skill.md", "---\nname: lower\ndescription: lower case\n---\n"
	}
	return "README.md", fmt.Sprintf("readme %d\n", n)
}

// randomDir returns a directory path of up to three components.
func randomDir(r *rand.Rand) string {
	names := []string{"a", "b", "skills", "shared", "s"}
	parts := make([]string, 1+r.IntN(3))
	for i := range parts {
		parts[i] = names[r.IntN(len(names))]
	}
	return path.Join(parts...)
}

// listFiles lists the files and directories below dir as slash paths.
func listFiles(t *testing.T, dir string) (files, dirs []string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			dirs = append(dirs, filepath.ToSlash(rel))
		} else {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, dirs
}

// TestDeriveIndexMatchesBuild: for random registries and random changes
// (entries added, removed, edited, made unreadable; manifests added above
// or removed from around other entries; files changed inside skill groups
// inside, beside and above plugins; directories replaced by files; a
// SKILL.md or SYMPOSIUM.toml turned from a file into a directory or from a
// directory into a file), the index derived from the previous commit's
// index and the changed paths is the index built from the new tree, entry
// for entry.
func TestDeriveIndexMatchesBuild(t *testing.T) {
	const commit = "0123456789012345678901234567890123456789"
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	derived := 0
	for seed := range rounds {
		r := rand.New(rand.NewPCG(uint64(seed), 19))
		a, b := t.TempDir(), t.TempDir()
		files := map[string]string{}
		for i := range 4 + r.IntN(12) {
			name, body := randomRegistryFile(r, i)
			files[path.Join(randomDir(r), name)] = body
		}
		if r.IntN(3) == 0 { // a directory named as an entry's file
			d := path.Join(randomDir(r), markerName(r))
			name, body := randomRegistryFile(r, 50)
			if _, isFile := files[d]; !isFile {
				files[path.Join(d, name)] = body
			}
		}
		writeTree(t, a, files)
		writeTree(t, b, files)
		for i := range 1 + r.IntN(3) {
			all, dirs := listFiles(t, b)
			switch op := r.IntN(7); {
			case op <= 1 || len(all) == 0:
				name, body := randomRegistryFile(r, 100+i)
				p := path.Join(randomDir(r), name)
				if op == 1 && len(all) > 0 {
					p = all[r.IntN(len(all))] // edit an existing file
				}
				full := filepath.Join(b, filepath.FromSlash(p))
				if fi, err := os.Stat(full); err == nil && fi.IsDir() {
					continue
				}
				if os.MkdirAll(filepath.Dir(full), 0o755) != nil {
					continue // a file stands where a directory would go
				}
				os.WriteFile(full, []byte(body), 0o644)
			case op == 2:
				os.Remove(filepath.Join(b, filepath.FromSlash(all[r.IntN(len(all))])))
			case op == 3 && len(dirs) > 0:
				os.RemoveAll(filepath.Join(b, filepath.FromSlash(dirs[r.IntN(len(dirs))])))
			case op == 4 && len(dirs) > 0:
				d := filepath.Join(b, filepath.FromSlash(dirs[r.IntN(len(dirs))]))
				os.RemoveAll(d)
				os.WriteFile(d, []byte("now a file\n"), 0o644)
			case op == 5: // an entry's file becomes a directory
				if markers := slices.DeleteFunc(slices.Clone(all), func(p string) bool { return !isMarker(p) }); len(markers) > 0 {
					all = markers
				}
				f := filepath.Join(b, filepath.FromSlash(all[r.IntN(len(all))]))
				name, body := randomRegistryFile(r, 100+i)
				os.Remove(f)
				os.Mkdir(f, 0o755)
				os.WriteFile(filepath.Join(f, name), []byte(body), 0o644)
			case op == 6: // a directory named as an entry's file becomes one
				if dirs = slices.DeleteFunc(dirs, func(p string) bool { return !isMarker(p) }); len(dirs) > 0 {
					d := filepath.Join(b, filepath.FromSlash(dirs[r.IntN(len(dirs))]))
					os.RemoveAll(d)
					name := filepath.Base(d)
					body := "name = \"flipped\"\n"
					if !strings.EqualFold(name, manifest.ManifestFile) {
						body = "---\nname: flipped\ndescription: was a directory\n---\n"
					}
					os.WriteFile(d, []byte(body), 0o644)
				}
			}
		}
		built := buildIndex(a, commit)
		old, _, err := decodeIndex(encodeIndex(built, nil), commit)
		if err != nil {
			t.Fatal(err)
		}
		changes := treeChanges(t, a, b, "")
		got, parsed, ok := deriveIndex(old, b, commit, changes)
		want := buildIndex(b, commit)
		if !ok {
			if want.Problem == "" && built.Problem == "" && !slices.ContainsFunc(changes, func(c gitcache.ChangedPath) bool { return parentDir(c.Path) == "" && !c.Dir }) {
				t.Errorf("seed %d: not derived, though the root did not change (changes %v)", seed, changes)
			}
			continue
		}
		derived++
		if !reflect.DeepEqual(got.Entries, want.Entries) || got.Problem != want.Problem {
			t.Errorf("seed %d: changes %v\nderived %s\nbuilt   %s", seed, changes, showEntries(got), showEntries(want))
		}
		if parsed > len(want.Entries) {
			t.Errorf("seed %d: %d entries read again, more than the %d there are", seed, parsed, len(want.Entries))
		}
	}
	if derived < rounds/2 {
		t.Errorf("only %d of %d changes were derived", derived, rounds)
	}
}

// markerName returns a name of the files that make a directory an entry,
// in some case.
func markerName(r *rand.Rand) string {
	return []string{"SKILL.md", "SYMPOSIUM.toml", "skill.md"}[r.IntN(3)]
}

// isMarker reports whether the last component of p names a file that
// makes a directory an entry (in any case).
func isMarker(p string) bool {
	base := path.Base(p)
	return strings.EqualFold(base, skill.File) || strings.EqualFold(base, manifest.ManifestFile)
}

func showEntries(idx *index) string {
	var b bytes.Buffer
	for _, e := range idx.Entries {
		fmt.Fprintf(&b, "\n  %s %s name=%q desc=%q skills=%q groups=%q problem=%q note=%q manifest=%s", e.Path, e.Kind, e.Name, e.Description, e.Skills, e.Groups, e.Problem, e.Note, e.Manifest)
	}
	return b.String()
}

// TestDeriveIndexReadsOnlyTheChange: a one-entry change to a registry of
// many entries reads that entry again, and nothing else. The registry
// before the change is written once, read by every case; each case writes
// the registry after its change.
func TestDeriveIndexReadsOnlyTheChange(t *testing.T) {
	const commit = "0123456789012345678901234567890123456789"
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("plugins/p%03d/SYMPOSIUM.toml", i)] = fmt.Sprintf("name = \"p%d\"\n\n[[skills]]\nsource.path = \"skills\"\n", i)
		files[fmt.Sprintf("plugins/p%03d/skills/s/SKILL.md", i)] = "---\nname: s\ndescription: inner\n---\n"
		files[fmt.Sprintf("groups/g%d/s%03d/SKILL.md", i%4, i)] = fmt.Sprintf("---\nname: s%d\ndescription: d\n---\n", i)
	}
	a := t.TempDir()
	writeTree(t, a, files)
	for _, tc := range []struct {
		name   string
		change map[string]string
		parsed int
	}{
		{"bare skill", map[string]string{"groups/g1/s005/SKILL.md": "---\nname: s5\ndescription: changed\n---\n"}, 1},
		{"plugin manifest", map[string]string{"plugins/p007/SYMPOSIUM.toml": "name = \"renamed\"\n"}, 1},
		{"skill inside a plugin", map[string]string{"plugins/p009/skills/s/SKILL.md": "---\nname: s\ndescription: changed\n---\n"}, 1},
		{"new entry", map[string]string{"groups/g2/new/SKILL.md": "---\nname: new\ndescription: new\n---\n"}, 1},
		{"unrelated file", map[string]string{"plugins/README.md": "hello\n"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := t.TempDir()
			writeTree(t, b, files)
			writeTree(t, b, tc.change)
			old := buildIndex(a, commit)
			got, parsed, ok := deriveIndex(old, b, commit, treeChanges(t, a, b, ""))
			if !ok {
				t.Fatal("not derived")
			}
			if parsed != tc.parsed {
				t.Errorf("%d entries read again, want %d", parsed, tc.parsed)
			}
			if want := buildIndex(b, commit); !reflect.DeepEqual(got.Entries, want.Entries) {
				t.Errorf("derived %s\nbuilt %s", showEntries(got), showEntries(want))
			}
		})
	}
}
