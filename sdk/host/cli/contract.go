package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/internal/flaghelp"
)

// JSONVersion is the version of the shape of every --json document this
// command prints (the "version" member). It changes when a member is
// removed or changes meaning; new members may appear within a version.
const JSONVersion = 1

// Warning is a problem that did not stop a command, as --json prints it.
type Warning struct {
	// PM names the package manager or registry concerned, when one is.
	PM string `json:"pm,omitempty"`
	// Message says what went wrong and, when known, what to do.
	Message string `json:"message"`
	// File and Line locate the problem, when it is in a file.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String renders the warning on one line (or more, for PM stderr excerpts).
func (w Warning) String() string { return w.Message }

var (
	// pmPrefix finds the pm a host or discovery message names.
	pmPrefix = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:pm|registry|package manager) "?([A-Za-z0-9][A-Za-z0-9._-]*)"?[: ]`)
	})
	// filePos finds the first file:line in a message.
	filePos = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s(])((?:/|\.{1,2}/|[A-Za-z0-9_-]+/)?[^\s:()"]*[A-Za-z0-9_.-]+\.(?:toml|json|md|lock|txt|cfg|py)):(\d+)`)
	})
)

// warningOf turns a message into a Warning, finding the pm and the first
// file:line it names.
func warningOf(msg string) Warning {
	w := Warning{Message: msg}
	if m := pmPrefix().FindStringSubmatch(msg); m != nil {
		w.PM = m[1]
	}
	if m := filePos().FindStringSubmatch(msg); m != nil {
		w.File = m[1]
		w.Line, _ = strconv.Atoi(m[2])
	}
	return w
}

// hostWarnings converts host warnings, which know their PM.
func hostWarnings(ws []host.Warning) []Warning {
	out := make([]Warning, 0, len(ws))
	for _, hw := range ws {
		w := warningOf(hw.String())
		if hw.PM != "" {
			w.PM = hw.PM
		}
		out = append(out, w)
	}
	return out
}

// stringWarnings converts messages.
func stringWarnings(ms []string) []Warning {
	out := make([]Warning, 0, len(ms))
	for _, m := range ms {
		out = append(out, warningOf(m))
	}
	return out
}

// configWarnings converts configuration problems, which know their place.
func configWarnings(es []*config.Error) []Warning {
	out := make([]Warning, 0, len(es))
	for _, e := range es {
		out = append(out, Warning{Message: e.Error(), File: e.Pos.File, Line: e.Pos.Line})
	}
	return out
}

// problemsOf splits a joined configuration error into its problems.
func problemsOf(err error) []Warning {
	var out []Warning
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var ce *config.Error
		if errors.As(err, &ce) {
			out = append(out, Warning{Message: ce.Msg, File: ce.Pos.File, Line: ce.Pos.Line})
			return
		}
		out = append(out, warningOf(err.Error()))
	}
	walk(err)
	return out
}

// errorDoc is what a command given --json prints when it cannot do its
// job at all: the configuration is invalid, a named thing does not exist.
type errorDoc struct {
	Version  int       `json:"version"`
	Error    string    `json:"error"`
	Problems []Warning `json:"problems"`
}

// fail reports a failure of command cmd: on stderr, and also as a JSON
// error document on stdout when asJSON. It returns ExitFailure.
func fail(stdout, stderr io.Writer, asJSON bool, cmd string, err error) int {
	fmt.Fprintf(stderr, "symposium-pm %s: %v\n", cmd, err)
	if asJSON {
		printJSON(stdout, errorDoc{Version: JSONVersion, Error: err.Error(), Problems: problemsOf(err)})
	}
	return ExitFailure
}

// StateID is a plugin state as an identifier, as --json prints it and the
// table shows it: enabled, needs-consent, disabled, dormant or invalid.
func StateID(s discovery.State) string { return strings.ReplaceAll(string(s), " ", "-") }

// arity says how many positional arguments a command takes, and their
// names for messages.
type arity struct {
	min, max int // max < 0: any number
	names    string
}

// noArgs is the arity of a command that takes only flags.
func noArgs() arity { return arity{0, 0, ""} }

// parseArgs parses a subcommand's arguments, with flags accepted before and
// after positional ones (up to a "--", after which everything is
// positional). When it reports false, the command returns code at once:
// ExitOK after the help asked for with -h or --help, printed on stdout;
// ExitUsage after a usage error, printed on stderr with a line saying what
// was wrong.
func parseArgs(fs *flag.FlagSet, argv []string, want arity, stdout io.Writer) (code int, ok bool) {
	var pos []string
	rest := argv
	for {
		if err := flaghelp.Parse(fs, rest, stdout); err != nil {
			if err == flag.ErrHelp {
				return ExitOK, false
			}
			return ExitUsage, false
		}
		left := fs.Args()
		consumed := len(rest) - len(left)
		if consumed > 0 && rest[consumed-1] == "--" {
			pos = append(pos, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		pos = append(pos, left[0])
		rest = left[1:]
	}
	// Leave the positional arguments where fs.Arg finds them.
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return ExitUsage, false
	}
	switch {
	case len(pos) < want.min:
		// Only the required arguments are missing, not the optional
		// ones after them.
		missing := strings.Fields(want.names)
		if len(pos) < len(missing) {
			missing = missing[len(pos):min(want.min, len(missing))]
		}
		usageError(fs, "missing %s", strings.Join(missing, " "))
		return ExitUsage, false
	case want.max >= 0 && len(pos) > want.max:
		if want.max == 0 {
			usageError(fs, "unexpected argument %q: this command takes no arguments, only flags", pos[0])
		} else {
			usageError(fs, "unexpected argument %q: this command takes %s", pos[want.max], want.names)
		}
		return ExitUsage, false
	}
	return ExitOK, true
}

// usageError prints what was wrong, then the usage.
func usageError(fs *flag.FlagSet, format string, a ...any) {
	fmt.Fprintf(fs.Output(), "symposium-pm %s: %s\n\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
}
