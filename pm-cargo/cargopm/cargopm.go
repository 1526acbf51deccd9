// Package cargopm is the cargo (Rust) package manager for Symposium: it lists
// a cargo workspace's direct dependencies natively from Cargo.toml and
// Cargo.lock, offers the plugins embedded in crates whose sources are on
// disk, acquires crates through the user's own cargo, and searches the
// registry's web API.
package cargopm

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	httpredirect "github.com/symposium-dev/symposium-pm/sdk/redirect"
)

// Name is the PM name cargopm announces and mints ids with.
const Name = "cargo"

// PM is the cargo package manager. The zero value is not usable; call New.
type PM struct {
	mu   sync.Mutex
	sess *pmserver.Session

	// httpClient is used for the sparse index and the web API. Its
	// redirect policy (redirect.Check) drops the token on a redirect to
	// another scheme, host or port, as libcurl does for cargo.
	httpClient *http.Client

	// gitSystemConfig is git's system-wide configuration file, read (with
	// the user's) for git's http.proxy, as cargo reads it through libgit2.
	gitSystemConfig string

	// audited keeps auditCrate's verdict per .crate (path, size, mtime).
	audited map[string]error

	// warnings counts what the session's logger warned, so that an
	// active_plugins answer whose computation warned is not persisted.
	warnings depcache.Warnings
	// verified spares active_plugins the stats list_deps just made.
	verified depcache.Verified
	// snapshotRead shares one read of the persisted snapshot between
	// list_deps and active_plugins.
	snapshotRead depcache.SharedRead
}

// httpTimeout bounds one registry request.
const httpTimeout = 60 * time.Second

// New returns a cargo PM.
func New() *PM {
	p := &PM{gitSystemConfig: gitSystemConfig}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = p.proxy
	p.httpClient = &http.Client{Transport: t, Timeout: httpTimeout, CheckRedirect: httpredirect.Check}
	return p
}

// Name returns "cargo".
func (p *PM) Name() string { return Name }

// Initialize keeps the session.
func (p *PM) Initialize(ctx context.Context, s *pmserver.Session) error {
	own := *s // the logger is wrapped in this PM's copy only
	own.Logger = p.warnings.Wrap(s.Logger)
	p.mu.Lock()
	p.sess = &own
	p.mu.Unlock()
	return nil
}

func (p *PM) session() *pmserver.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess == nil {
		return &pmserver.Session{Logger: slog.New(slog.DiscardHandler)}
	}
	return p.sess
}
