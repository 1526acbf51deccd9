package pypipm

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/pm-pypi/pyproject"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Workspace reports the workspace root and its Python projects: the root
// project (when its pyproject.toml names one) and the members of a uv
// workspace ([tool.uv.workspace] members minus exclude).
func (p *PM) Workspace(ctx context.Context) (protocol.WorkspaceResult, error) {
	res := protocol.WorkspaceResult{Root: p.ws, Members: []protocol.WorkspaceMember{}}
	data, err := pkgfile.ReadUserFile(filepath.Join(p.ws, "pyproject.toml"), pkgfile.MaxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	proj, err := pyproject.Parse(data)
	if err != nil {
		return res, errorf("workspace %s: %w", p.ws, err)
	}
	if proj.Name != "" {
		res.Members = append(res.Members, protocol.WorkspaceMember{Name: proj.Name, Version: canonOrEmpty(proj.Version), Dir: p.ws})
	}
	r := &resolver{pm: p}
	r.ctx = ctx
	for _, dir := range r.members(proj) {
		// Read as list_deps reads it (resolver.read), with the same
		// warning for one that exists but cannot be read.
		data, ok := r.read(filepath.Join(dir, "pyproject.toml"), pkgfile.MaxManifest)
		if !ok {
			continue
		}
		m, err := pyproject.Parse(data)
		if err != nil || m.Name == "" {
			mp := filepath.Join(dir, "pyproject.toml")
			if err == nil {
				err = errors.New("[project] has no name")
			}
			// The same words and place as list_deps's (see rwarn), so that
			// the host shows it once.
			msg, line := placedProblem(err)
			p.warn(ctx, pmserver.Diagnostic{Message: msg + "; this workspace member is left out", File: mp, Line: line},
				"skipping workspace member", "dir", dir, "err", err)
			continue
		}
		res.Members = append(res.Members, protocol.WorkspaceMember{Name: m.Name, Version: canonOrEmpty(m.Version), Dir: dir})
	}
	return res, nil
}

func canonOrEmpty(v string) string {
	if v == "" {
		return ""
	}
	return canon(v)
}
