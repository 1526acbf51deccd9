package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestHelpOnStdout: the help a user asks for, for every command (COMMAND
// --help, COMMAND -h, help COMMAND), is the command's usage on stdout with
// exit 0 and nothing on stderr, so that `symposium-pm discover --help |
// grep json` finds something; a bad flag is a usage error: the error and
// the usage on stderr, nothing on stdout, exit 2.
func TestHelpOnStdout(t *testing.T) {
	names := make([]string, 0, len(commands()))
	for name := range commands() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		usage := "Usage: symposium-pm " + name + " "
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {name, "-help"}, {"help", name}} {
			code, out, errOut := runMain(t, args...)
			if code != ExitOK || !strings.HasPrefix(out, usage) || !strings.Contains(out, "\n  -") || errOut != "" {
				t.Errorf("symposium-pm %s: exit %d, want %d with the usage and flags on stdout and nothing on stderr\nstdout %q\nstderr %q",
					strings.Join(args, " "), code, ExitOK, out, errOut)
			}
		}
		// The flag is refused before anything runs, "--" or not.
		args := []string{name, "--no-such-flag", "--", "symposium-pm-fixture"}
		code, out, errOut := runMain(t, args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "flag provided but not defined: -no-such-flag\n"+usage) {
			t.Errorf("symposium-pm %s: exit %d, want %d with the error and the usage on stderr and nothing on stdout\nstdout %q\nstderr %q",
				strings.Join(args, " "), code, ExitUsage, out, errOut)
		}
	}
}
