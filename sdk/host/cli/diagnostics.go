package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// pmReports are the diagnostics a PM sent while answering one request
// (docs/protocol.md §4.7), as the commands that send a single request
// (call, load) show them: warnings shaped as discover --json's, and the
// informational ones as notes, as discover has them.
type pmReports struct {
	warnings []Warning
	notes    []string
	// lines are the human form of each, in the order sent, for stderr.
	lines []string
}

// reportsOf converts the diagnostics pm sent while answering method.
func reportsOf(pm, method string, ds []protocol.Diagnostic) pmReports {
	ws := make([]host.Warning, 0, len(ds))
	for _, d := range ds {
		ws = append(ws, host.DiagnosticWarning(pm, method, d))
	}
	r, _ := splitReports(ws)
	return r
}

// splitReports converts the host warnings that carry a PM's diagnostic
// into reports, in order, and returns the others (a PM that failed) apart.
func splitReports(ws []host.Warning) (pmReports, []host.Warning) {
	r := pmReports{warnings: []Warning{}, notes: []string{}}
	var rest []host.Warning
	for _, hw := range ws {
		d := hw.Diagnostic
		if d == nil {
			rest = append(rest, hw)
			continue
		}
		// The JSON message is discover's, word for word.
		msg := hw.String()
		kind := "warning"
		if d.Level == protocol.LevelInfo {
			kind = "note"
			r.notes = append(r.notes, msg)
		} else {
			r.warnings = append(r.warnings, Warning{PM: hw.PM, Message: msg, File: d.File, Line: d.Line})
		}
		r.lines = append(r.lines, humanDiagnostic(kind, hw.PM, *d))
	}
	return r, rest
}

// humanDiagnostic renders one diagnostic for stderr:
// "warning: PM: FILE:LINE: MESSAGE", the place and the package when known.
// Later lines of a multi-line message are indented under the first.
func humanDiagnostic(kind, pm string, d protocol.Diagnostic) string {
	var b strings.Builder
	b.WriteString(kind + ": ")
	if pm != "" {
		b.WriteString(pm + ": ")
	}
	if d.File != "" {
		b.WriteString(d.File)
		if d.Line > 0 {
			b.WriteString(":" + strconv.Itoa(d.Line))
		}
		b.WriteString(": ")
	}
	msg := d.Message
	if d.Package != nil && d.Package.Name != "" && !strings.Contains(msg, d.Package.Name) {
		msg = d.Package.String() + ": " + msg
	}
	b.WriteString(strings.ReplaceAll(msg, "\n", "\n    "))
	return b.String()
}

// print writes the human form of every report on w, one per line.
func (r pmReports) print(w io.Writer) {
	for _, l := range r.lines {
		fmt.Fprintln(w, l)
	}
}
