package protocol

import "encoding/json"

// MethodDiagnostic is the method of the one notification of the protocol,
// sent by a PM to the host: a problem the PM met while answering a request
// that did not stop it from answering (a manifest layer it had to drop, a
// dependency table it could not read). Its params are a Diagnostic.
//
// A PM may send it whatever the host announced: a host MUST ignore a
// notification it does not know. A PM sends each diagnostic while the
// request it names is in flight, before that request's response, on the
// same ordered stream, so a host has every diagnostic of a request by the
// time it reads the response. See docs/protocol.md §4.7.
const MethodDiagnostic = "diagnostic"

// DiagnosticLevel says how much a diagnostic matters.
type DiagnosticLevel string

// The diagnostic levels. An absent level means LevelWarning; a host treats
// a level it does not know as LevelWarning.
const (
	// LevelWarning: something was dropped or degraded; the user should act.
	LevelWarning DiagnosticLevel = "warning"
	// LevelInfo: a statement about the answer the user may want to know,
	// such as an offer whose root is an editable project rather than an
	// installed copy.
	LevelInfo DiagnosticLevel = "info"
)

// Valid reports whether l is absent or one of the defined levels.
func (l DiagnosticLevel) Valid() bool {
	switch l {
	case "", LevelWarning, LevelInfo:
		return true
	}
	return false
}

// MaxDiagnosticSize bounds one diagnostic notification line, in bytes. A
// PM MUST NOT send a longer one; a host drops a longer one and reports it.
const MaxDiagnosticSize = 16 << 10

// MaxDiagnostics bounds how many diagnostics a host keeps for one request;
// a PM SHOULD stay well under it (one diagnostic per problem, not per line).
const MaxDiagnostics = 100

// Diagnostic is the params of a diagnostic notification.
type Diagnostic struct {
	// Request is the id of the request the diagnostic belongs to, exactly
	// as the request carried it (a string or an integer).
	Request json.RawMessage `json:"request"`
	// Level is LevelWarning (the default when absent) or LevelInfo.
	Level DiagnosticLevel `json:"level,omitempty"`
	// Message says what was dropped or degraded and why, in the user's
	// terms, and what to do when there is something to do (§7.3).
	Message string `json:"message"`
	// File is the absolute path of the file concerned, when there is one.
	File string `json:"file,omitempty"`
	// Line is the 1-based line in File, when known.
	Line int `json:"line,omitempty"`
	// Package is the package concerned, when there is one, under this PM's
	// name.
	Package *PackageID `json:"package,omitempty"`
}
