// Package protocol defines the wire protocol spoken between Symposium (the
// host) and a package manager (PM) binary: newline-delimited JSON-RPC 2.0 over
// the PM's stdin and stdout.
//
// It holds the method names, the parameter and result types with their exact
// JSON shapes, the update levels, the capability names and the error codes of
// protocol version 1. Both sides of the wire use it: the PM harness in
// package pmserver and the process manager in package host.
package protocol

import (
	"encoding/json"
	"fmt"
)

// Version is the protocol version this package describes.
const Version = 1

// Method names.
const (
	MethodInitialize    = "initialize"
	MethodActivePlugins = "active_plugins"
	MethodLoadPlugin    = "load_plugin"
	MethodListDeps      = "list_deps"
	MethodSearch        = "search"
	MethodFetch         = "fetch"
	MethodRefresh       = "refresh"
	MethodWorkspace     = "workspace"
)

// Methods lists every method of the protocol, initialize first.
var Methods = []string{
	MethodInitialize, MethodActivePlugins, MethodLoadPlugin, MethodListDeps,
	MethodSearch, MethodFetch, MethodRefresh, MethodWorkspace,
}

// Capability names a PM announces in its initialize result. Each names an
// optional method that the PM really implements; a PM answers the optional
// methods it did not announce with their empty result.
const (
	CapListDeps  = "list_deps"
	CapSearch    = "search"
	CapRefresh   = "refresh"
	CapWorkspace = "workspace"
)

// Capabilities lists every optional capability, in the order PMs announce them.
var Capabilities = []string{CapListDeps, CapSearch, CapRefresh, CapWorkspace}

// AnyVersion is the version of a request id that names no requirement, and
// the version list_deps reports for a dependency declared but not resolvable
// offline.
const AnyVersion = "*"

// PackageID identifies a package: a tuple of strings all defined by the PM
// named in PM. In a response Version is always exact; in a request it may be a
// requirement in the ecosystem's syntax, or AnyVersion.
type PackageID struct {
	PM      string `json:"pm"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// String renders the id as pm:name@version, for messages.
func (id PackageID) String() string {
	return fmt.Sprintf("%s:%s@%s", id.PM, id.Name, id.Version)
}

// Offer is a plugin a PM makes available: its id, the absolute directory
// holding its content, and the raw, unvalidated plugin manifest (the
// SYMPOSIUM.toml schema encoded as JSON). Validation and enablement are the
// host's business, never the PM's.
type Offer struct {
	ID       PackageID       `json:"id"`
	Root     string          `json:"root"`
	Manifest json.RawMessage `json:"manifest"`
}

// SearchHit is one result of search.
type SearchHit struct {
	ID          PackageID `json:"id"`
	Description string    `json:"description,omitempty"`
}

// UpdateLevel says how far fetch and refresh may go to the network.
type UpdateLevel string

// The update levels.
const (
	// UpdateNone never touches the network: serve from caches or fail with
	// CodeOffline.
	UpdateNone UpdateLevel = "none"
	// UpdateCheck may use the network to see whether cached content is
	// current, and fetches it when missing or stale.
	UpdateCheck UpdateLevel = "check"
	// UpdateFetch re-acquires unconditionally.
	UpdateFetch UpdateLevel = "fetch"
)

// Valid reports whether u is one of the three update levels.
func (u UpdateLevel) Valid() bool {
	switch u {
	case UpdateNone, UpdateCheck, UpdateFetch:
		return true
	}
	return false
}

// InitializeParams are the parameters of initialize.
type InitializeParams struct {
	ProtocolVersion int               `json:"protocol_version"`
	Workspace       string            `json:"workspace"`
	CacheDir        string            `json:"cache_dir"`
	Env             map[string]string `json:"env"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion int      `json:"protocol_version"`
	Name            string   `json:"name"`
	Capabilities    []string `json:"capabilities"`
	// Version is the PM software's own version, for diagnostics.
	Version string `json:"version,omitempty"`
}

// ActivePluginsParams are the parameters of active_plugins.
type ActivePluginsParams struct {
	Deps []PackageID `json:"deps"`
}

// LoadPluginParams are the parameters of load_plugin.
type LoadPluginParams struct {
	ID PackageID `json:"id"`
}

// SearchParams are the parameters of search.
type SearchParams struct {
	Query string `json:"query"`
}

// FetchParams are the parameters of fetch.
type FetchParams struct {
	ID     PackageID   `json:"id"`
	Update UpdateLevel `json:"update"`
}

// FetchResult is the result of fetch: the exact id and where its content is.
type FetchResult struct {
	ID   PackageID `json:"id"`
	Root string    `json:"root"`
}

// RefreshParams are the parameters of refresh.
type RefreshParams struct {
	Update UpdateLevel `json:"update"`
	// Force overrides a source's auto-update opt-out.
	Force bool `json:"force"`
}

// RefreshResult is the result of refresh.
type RefreshResult struct {
	Refreshed bool `json:"refreshed"`
}

// WorkspaceMember is one member of a workspace.
type WorkspaceMember struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Dir     string `json:"dir"`
}

// WorkspaceResult is the result of the workspace extension method.
type WorkspaceResult struct {
	Root    string            `json:"root"`
	Members []WorkspaceMember `json:"members"`
}
