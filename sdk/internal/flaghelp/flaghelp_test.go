package flaghelp

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		err            error // nil, flag.ErrHelp, or errBad for any other
		stdout, stderr string
	}{
		{[]string{"-v"}, nil, "", ""},
		{[]string{"-h"}, flag.ErrHelp, "usage of t\n", ""},
		{[]string{"--help"}, flag.ErrHelp, "usage of t\n", ""},
		{[]string{"-v", "-help", "x"}, flag.ErrHelp, "usage of t\n", ""},
		{[]string{"--nope"}, errBad, "", "flag provided but not defined: -nope\nusage of t\n"},
		{[]string{"-v=maybe"}, errBad, "", "invalid boolean value \"maybe\" for -v: parse error\nusage of t\n"},
	} {
		var stdout, stderr bytes.Buffer
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(&stderr)
		fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage of t") }
		fs.Bool("v", false, "")
		err := Parse(fs, tc.args, &stdout)
		if (tc.err == nil) != (err == nil) || (tc.err == flag.ErrHelp) != errors.Is(err, flag.ErrHelp) ||
			stdout.String() != tc.stdout || stderr.String() != tc.stderr {
			t.Errorf("%q: err %v\nstdout %q, want %q\nstderr %q, want %q", tc.args, err, stdout.String(), tc.stdout, stderr.String(), tc.stderr)
		}
		if fs.Output() != &stderr {
			t.Errorf("%q: the flag set's output is not restored", tc.args)
		}
		// What the flag set prints later still goes to its own output.
		stdout.Reset()
		stderr.Reset()
		PrintUsage(fs, &stdout)
		fs.Usage()
		if stdout.String() != "usage of t\n" || stderr.String() != "usage of t\n" {
			t.Errorf("%q: PrintUsage then Usage: stdout %q, stderr %q", tc.args, stdout.String(), stderr.String())
		}
	}
}

var errBad = errors.New("a usage error")
