// Package modproxy writes Go module proxy directories for tests: the
// file-based GOPROXY layout (<module>/@v/list, <version>.info, .mod and
// .zip, module paths case-encoded), holding modules made from local source
// trees. With GOPROXY=file://<dir> the real go command installs from it, as
// it would from proxy.golang.org once the modules are released.
package modproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Module is one module version to publish.
type Module struct {
	// Path and Version identify the module version.
	Path, Version string
	// Dir is the source tree (its go.mod's module path must be Path).
	Dir string
	// Require adds require directives to the published go.mod, for modules
	// that, in a workspace, resolve their siblings without one.
	Require []module.Version
	// Time is the version's time in .info (default: now).
	Time time.Time
}

// Write publishes the modules into the proxy directory dir, creating it.
// Publishing the same module version twice replaces it.
func Write(dir string, mods ...Module) error {
	for _, m := range mods {
		if err := write(dir, m); err != nil {
			return fmt.Errorf("publishing %s@%s from %s: %w", m.Path, m.Version, m.Dir, err)
		}
	}
	return nil
}

func write(dir string, m Module) error {
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil {
		return err
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return err
	}
	if f.Module == nil || f.Module.Mod.Path != m.Path {
		return fmt.Errorf("%s/go.mod does not declare module %s", m.Dir, m.Path)
	}
	for _, r := range m.Require {
		if err := f.AddRequire(r.Path, r.Version); err != nil {
			return err
		}
	}
	f.Cleanup()
	if gomod, err = f.Format(); err != nil {
		return err
	}
	enc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	ver, err := module.EscapeVersion(m.Version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(enc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	// The zip is made from a copy of the tree with the published go.mod.
	stage, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := copyModule(m.Dir, stage); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "go.mod"), gomod, 0o644); err != nil {
		return err
	}
	var zbuf bytes.Buffer
	if err := modzip.CreateFromDir(&zbuf, module.Version{Path: m.Path, Version: m.Version}, stage); err != nil {
		return err
	}
	t := m.Time
	if t.IsZero() {
		t = time.Now()
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    string
	}{m.Version, t.UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		ver + ".mod":  gomod,
		ver + ".zip":  zbuf.Bytes(),
		ver + ".info": info,
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(vdir, "list"), m.Version)
}

func addToList(list, version string) error {
	old, err := os.ReadFile(list)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, l := range strings.Split(string(old), "\n") {
		if l == version {
			return nil
		}
	}
	return os.WriteFile(list, append(old, version+"\n"...), 0o644)
}

// copyModule copies the regular files of the module tree src into dst,
// leaving out nested modules and VCS directories as the go command does.
func copyModule(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel != "." {
				if n := d.Name(); n == ".git" || n == ".hg" || n == ".svn" || n == ".bzr" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// Sums returns the go.sum lines of a published module version (the zip's
// and the go.mod's hashes), as the go command would compute them.
func Sums(dir, path, version string) ([]string, error) {
	enc, err := module.EscapePath(path)
	if err != nil {
		return nil, err
	}
	ver, err := module.EscapeVersion(version)
	if err != nil {
		return nil, err
	}
	base := filepath.Join(dir, filepath.FromSlash(enc), "@v", ver)
	zh, err := dirhash.HashZip(base+".zip", dirhash.Hash1)
	if err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(base + ".mod")
	if err != nil {
		return nil, err
	}
	mh, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return nil, err
	}
	return []string{
		fmt.Sprintf("%s %s %s", path, version, zh),
		fmt.Sprintf("%s %s/go.mod %s", path, version, mh),
	}, nil
}
