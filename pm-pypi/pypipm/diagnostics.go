package pypipm

import (
	"context"
	"errors"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pydist"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// warn logs something dropped or degraded and hands it to the host as a
// diagnostic of the request ctx belongs to (docs/protocol.md §4.7), so that
// the user sees it without debug logging.
func (p *PM) warn(ctx context.Context, d pmserver.Diagnostic, logMsg string, args ...any) {
	p.log.Warn(logMsg, args...)
	// The same redaction as the log's: warnings quote requirement lines.
	d.Message, d.File = redact.Text(d.Message), redact.Text(d.File)
	pmserver.Warn(ctx, d)
}

// idRef is the id of a distribution for a diagnostic.
func idRef(id protocol.PackageID) *protocol.PackageID { return &id }

// rwarn is warn for the list_deps resolver: the diagnostic names path and
// says what became of it (consequence), and belongs to the list_deps call.
func (r *resolver) rwarn(path string, err error, consequence, logMsg string, args ...any) {
	msg, line := err.Error(), 0
	if path != "" {
		// The diagnostic's File names the file: the message does not
		// name it again.
		msg, line = placedProblem(err)
		msg = strings.TrimPrefix(msg, path+": ")
	}
	if consequence != "" {
		msg += "; " + consequence
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	r.pm.warn(ctx, pmserver.Diagnostic{Message: msg, File: path, Line: line}, logMsg, args...)
}

// placedProblem splits a parse error of one file into what is wrong and
// its line (0 when unknown), for a diagnostic whose File names the file:
// the message then does not name it a second time.
func placedProblem(err error) (msg string, line int) {
	var te *tomlfile.Error
	var ee *pydist.EntryPointsError
	switch {
	case errors.As(err, &te):
		msg = te.Msg
		if te.Key != "" {
			msg = te.Key + ": " + msg
		}
		return msg, te.Line
	case errors.As(err, &ee):
		return ee.Msg, ee.Line
	}
	return err.Error(), 0
}
