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

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// Name is the PM name cargopm announces and mints ids with.
const Name = "cargo"

// PM is the cargo package manager. The zero value is not usable; call New.
type PM struct {
	mu   sync.Mutex
	sess *pmserver.Session

	// httpClient is used for the sparse index and the web API.
	httpClient *http.Client
}

// New returns a cargo PM.
func New() *PM {
	return &PM{httpClient: &http.Client{}}
}

// Name returns "cargo".
func (p *PM) Name() string { return Name }

// Initialize keeps the session.
func (p *PM) Initialize(ctx context.Context, s *pmserver.Session) error {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	p.mu.Lock()
	p.sess = s
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
