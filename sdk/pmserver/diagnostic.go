package pmserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// Diagnostic is a problem a PM met while answering a request that did not
// stop it from answering: a plugin declaration ignored in part, a
// dependency table that could not be read, a lockfile skipped. The host
// shows it to the user beside the answer (docs/protocol.md §4.7).
type Diagnostic struct {
	// Message says what was dropped or degraded and why, in the user's
	// terms, and what to do about it. It is required.
	Message string
	// File is the absolute path of the file concerned, when there is one.
	File string
	// Line is the 1-based line in File, when known.
	Line int
	// Package is the package concerned, when there is one; its PM must be
	// the PM's own name.
	Package *protocol.PackageID
}

// Warn sends d to the host as a warning diagnostic of the request whose
// handler ctx belongs to: something was dropped or degraded and the user
// should act. It is written before that request's response, so the host
// has it with the answer. Warn reports whether it sent d: it sends nothing
// for a ctx that is not (derived from) a handler's, once the handler has
// returned, or past protocol.MaxDiagnostics diagnostics for one request
// (the harness then sends one last diagnostic saying how many it left
// out). A message too long for protocol.MaxDiagnosticSize is shortened,
// and the credentials of any URL in the message or file (the user:password@
// or token@ part) are replaced by "***" (docs/protocol.md §11).
//
// Warn does not log; a PM that wants the problem on stderr too (for hosts
// that ignore diagnostics) logs it itself.
func Warn(ctx context.Context, d Diagnostic) bool {
	return send(ctx, protocol.LevelWarning, d)
}

// Info sends d to the host as an informational diagnostic of the request
// whose handler ctx belongs to: a fact about the answer the user may want
// to know, such as an offer rooted in an editable project rather than an
// installed copy. It behaves as Warn otherwise.
func Info(ctx context.Context, d Diagnostic) bool {
	return send(ctx, protocol.LevelInfo, d)
}

// diagKey is the context key of a handler's *requestDiag.
type diagKey struct{}

// requestDiag is the diagnostic state of one request being handled.
type requestDiag struct {
	ch *lineChannel
	id json.RawMessage

	mu      sync.Mutex
	sent    int
	dropped int
	done    bool // the handler has returned: the request is no longer ours
}

// withDiagnostics returns ctx carrying the diagnostic state of the request
// with raw id.
func withDiagnostics(ctx context.Context, ch *lineChannel, id string) (context.Context, *requestDiag) {
	rd := &requestDiag{ch: ch, id: json.RawMessage(id)}
	return context.WithValue(ctx, diagKey{}, rd), rd
}

// Limits of one diagnostic's fields, well under protocol.MaxDiagnosticSize
// together with the package id's.
const (
	maxDiagMessage = 8 << 10
	maxDiagFile    = 2 << 10
	maxDiagPackage = 1 << 10 // each of the package id's three strings
)

func send(ctx context.Context, level protocol.DiagnosticLevel, d Diagnostic) bool {
	rd, _ := ctx.Value(diagKey{}).(*requestDiag)
	if rd == nil || d.Message == "" {
		return false
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.done {
		return false
	}
	if rd.sent >= protocol.MaxDiagnostics-1 {
		rd.dropped++
		return false
	}
	p := protocol.Diagnostic{
		Request: rd.id,
		Level:   level,
		Message: shorten(redact.Text(d.Message), maxDiagMessage),
		File:    shorten(redact.Text(d.File), maxDiagFile),
		Line:    max(d.Line, 0),
	}
	if d.Package != nil {
		p.Package = &protocol.PackageID{
			PM:      shorten(d.Package.PM, maxDiagPackage),
			Name:    shorten(d.Package.Name, maxDiagPackage),
			Version: shorten(d.Package.Version, maxDiagPackage),
		}
	}
	if err := rd.write(p); err != nil {
		rd.ch.log.Debug("writing a diagnostic", "err", err)
		return false
	}
	rd.sent++
	return true
}

// finish is called as the handler returns, before its response is sent: it
// reports the diagnostics left out, and stops any later one.
func (rd *requestDiag) finish() {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.done {
		return
	}
	rd.done = true
	if rd.dropped > 0 {
		rd.write(protocol.Diagnostic{Request: rd.id, Level: protocol.LevelWarning, Message: fmt.Sprintf(
			"%d more diagnostics of this request were not sent: a PM sends at most %d per request", rd.dropped, protocol.MaxDiagnostics)})
	}
}

// write sends one diagnostic notification; the caller holds rd.mu.
func (rd *requestDiag) write(p protocol.Diagnostic) error {
	b, err := json.Marshal(struct {
		JSONRPC string              `json:"jsonrpc"`
		Method  string              `json:"method"`
		Params  protocol.Diagnostic `json:"params"`
	}{"2.0", protocol.MethodDiagnostic, p})
	if err != nil {
		return fmt.Errorf("encoding a diagnostic: %w", err)
	}
	return rd.ch.write(b)
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// DiagnosticsSent returns how many diagnostics have been sent so far for the
// request whose handler ctx belongs to (0 outside a handler). A PM that
// caches an answer uses it to tell an answer that came with diagnostics,
// which a cached copy would not repeat, from one that did not.
func DiagnosticsSent(ctx context.Context) int {
	rd, _ := ctx.Value(diagKey{}).(*requestDiag)
	if rd == nil {
		return 0
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.sent + rd.dropped
}
