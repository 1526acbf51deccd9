// Package flaghelp parses a command line with the flag package the way
// careful command-line tools do (go help, git, cargo): the help a user
// asked for (-h, -help, --help) is printed on standard output, so that it
// can be paged or searched, while a usage error (an unknown flag, a bad
// value) and the usage after it stay on the flag set's output, standard
// error.
package flaghelp

import (
	"bytes"
	"errors"
	"flag"
	"io"
)

// Parse parses args with fs, which must be a flag.ContinueOnError flag set
// whose Usage writes to fs.Output() (as flag's default Usage does). When
// args ask for help, what Usage prints goes to stdout and Parse returns
// flag.ErrHelp; on any other error, the error and the usage go to
// fs.Output(), as fs.Parse prints them. A flag set that exits on error is
// parsed as fs.Parse parses it, its help on fs.Output().
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if fs.ErrorHandling() != flag.ContinueOnError {
		return fs.Parse(args)
	}
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	dst := out
	if errors.Is(err, flag.ErrHelp) {
		dst = stdout
	}
	// A failed write of the help or of the error changes nothing: the
	// parse result stands.
	_, _ = buf.WriteTo(dst)
	return err
}

// PrintUsage prints fs's usage (fs.Usage, which must write to
// fs.Output()) on w: stdout for help a user asked for outside of Parse.
func PrintUsage(fs *flag.FlagSet, w io.Writer) {
	out := fs.Output()
	fs.SetOutput(w)
	fs.Usage()
	fs.SetOutput(out)
}
