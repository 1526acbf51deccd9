package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/internal/printable"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Bounds on what the host keeps of a PM's diagnostics (docs/protocol.md
// §4.7). A diagnostic notification line longer than
// protocol.MaxDiagnosticSize is dropped and reported; of one request's
// diagnostics the host keeps at most protocol.MaxDiagnostics and
// MaxDiagnosticBytes in all, and reports how many it dropped.
const (
	// MaxDiagnosticBytes bounds the diagnostics kept for one request, in
	// bytes of their lines.
	MaxDiagnosticBytes = 256 << 10
	// maxStray bounds the reports kept about diagnostics that name no
	// request in flight, until the next call collects them.
	maxStray = 10
	// maxUnclaimed bounds the answered requests whose diagnostics wait to
	// be collected by their call (a call that timed out never collects).
	maxUnclaimed = 32
)

// CallDiagnostics is Call, returning also the diagnostics the PM sent for
// this request (docs/protocol.md §4.7), in the order sent. They are
// bounded: at most protocol.MaxDiagnostics, and MaxDiagnosticBytes, per
// request; a diagnostic line over protocol.MaxDiagnosticSize is dropped;
// what was dropped is counted in one last diagnostic the host adds. A
// diagnostic that is not valid, or names no request in flight, is hostile
// input: it is dropped and reported by a diagnostic the host adds to this
// call or, when it cannot be attributed, to the next call that succeeds.
// Control characters other than newline and tab are removed from every
// text. Diagnostics of a call that fails are not returned.
func (c *Conn) CallDiagnostics(ctx context.Context, method string, params, result any) ([]protocol.Diagnostic, error) {
	var diags []protocol.Diagnostic
	err := c.callDiag(ctx, method, params, result, &diags)
	if err != nil {
		return nil, err
	}
	return diags, nil
}

// diagBox collects the diagnostics of one connection, per request.
type diagBox struct {
	mu        sync.Mutex
	inflight  map[string]*requestDiags // requests sent and not answered
	answered  map[string]*requestDiags // answered, not collected yet
	order     []string                 // keys of answered, oldest first
	stray     []protocol.Diagnostic    // reports naming no request in flight
	strayLost int
}

// requestDiags are the diagnostics of one request.
type requestDiags struct {
	list    []protocol.Diagnostic
	size    int
	dropped int
}

func newDiagBox() *diagBox {
	return &diagBox{inflight: map[string]*requestDiags{}, answered: map[string]*requestDiags{}}
}

// sent records the requests of an outgoing message as in flight.
func (b *diagBox) sent(envs []framing.Envelope) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range envs {
		if e.IsCall() {
			b.inflight[framing.IDKey(e.ID)] = &requestDiags{}
		}
	}
}

// inFlight reports whether the request with the given id key was sent and
// not answered yet.
func (b *diagBox) inFlight(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.inflight[key]
	return ok
}

// response moves a request answered from in flight to waiting for its
// call to collect its diagnostics.
func (b *diagBox) response(id json.RawMessage) {
	key := framing.IDKey(id)
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.inflight[key]
	if !ok {
		return
	}
	delete(b.inflight, key)
	if len(d.list) == 0 && d.dropped == 0 {
		return
	}
	b.answered[key] = d
	b.order = append(b.order, key)
	for len(b.order) > maxUnclaimed {
		delete(b.answered, b.order[0])
		b.order = b.order[1:]
	}
}

// collect returns the diagnostics of the answered request with raw id,
// followed by the count of those dropped and the reports about stray
// diagnostics, and forgets them.
func (b *diagBox) collect(id string) []protocol.Diagnostic {
	key := framing.IDKey(json.RawMessage(id))
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []protocol.Diagnostic
	if d, ok := b.answered[key]; ok {
		delete(b.answered, key)
		if i := indexOf(b.order, key); i >= 0 {
			b.order = append(b.order[:i], b.order[i+1:]...)
		}
		out = d.list
		if d.dropped > 0 {
			out = append(out, hostDiagnostic(fmt.Sprintf(
				"the PM sent %d more diagnostics for this request, dropped: the host keeps at most %d (%d KiB) per request",
				d.dropped, protocol.MaxDiagnostics, MaxDiagnosticBytes>>10)))
		}
	}
	out = append(out, b.stray...)
	if b.strayLost > 0 {
		out = append(out, hostDiagnostic(fmt.Sprintf("%d more diagnostics that are not valid or name no request in flight were dropped", b.strayLost)))
	}
	b.stray, b.strayLost = nil, 0
	return out
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// hostDiagnostic is a report the host itself adds about the PM's
// diagnostics.
func hostDiagnostic(msg string) protocol.Diagnostic {
	return protocol.Diagnostic{Level: protocol.LevelWarning, Message: msg}
}

// diagnosticMethod finds a diagnostic notification's method in the head of
// a line too long to read whole.
var diagnosticMethod = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"method"\s*:\s*"diagnostic"`) })

// oversize reports a diagnostic notification too long for the framing
// limit: it cannot be attributed, so it is a stray report.
func (b *diagBox) oversize(size, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.strayLocked(fmt.Sprintf("the PM sent a diagnostic of %d bytes, over the line limit of %d; dropped", size, limit))
}

func (b *diagBox) strayLocked(msg string) {
	if len(b.stray) >= maxStray {
		b.strayLost++
		return
	}
	b.stray = append(b.stray, hostDiagnostic(msg))
}

// notification handles a notification line from the PM. Every problem
// with it is reported, never fatal.
func (b *diagBox) notification(method string, line []byte) {
	if method != protocol.MethodDiagnostic {
		return // a notification this host does not know: ignored (§4.2)
	}
	var raw struct {
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(line, &raw) // the line is known to be a JSON object
	req := requestOf(raw.Params)
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.inflight[framing.IDKey(req)]
	if len(line) > protocol.MaxDiagnosticSize {
		msg := fmt.Sprintf("the PM sent a diagnostic of %d bytes, over the limit of %d; dropped", len(line), protocol.MaxDiagnosticSize)
		if d == nil {
			b.strayLocked(msg)
		} else {
			d.addLocked(hostDiagnostic(msg), len(msg))
		}
		return
	}
	diag, problem := parseDiagnostic(raw.Params)
	switch {
	case problem != "" && d == nil:
		b.strayLocked(fmt.Sprintf("the PM sent a diagnostic that is not valid (%s); dropped: %s", problem, quoteLine(line)))
	case problem != "":
		msg := fmt.Sprintf("the PM sent a diagnostic that is not valid (%s); dropped: %s", problem, quoteLine(line))
		d.addLocked(hostDiagnostic(msg), len(msg))
	case d == nil:
		b.strayLocked(fmt.Sprintf("the PM sent a diagnostic for request %s, which is not a request in flight; dropped: %s",
			printable.String(string(diag.Request)), printable.String(diag.Message)))
	default:
		d.addLocked(diag, len(line))
	}
}

// addLocked keeps diag within the per-request bounds.
func (d *requestDiags) addLocked(diag protocol.Diagnostic, size int) {
	if len(d.list) >= protocol.MaxDiagnostics || d.size+size > MaxDiagnosticBytes {
		d.dropped++
		return
	}
	d.list = append(d.list, diag)
	d.size += size
}

// requestOf finds the request member of a diagnostic's params, or nil.
func requestOf(params json.RawMessage) json.RawMessage {
	var p struct {
		Request json.RawMessage `json:"request"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Request
}

