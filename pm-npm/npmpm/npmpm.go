// Package npmpm is Symposium's npm package manager: the PM behind the
// symposium-pm-npm binary.
//
// list_deps reads package.json (and its workspaces, from "workspaces" or
// pnpm-workspace.yaml) with exact versions from npm-shrinkwrap.json or
// package-lock.json, yarn.lock, pnpm-lock.yaml, else node_modules, without
// touching the network, and persists its answer keyed on the modification
// time and size of every file it read. active_plugins offers the installed
// dependencies that embed a Symposium plugin: a SYMPOSIUM.toml, a
// "symposium" object in package.json, or skills/**/SKILL.md. load_plugin and
// fetch resolve npm ranges against the configured registry (.npmrc files and
// npm_config_* variables), verify tarballs against dist.integrity and unpack
// them safely under <cache_dir>/npm/. search queries /-/v1/search.
//
// Decisions the protocol leaves open:
//   - The project is found as npm finds it: the nearest directory with a
//     package.json at or above the workspace, then the nearest ancestor that
//     is a workspace root including it; from inside a member, list_deps
//     gives that member's dependencies through the root's lockfile.
//   - Dependencies that are workspace members (workspace: specs, links to a
//     member, or registry ranges a member satisfies) are the workspace itself
//     and are not listed.
//   - file: and link: dependencies on other directories are listed under
//     their declared name with the version in the target's package.json (or
//     "*"); git and tarball-URL dependencies with the version installed in
//     node_modules (or "*"). Aliases ("x": "npm:real@^1") list the real
//     package.
//   - A lockfile that cannot be parsed fails list_deps with a message naming
//     it, rather than silently reporting "*" versions.
//   - update "check" falls back to installed or cached content that
//     satisfies the requirement when the registry cannot be reached.
package npmpm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/pm-npm/registry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// Name is the PM's name: the pm component of every id it mints.
const Name = "npm"

// Version is the PM software version reported for diagnostics and in the
// User-Agent: the module version the binary was built from.
var Version = pmserver.BuildVersion()

// PM is the npm package manager. Create it with New.
type PM struct {
	workspace string
	cacheRoot string // <cache_dir>/npm, or "" when the host gave no cache dir
	env       pmserver.Env
	log       *slog.Logger

	// diskReader, when set, replaces the filesystem active_plugins lists
	// node_modules through (tests count its calls).
	diskReader diskReader

	// warnings counts what log warned, so that an answer whose computation
	// warned is not persisted.
	warnings depcache.Warnings
	// verified spares active_plugins the stats list_deps just made.
	verified depcache.Verified
	// offersCtx is offersContext's value, computed once.
	offersCtxOnce sync.Once
	offersCtx     []string
	// listCheck is held while list_deps checks its cached answer, so that
	// an active_plugins request pipelined behind it waits for the stamps
	// that check finds fresh instead of taking them again alongside it.
	listCheck sync.Mutex

	configOnce sync.Once
	config     *npmrc.Config

	clientOnce sync.Once
	client     *registry.Client
	clientErr  error

	// createTemp makes the temporary file a tarball downloads into; nil
	// means os.CreateTemp. Tests replace it to inject write failures.
	createTemp func(dir, pattern string) (*os.File, error)
}

// New returns an npm PM awaiting Initialize.
func New() *PM {
	p := &PM{}
	p.log = p.warnings.Wrap(nil)
	return p
}

// Name implements pmserver.PM.
func (p *PM) Name() string { return Name }

// Initialize implements pmserver.PM. It only records the session: every
// file is read on demand so the hook path stays short.
func (p *PM) Initialize(ctx context.Context, s *pmserver.Session) error {
	ws := s.Workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		ws = wd
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", ws, err)
	}
	p.workspace = abs
	if s.CacheDir != "" {
		c, err := filepath.Abs(s.CacheDir)
		if err != nil {
			return fmt.Errorf("cache dir %s: %w", s.CacheDir, err)
		}
		p.cacheRoot = filepath.Join(c, Name)
	}
	p.env = s.Env
	if s.Logger != nil {
		p.log = p.warnings.Wrap(s.Logger)
	}
	if p.cacheRoot != "" {
		// What a killed process left (up to a whole tarball) goes now.
		sweepStale(filepath.Join(p.cacheRoot, "tmp"), p.log)
	}
	return nil
}

// npmConfig returns the npm configuration, read on first use from files
// and the environment only (never the network): the hook path reads it to
// know which registry's verified copies it may serve.
func (p *PM) npmConfig() *npmrc.Config {
	p.configOnce.Do(func() {
		// The project .npmrc is the one at npm's local prefix: the
		// workspace root when the workspace is inside a member.
		var rec depcache.Recorder
		p.config = npmrc.Load(findProject(&rec, p.workspace).root, p.env)
		for _, err := range p.config.Unreadable {
			p.log.Warn("skipping an npm configuration file", "err", err)
		}
		p.log.Debug("npm configuration", "files", p.config.Files, "registry", redact.URL(p.config.Registry("")))
	})
	return p.config
}

// registryClient returns the client for the configured registries, reading
// the npm configuration on first use.
func (p *PM) registryClient() (*registry.Client, error) {
	p.clientOnce.Do(func() {
		p.client, p.clientErr = registry.New(p.npmConfig(), p.env, "symposium-pm-npm/"+Version)
	})
	return p.client, p.clientErr
}

// checkID refuses ids of another PM and malformed names.
func checkID(id protocol.PackageID) error {
	if id.PM != Name {
		return protocol.ErrForeignID(id, "%s belongs to pm %q, not %q", id, id.PM, Name)
	}
	if !packagejson.ValidName(id.Name) {
		return protocol.ErrForeignID(id, "%q is not a valid npm package name", id.Name)
	}
	return nil
}

// Search implements pmserver.Searcher.
func (p *PM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	c, err := p.registryClient()
	if err != nil {
		return nil, err
	}
	res, err := c.Search(ctx, query, 20)
	if err != nil {
		return nil, p.protoErr(nil, err)
	}
	hits := make([]protocol.SearchHit, 0, len(res))
	for _, r := range res {
		version, ok := registry.CanonicalVersion(r.Version)
		if !packagejson.ValidName(r.Name) || !ok {
			continue
		}
		hits = append(hits, protocol.SearchHit{
			ID:          protocol.PackageID{PM: Name, Name: r.Name, Version: version},
			Description: r.Description,
		})
	}
	return hits, nil
}

// protoErr maps registry and archive errors to protocol errors for id (nil
// when there is no id, as in search).
func (p *PM) protoErr(id *protocol.PackageID, err error) error {
	if protocol.CodeOf(err) != 0 {
		return err
	}
	var he *registry.HTTPError
	var ie *registry.IntegrityError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case id != nil && (errors.Is(err, registry.ErrNotFound) || errors.Is(err, registry.ErrNoMatch)):
		return protocol.ErrNotFound(*id, "%s", err)
	case id != nil && errors.As(err, &ie):
		return protocol.ErrIntegrity(*id, ie.Expected, ie.Actual)
	case id != nil && errors.Is(err, registry.ErrNoChecksum):
		return protocol.ErrIntegrity(*id, "a registry checksum", "none to compare with")
	case errors.As(err, &he):
		return protocol.ErrRegistry(id, he.URL, he.Status, "npm registry: %s", he)
	}
	return err
}
