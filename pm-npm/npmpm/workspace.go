package npmpm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Workspace implements pmserver.WorkspaceReporter: the workspace root and
// its packages — the root package.json's package (when it has a name) and
// each member matched by its "workspaces" globs or pnpm-workspace.yaml.
// The root is found as npm finds it (findProject): opened from inside a
// workspace member, it is the workspace root above. Members whose
// package.json cannot be parsed are skipped with a warning.
func (p *PM) Workspace(ctx context.Context) (protocol.WorkspaceResult, error) {
	var rec depcache.Recorder // what was read does not matter here
	proj := findProject(&rec, p.workspace)
	res := protocol.WorkspaceResult{Root: proj.root, Members: []protocol.WorkspaceMember{}}
	rootPath := filepath.Join(proj.root, "package.json")
	root, err := packagejson.Read(rootPath)
	switch {
	case errors.Is(err, fs.ErrNotExist) && proj.scoped:
		root = &packagejson.Manifest{} // a pnpm workspace root needs no package.json
	case errors.Is(err, fs.ErrNotExist):
		return res, nil
	case err != nil:
		return res, err // names rootPath already
	}
	if root.Name != "" {
		res.Members = append(res.Members, protocol.WorkspaceMember{Name: root.Name, Version: root.Version, Dir: proj.root})
	}
	patterns := projectWorkspaces(&rec, proj.root, root)
	for _, d := range packagejson.ExpandWorkspaces(proj.root, patterns).Dirs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		dir := filepath.Join(proj.root, filepath.FromSlash(d))
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
