// Package pmserver is the harness that turns a Go type into a package-manager
// (PM) binary speaking Symposium's PM protocol on stdin and stdout.
//
// A PM author implements PM, plus any of the optional interfaces DepLister,
// Searcher, Refresher and WorkspaceReporter, and calls Main from the binary's
// main function. A PM that keeps answers already encoded may also implement
// RawActivePlugins and RawDepLister, which the harness tries before decoding
// a request or encoding an answer, and VettedActivePlugins for answers it
// checked when it stored them and protects by a checksum. The harness announces the capabilities
// the optional interfaces provide, answers the other optional methods with their empty
// result, enforces the initialize handshake, keeps serving after bad input and
// handler panics, keeps stray writes off the protocol stream, and answers every
// request it has read before exiting at end of input.
package pmserver

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// PM is the interface every package manager implements.
//
// Methods may be called concurrently once Initialize has returned; Initialize
// is called exactly once per connection, before any other method, and also
// when the host asked for a protocol version other than protocol.Version (the
// harness then answers with protocol.Version and the host decides). Errors
// that are (or wrap) a *protocol.Error reach the host with that code; any
// other error becomes protocol.CodeInternalError with the error's text.
type PM interface {
	// Name is the name the PM announces: the pm component of every id it
	// mints. On a connection the harness reads it exactly once, after
	// Initialize has returned successfully, and uses that value for the rest
	// of the connection (id checks, the initialize result), so it may depend
	// on the initialize env. The only other reader is --help, which runs
	// without any connection and shows the name the PM gives then; Name must
	// therefore answer before Initialize too, without side effects.
	Name() string
	// Initialize receives the connection's context. A PM keeps what it needs.
	Initialize(ctx context.Context, s *Session) error
	// ActivePlugins returns the plugins this PM activates for the workspace's
	// dependencies deps (only those whose PM is this one are passed).
	ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error)
	// LoadPlugin resolves id's version requirement, obtains the content and
	// returns the plugins found there (zero is not an error).
	LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error)
	// Fetch acquires id's content at the given update level and reports the
	// exact id and where the content is.
	Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error)
}

// DepLister is implemented by PMs that can list the workspace's direct
// dependencies (capability "list_deps").
type DepLister interface {
	ListDeps(ctx context.Context) ([]protocol.PackageID, error)
}

// Searcher is implemented by PMs with a searchable registry (capability
// "search").
type Searcher interface {
	Search(ctx context.Context, query string) ([]protocol.SearchHit, error)
}

// Refresher is implemented by PMs with a backing source to pull (capability
// "refresh").
type Refresher interface {
	Refresh(ctx context.Context, update protocol.UpdateLevel, force bool) (bool, error)
}

// WorkspaceReporter is implemented by PMs that know where the workspace and
// its members are (capability "workspace").
type WorkspaceReporter interface {
	Workspace(ctx context.Context) (protocol.WorkspaceResult, error)
}

// Capabilities returns the capabilities pm provides, in protocol order.
func Capabilities(pm PM) []string {
	caps := []string{}
	if _, ok := pm.(DepLister); ok {
		caps = append(caps, protocol.CapListDeps)
	}
	if _, ok := pm.(Searcher); ok {
		caps = append(caps, protocol.CapSearch)
	}
	if _, ok := pm.(Refresher); ok {
		caps = append(caps, protocol.CapRefresh)
	}
	if _, ok := pm.(WorkspaceReporter); ok {
		caps = append(caps, protocol.CapWorkspace)
	}
	return caps
}

// Session is the per-connection context given to Initialize.
type Session struct {
	// ProtocolVersion is the protocol version spoken on the connection: always
	// protocol.Version, which the harness announces whatever the host asked for.
	ProtocolVersion int
	// RequestedVersion is the version the host asked for. When it differs
	// from ProtocolVersion the PM still initializes fully; the host, seeing
	// the version answered, decides whether to go on.
	RequestedVersion int
	// Workspace is the absolute path of the workspace the host works in.
	Workspace string
	// CacheDir is the directory the host gave for caching. A PM keeps its
	// files under CacheDir/<name>/ and treats them as disposable.
	CacheDir string
	// Env is the initialize environment merged over the process environment.
	Env Env
	// Logger writes to stderr at the level in SYMPOSIUM_LOG.
	Logger *slog.Logger
}

// Env is an environment: the host's initialize env, which wins, over the
// PM process's own environment. The zero value reads the process environment.
type Env struct {
	vars map[string]string
}

// NewEnv returns an Env with vars over the process environment.
func NewEnv(vars map[string]string) Env {
	m := make(map[string]string, len(vars))
	for k, v := range vars {
		m[k] = v
	}
	return Env{vars: m}
}

// Lookup returns the value of key, from the initialize env first, then from the
// process environment.
func (e Env) Lookup(key string) (string, bool) {
	if v, ok := e.vars[key]; ok {
		return v, true
	}
	return os.LookupEnv(key)
}

// Get returns the value of key, or "" when unset.
func (e Env) Get(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// Environ returns the merged environment as KEY=VALUE strings, suitable for
// exec.Cmd.Env when a PM runs its ecosystem's own tool.
func (e Env) Environ() []string {
	out := make([]string, 0, len(e.vars)+32)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := e.vars[k]; !over {
			out = append(out, kv)
		}
	}
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}
