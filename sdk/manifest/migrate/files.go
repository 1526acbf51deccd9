package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// MaxFileSize bounds the files read: a manifest or SKILL.md larger than
// this is refused.
const MaxFileSize = 4 << 20

// File is the outcome of migrating one file.
type File struct {
	// Path names the file as found from the paths given.
	Path string
	// Old is the file's text and New the migrated text (equal to Old when
	// nothing changed); both nil when Err is set.
	Old, New []byte
	// Changes lists what changed, in file order.
	Changes []Change
	// Err is a *RefusedError when a retired form has no mechanical
	// translation, or the reason the file could not be read. The file must
	// then be left untouched.
	Err error
	// Skipped is set, with Err nil, for a file that does not parse but
	// mentions no retired key: there is nothing to migrate (validate reports
	// the file).
	Skipped error
}

// Rewrite migrates data, the text of the file named name: a SKILL.md (or
// any .md file) has its front matter migrated, anything else is read as a
// TOML manifest.
func Rewrite(name string, data []byte) ([]byte, []Change, error) {
	if isSkill(name) {
		return SkillMD(data)
	}
	return TOML(data)
}

// Collect migrates, in memory, every file the paths name: a path to a file
// is migrated whatever its name; a directory is walked for files named
// SYMPOSIUM.toml and SKILL.md (a whole registry, a plugin directory),
// skipping .git directories and never following symbolic links below the
// paths given. Nothing is written. A path that does not exist is a File
// with Err set; the error is for a walk that failed (or ctx ending).
func Collect(ctx context.Context, paths []string) ([]File, error) {
	var files []File
	for _, root := range paths {
		info, err := os.Lstat(root)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			files = append(files, File{Path: root, Err: err})
			continue
		}
		walkRoot := root
		if info.Mode()&fs.ModeSymlink != 0 {
			// A directory named on the command line may be a link to it;
			// nothing below it is followed.
			if st, err := os.Stat(root); err == nil && st.IsDir() {
				info, walkRoot = st, root+string(filepath.Separator)
			}
		}
		if !info.IsDir() {
			files = append(files, migrateFile(root, info))
			continue
		}
		err = filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if d.IsDir() {
				if d.Name() == ".git" && p != walkRoot {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() != manifest.ManifestFile && d.Name() != skill.File {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				files = append(files, File{Path: p, Err: err})
				return nil
			}
			files = append(files, migrateFile(p, info))
			return nil
		})
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

func migrateFile(p string, info fs.FileInfo) File {
	f := File{Path: p}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		f.Err = errors.New("a symbolic link: not followed; migrate the file it points to")
		return f
	case !info.Mode().IsRegular():
		f.Err = errors.New("not a regular file")
		return f
	case info.Size() > MaxFileSize:
		f.Err = fmt.Errorf("%d bytes long; files over %d bytes are not migrated", info.Size(), MaxFileSize)
		return f
	}
	fh, err := os.Open(p)
	if err != nil {
		f.Err = err
		return f
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		f.Err = err
		return f
	}
	if len(data) > MaxFileSize {
		f.Err = fmt.Errorf("files over %d bytes are not migrated", MaxFileSize)
		return f
	}
	out, changes, err := Rewrite(p, data)
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) && re.Invalid && !mentionsRetired(p, data) {
			f.Skipped = err
			return f
		}
		f.Err = err
		return f
	}
	f.Old, f.New, f.Changes = data, out, changes
	return f
}

// WriteFile replaces the file at p with data atomically: data is written to
// a temporary file in the same directory, which is then renamed over p. The
// file keeps its permissions.
func WriteFile(p string, data []byte) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data, info.Mode().Perm())
}

// mentionsRetired reports whether data, the text of the file named name,
// holds a word one of the retired forms of its kind contains.
func mentionsRetired(name string, data []byte) bool {
	words := []string{manifest.KeyCrate, manifest.KeyRetiredWhere, manifest.KeyPath}
	if isSkill(name) {
		words = words[:1] // crates: and crate(...)
	}
	for _, w := range words {
		if bytes.Contains(data, []byte(w)) {
			return true
		}
	}
	return false
}

// isSkill reports whether the file named name is read as a SKILL.md.
func isSkill(name string) bool {
	base := filepath.Base(name)
	return base == skill.File || strings.EqualFold(filepath.Ext(base), ".md")
}
