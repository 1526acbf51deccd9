// Package pypipm is the Python package manager of Symposium: list_deps from
// pyproject.toml, requirements files, Pipfile and their lockfiles;
// active_plugins from the project's virtualenv; load_plugin, fetch and search
// against the configured simple-API index.
package pypipm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/pm-pypi/simpleapi"
	"github.com/symposium-dev/symposium-pm/pm-pypi/venv"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// Name is the PM's name: the pm of every id it mints.
const Name = "pypi"

// Version is this PM's software version, reported by --version and in the
// User-Agent: the module version the binary was built from.
var Version = pmserver.BuildVersion()

// PM is the Python package manager. Its zero value is not usable: call New.
type PM struct {
	ws       string
	cache    string // <cache_dir>/pypi
	getenv   func(string) string
	log      *slog.Logger
	cacheSet bool

	clientOnce sync.Once
	client     *simpleapi.Client
	indexCfg   simpleapi.Config

	// warnings counts what log warned, so that an active_plugins answer
	// whose computation warned is not persisted.
	warnings depcache.Warnings
	// verified spares active_plugins the stats list_deps just made.
	verified depcache.Verified

	// depsRead shares one read of the list_deps answer persisted as sent
	// (listdepsraw.go) between the pipelined list_deps and active_plugins
	// of a hook; every hook of a long-lived connection reads it again.
	depsRead depcache.SharedRead

	// depsMu is held while a list_deps answer is computed, so that a
	// request pipelined beside the computation waits for its answer rather
	// than computing (and reporting the problems of) the same one again;
	// it guards last.
	depsMu sync.Mutex
	// last is the list_deps answer this process computed last, kept for
	// active_plugins while its inputs are unchanged (lastdeps.go).
	last *computedDeps

	locks sync.Map // per-package *sync.Mutex for fetches

	// createTemp makes the temporary file a distribution downloads into;
	// nil means os.CreateTemp. Tests replace it to inject write failures.
	createTemp func(dir, pattern string) (*os.File, error)
}

var (
	_ pmserver.PM        = (*PM)(nil)
	_ pmserver.DepLister = (*PM)(nil)
	_ pmserver.Searcher  = (*PM)(nil)
	_ pmserver.Refresher = (*PM)(nil)

	_ pmserver.WorkspaceReporter = (*PM)(nil)
)

// New returns a PM ready for Initialize.
func New() *PM { return &PM{} }

// Name returns "pypi".
func (p *PM) Name() string { return Name }

// Initialize records the workspace, cache directory, environment and logger.
func (p *PM) Initialize(ctx context.Context, s *pmserver.Session) error {
	p.ws = s.Workspace
	if p.ws == "" {
		p.ws, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(p.ws); err == nil {
		p.ws = abs
	}
	p.getenv = s.Env.Get
	p.log = s.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	} else {
		p.log = slog.New(redact.Handler(p.log.Handler()))
	}
	p.log = p.warnings.Wrap(p.log)
	if s.CacheDir != "" {
		p.cache = filepath.Join(s.CacheDir, Name)
		p.cacheSet = true
	} else {
		p.cache = filepath.Join(os.TempDir(), "symposium-pm-pypi")
	}
	return nil
}

// indexClient returns the client for the configured index, made on first
// use (list_deps never needs it).
func (p *PM) indexClient() *simpleapi.Client {
	p.clientOnce.Do(func() {
		p.indexCfg = simpleapi.LoadConfig(p.getenv)
		p.client = simpleapi.NewClient(p.indexCfg, p.getenv, "symposium-pm-pypi/"+Version)
		p.log.Debug("package index", "url", redact.URL(p.indexCfg.Index), "from", p.indexCfg.Source, "extra", len(p.indexCfg.Extra),
			"proxy", redact.URL(p.indexCfg.Proxy), "proxy_from", p.indexCfg.ProxySource)
	})
	return p.client
}

// environment returns the project's virtualenv, or nil. It is looked for
// at each call (a few system calls): a virtualenv created, replaced or
// removed while a connection lasts is what the next request sees.
func (p *PM) environment() *venv.Env {
	return venv.Find(p.ws, p.getenv)
}

// pythonVersion returns the project virtualenv's Python version (from its
// pyvenv.cfg), or "" when there is none.
func (p *PM) pythonVersion() string {
	env := p.environment()
	if env == nil {
		return ""
	}
	return venv.PythonVersion(env.Root)
}

// checkID validates an id for this PM and returns its normalized name and
// its version requirement as a PEP 440 specifier set ("" for any).
func checkID(id protocol.PackageID) (name, req string, err error) {
	if id.PM != Name {
		return "", "", protocol.ErrForeignID(id, "%s belongs to pm %q, not %q", id, id.PM, Name)
	}
	if !pyname.Valid(id.Name) {
		return "", "", protocol.ErrForeignID(id, "%q is not a valid Python distribution name", id.Name)
	}
	req = strings.TrimSpace(id.Version)
	if req == protocol.AnyVersion {
		req = ""
	}
	// A bare version, as list_deps reports, means exactly that version.
	if req != "" && !strings.ContainsAny(req[:1], "=<>!~") {
		req = "==" + req
	}
	if req != "" {
		if err := versions.ValidatePEP440Specifier(req); err != nil {
			return "", "", protocol.ErrForeignID(id, "%s: version %q is not a PEP 440 version or specifier set: %v", id, id.Version, err)
		}
	}
	return pyname.Normalize(id.Name), req, nil
}

// exactPin returns the version an "==V" or "===V" requirement pins.
func exactPin(req string) (string, bool) {
	if strings.Contains(req, ",") {
		return "", false
	}
	v, ok := strings.CutPrefix(req, "===")
	if !ok {
		v, ok = strings.CutPrefix(req, "==")
		if !ok || strings.HasSuffix(v, ".*") {
			return "", false
		}
	}
	v = strings.TrimSpace(v)
	if c, err := versions.CanonicalPEP440(v); err == nil {
		return c, true
	}
	return v, true
}

// canon returns the canonical form of a version, or v itself.
func canon(v string) string {
	if c, err := versions.CanonicalPEP440(v); err == nil {
		return c
	}
	return v
}

// matches reports whether version v satisfies req ("" matches anything,
// pre-releases included: an installed or cached copy is what the user has).
func matches(req, v string) bool {
	if req == "" {
		return true
	}
	if pin, ok := exactPin(req); ok {
		return canon(v) == pin
	}
	vs, err := versions.FilterPEP440(req, []string{v}, true)
	return err == nil && len(vs) == 1
}

func (p *PM) lock(key string) func() {
	m, _ := p.locks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func pkgID(name, version string) protocol.PackageID {
	return protocol.PackageID{PM: Name, Name: name, Version: version}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
