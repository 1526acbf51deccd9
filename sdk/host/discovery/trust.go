package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// MaxManifestSize bounds a SYMPOSIUM.toml the host reads itself (a
// workspace plugin's): a larger one is refused, not read.
const MaxManifestSize = pkgfile.MaxManifest

// workspaceScope is the workspace the user opened: the one directory whose
// plugins are trusted as workspace plugins. A PM's workspace answer may name
// directories inside it (narrowing it to its members), never outside.
type workspaceScope struct {
	// dir is the workspace as opened, and real the same with symbolic links
	// resolved (resolved once): a PM may report either form.
	dir, real string
	root      *os.Root
}

// openScope opens the workspace directory dir.
func openScope(dir string) (*workspaceScope, error) {
	dir = filepath.Clean(dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	return &workspaceScope{dir: dir, real: real, root: root}, nil
}

// rel returns dir, an absolute path a PM reported, relative to the
// workspace, and whether it lies inside the workspace lexically.
func (s *workspaceScope) rel(dir string) (string, bool) {
	if !filepath.IsAbs(dir) {
		return "", false
	}
	dir = filepath.Clean(dir)
	for _, base := range []string{s.dir, s.real} {
		if r, err := filepath.Rel(base, dir); err == nil && (r == "." || filepath.IsLocal(r)) {
			return r, true
		}
	}
	return "", false
}

// open opens the workspace directory rel as a root of its own. Opening goes
// through the workspace's root, so a symbolic link leading out of the
// workspace fails here.
func (s *workspaceScope) open(rel string) (*os.Root, error) {
	if rel == "." {
		return os.OpenRoot(s.dir)
	}
	return s.root.OpenRoot(rel)
}

// readManifestIn reads name from root: a regular file (a link is followed
// only inside root) of at most MaxManifestSize bytes. The error wraps
// fs.ErrNotExist when there is no such file.
func readManifestIn(root *os.Root, name string) ([]byte, error) {
	return pkgfile.ReadRoot(root, name, MaxManifestSize)
}

// causeOf strips the operation and path from an os error, for messages that
// name the path themselves.
func causeOf(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// reportedDir is a directory a PM's workspace answer named.
type reportedDir struct {
	pm   string
	what string // "root" or "member <name>"
	dir  string
}

func (r reportedDir) String() string {
	return fmt.Sprintf("pm %s reports workspace %s %s", r.pm, strings.TrimSpace(r.what), r.dir)
}