// parseDiagnostic checks a diagnostic's params member by member, saying
// what is wrong in the protocol's terms. Members it does not know are
// ignored (§5).
func parseDiagnostic(params json.RawMessage) (protocol.Diagnostic, string) {
	var d protocol.Diagnostic
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		return d, "its params are not an object"
	}
	if !isID(m["request"]) {
		return d, "request is not a string or integer id"
	}
	d.Request = bytes.Clone(m["request"])
	str := func(key string, required bool) (string, string) {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			if required {
				return "", key + " is missing"
			}
			return "", ""
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", key + " is not a string"
		}
		return s, ""
	}
	var p string
	if d.Message, p = str("message", true); p != "" {
		return d, p
	}
	if d.Message = printable.String(d.Message); strings.TrimSpace(d.Message) == "" {
		return d, "message is empty"
	}
	level, p := str("level", false)
	if p != "" {
		return d, p
	}
	d.Level = protocol.DiagnosticLevel(level)
	if !d.Level.Valid() || d.Level == "" {
		d.Level = protocol.LevelWarning // §4.7: unknown levels are warnings
	}
	if d.File, p = str("file", false); p != "" {
		return d, p
	}
	if v, ok := m["line"]; ok && string(v) != "null" {
		var n int
		if json.Unmarshal(v, &n) != nil || n < 0 {
			return d, "line is not a positive integer"
		}
		d.Line = n
	}
	if v, ok := m["package"]; ok && string(v) != "null" {
		var id protocol.PackageID
		var pm map[string]json.RawMessage
		if json.Unmarshal(v, &pm) != nil || pm == nil {
			return d, "package is not a package id object"
		}
		for key, dst := range map[string]*string{"pm": &id.PM, "name": &id.Name, "version": &id.Version} {
			if json.Unmarshal(pm[key], dst) != nil {
				return d, "package." + key + " is not a string"
			}
		}
		id.PM, id.Name, id.Version = printable.String(id.PM), printable.String(id.Name), printable.String(id.Version)
		d.Package = &id
	}
	d.File = printable.String(d.File)
	return d, ""
}

// isID reports whether raw is a JSON string or number.
func isID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// quoteLine renders a hostile line for a message: sanitized and short.
func quoteLine(line []byte) string {
	return printable.String(truncate(line, 200))
}

// DiagnosticWarning is the Warning carrying one diagnostic pm sent while
// answering method: its Err reads "pm NAME: " and the message, naming the
// package and the file:line when the message does not already.
func DiagnosticWarning(pm, method string, d protocol.Diagnostic) Warning {
	msg := d.Message
	if d.Package != nil && d.Package.Name != "" && !strings.Contains(msg, d.Package.Name) {
		msg = d.Package.String() + ": " + msg
	}
	if d.File != "" && !strings.Contains(msg, d.File) {
		at := d.File
		if d.Line > 0 {
			at = fmt.Sprintf("%s:%d", d.File, d.Line)
		}
		msg += " (" + at + ")"
	}
	return Warning{PM: pm, Method: method, Err: fmt.Errorf("pm %s: %s", pm, msg), Diagnostic: &d}
}

// diagSink gathers the diagnostics of one multi-PM call as warnings, to be
// returned in configuration order.
type diagSink struct {
	mu sync.Mutex
	by map[string][]Warning
}

func (s *diagSink) add(pm, method string, ds []protocol.Diagnostic) {
	if len(ds) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string][]Warning{}
	}
	for _, d := range ds {
		s.by[pm] = append(s.by[pm], DiagnosticWarning(pm, method, d))
	}
}

// warnings returns the gathered warnings, PM by PM in names' order.
func (s *diagSink) warnings(names []string) []Warning {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Warning
	for _, n := range names {
		out = append(out, s.by[n]...)
	}
	return out
}
