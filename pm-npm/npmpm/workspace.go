package npmpm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Workspace implements pmserver.WorkspaceReporter: the workspace root and
// its packages — the root package.json's package (when it has a name) and
// each member matched by its "workspaces" globs or pnpm-workspace.yaml.
// Members whose package.json cannot be parsed are skipped with a warning.
func (p *PM) Workspace(ctx context.Context) (protocol.WorkspaceResult, error) {
	res := protocol.WorkspaceResult{Root: p.workspace, Members: []protocol.WorkspaceMember{}}
	rootPath := filepath.Join(p.workspace, "package.json")
	root, err := packagejson.Read(rootPath)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err // names rootPath already
	}
	if root.Name != "" {
		res.Members = append(res.Members, protocol.WorkspaceMember{Name: root.Name, Version: root.Version, Dir: p.workspace})
	}
	patterns := root.Workspaces
	if pw, err := os.ReadFile(filepath.Join(p.workspace, "pnpm-workspace.yaml")); err == nil {
		patterns = append(patterns, pnpmWorkspacePatterns(pw)...)
	}
	for _, d := range packagejson.ExpandWorkspaces(p.workspace, patterns).Dirs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		dir := filepath.Join(p.workspace, filepath.FromSlash(d))
		m, err := packagejson.Read(filepath.Join(dir, "package.json"))
		if err != nil {
			mp := filepath.Join(dir, "package.json")
			// The same words as list_deps's, so that the host shows it once.
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%v; this workspace member is left out", err), File: mp},
				"skipping workspace member with an unreadable package.json", "dir", dir, "err", err)
			continue
		}
		res.Members = append(res.Members, protocol.WorkspaceMember{Name: m.Name, Version: m.Version, Dir: dir})
	}
	return res, nil
}
