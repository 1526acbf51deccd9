// Package cli implements symposium-pm, the host-side command line: the
// reference of what Symposium does with package managers, for debugging PMs
// and for checking them.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand.
type command struct {
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"call":     {cmdCall, "send one raw request to a PM command and print the result"},
		"discover": {cmdDiscover, "discover the workspace's plugins across every PM and decide which run"},
		"search":   {cmdSearch, "search every PM and registry for packages matching a fragment of a name"},
		"load":     {cmdLoad, "load one package's plugins through its PM and validate them"},
		"validate": {cmdValidate, "check plugins as they ship: packages, manifests, plugin directories, a whole registry"},
		"manifest": {cmdManifest, "print a manifest's wire JSON, exactly what a PM would send"},
		"check":    {cmdCheck, "run the conformance suite against a PM command"},
		"sync":     {cmdSync, "acquire or update the package managers configured with an installation source"},
		"status":   {cmdStatus, "list each package manager: origin, version acquired, whether it answers, capabilities"},
		"migrate":  {cmdMigrate, "rewrite retired manifest keys to the current schema, in place (--check, --diff)"},
	}
}

// Exit codes of symposium-pm.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the command's job failed (every PM failed, invalid configuration, a named thing does not exist)
	ExitUsage   = 2 // the command line was wrong
)

// Main runs symposium-pm with args (without the program name) and returns
// its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprint(stderr, "symposium-pm: missing COMMAND\n\n")
		usage(stderr, cmds)
		return ExitUsage
	}
	if args[0] == "help" && len(args) > 1 {
		// help COMMAND is COMMAND --help, as the usage's last lines suggest.
		if c, ok := cmds[args[1]]; ok && len(args) == 2 {
			return c.run(ctx, []string{"--help"}, stdout, stderr)
		}
		if args[1] == "version" && len(args) == 2 {
			fmt.Fprintln(stdout, "Usage: symposium-pm version (or --version)\n\nPrints symposium-pm's version on stdout.")
			return ExitOK
		}
		fmt.Fprintf(stderr, "symposium-pm help: want one command name, got %q\n\n", strings.Join(args[1:], " "))
		usage(stderr, cmds)
		return ExitUsage
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintf(stdout, "symposium-pm %s\n", buildVersion())
		return ExitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "symposium-pm: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return ExitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: symposium-pm COMMAND [ARGS]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "symposium-pm runs package managers (PMs) the way Symposium does: it spawns them,")
	fmt.Fprintln(w, "speaks the PM protocol with them, and validates what they offer.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "version", "print symposium-pm's version (also --version)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'symposium-pm help COMMAND' (or 'symposium-pm COMMAND --help') for a command's")
	fmt.Fprintln(w, "flags; flags may come before or after the arguments. Exit codes: 0 success, 1 the")
	fmt.Fprintln(w, "command's job failed (every PM failed, the configuration is invalid, a named thing")
	fmt.Fprintln(w, "does not exist), 2 bad usage. --json documents carry \"version\": 1. See docs/cli.md.")
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// flagSet returns the flag set of a subcommand whose usage is usage
// followed by its flags. The usage and parse errors go to stderr, but for
// help the user asked for, which parseArgs (through flaghelp) prints on
// stdout.
func flagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	return fs
}
