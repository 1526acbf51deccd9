package cargopm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/suggest"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// warning is a problem found while reading the workspace, kept in the
// persisted snapshot so that a cached answer repeats it.
type warning struct {
	Message string `json:"m"`
	File    string `json:"f,omitempty"`
	Line    int    `json:"l,omitempty"`
}

// warn logs something dropped or degraded and hands it to the host as a
// diagnostic of the request ctx belongs to (docs/protocol.md §4.7), so that
// the user sees it without debug logging.
func (p *PM) warn(ctx context.Context, d pmserver.Diagnostic, logMsg string, args ...any) {
	p.session().Logger.Warn(logMsg, args...)
	pmserver.Warn(ctx, d)
}

// crateID is the id of a crate for a diagnostic.
func crateID(id protocol.PackageID) *protocol.PackageID { return &id }

// topLevelKeys are the top-level keys of a Cargo.toml that cargo knows.
var topLevelKeys = []string{
	"package", "project", "workspace", "dependencies", "dev-dependencies", "dev_dependencies",
	"build-dependencies", "build_dependencies", "target", "lib", "bin", "example", "test", "bench",
	"features", "patch", "replace", "profile", "badges", "lints", "cargo-features",
}

// unknownTables warns about the top-level tables and keys of the manifest
// at path that cargo does not know, such as a misspelled [dependncies]:
// cargo ignores them (with a warning of its own), and so does list_deps.
func unknownTables(path string) []warning {
	data, err := pkgfile.ReadFile(filepath.Dir(path), filepath.Base(path), pkgfile.MaxManifest)
	if err != nil {
		return nil // reported by the loader
	}
	var top map[string]any
	if toml.Unmarshal(data, &top) != nil {
		return nil // reported by the loader
	}
	var keys []string
	for k := range top {
		if !slices.Contains(topLevelKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []warning
	pos := tomlfile.Index(data)
	for _, k := range keys {
		what := fmt.Sprintf("key %q", k)
		if _, ok := top[k].(map[string]any); ok {
			what = "table [" + k + "]"
		}
		msg := fmt.Sprintf("%s: unknown %s", path, what)
		if near := suggest.Closest(k, topLevelKeys); near != "" {
			msg += fmt.Sprintf(" (did you mean [%s]?)", near)
		}
		msg += "; cargo ignores it, so no dependency in it is listed"
		at, _ := pos.Find(k) // the first header or key naming it
		line := at.Line
		if line > 0 {
			msg = fmt.Sprintf("%s:%d:%s", path, line, strings.TrimPrefix(msg, path+":"))
		}
		out = append(out, warning{Message: msg, File: path, Line: line})
	}
	return out
}

// lockfileWarning is the warning for a workspace with dependencies and no
// Cargo.lock: their versions are not known offline, and path dependencies
// outside the workspace are not resolved.
func lockfileWarning(ws *cargotoml.Workspace) []warning {
	var deps, paths []string
	for _, m := range ws.Members {
		for _, d := range m.Deps {
			deps = append(deps, d.Name)
			if d.Path != "" {
				paths = append(paths, d.Name)
			}
		}
	}
	if len(deps) == 0 {
		return nil
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	msg := fmt.Sprintf("%s does not exist, so the versions of the workspace's dependencies are not known and only crates already on disk can offer plugins", ws.Lockfile)
	if len(paths) > 0 {
		msg += fmt.Sprintf("; path dependencies (%s) are not resolved", strings.Join(paths, ", "))
	}
	msg += fmt.Sprintf("; run `cargo generate-lockfile` in %s", ws.Root)
	return []warning{{Message: msg, File: ws.Lockfile}}
}

// pathWarnings are the warnings for the path crates outside the members
// that cargo cannot load (cargotoml.Workspace.PathErrors): cargo refuses to
// build the workspace, and list_deps reports the dependency at the version
// Cargo.lock records, if any, as before the crate broke.
func pathWarnings(ws *cargotoml.Workspace) []warning {
	out := make([]warning, 0, len(ws.PathErrors))
	for _, err := range ws.PathErrors {
		w := warning{Message: err.Error() + "; cargo fails until it is fixed, and the dependency is listed at the version Cargo.lock records, if any"}
		var pe *cargotoml.PathError
		if errors.As(err, &pe) {
			w.File = pe.Manifest
		}
		out = append(out, w)
	}
	return out
}
