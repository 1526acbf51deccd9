package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/symposium-dev/symposium-pm/sdk/internal/flaghelp"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const checkUsage = `Usage: symposium-pm check [flags] [--] COMMAND [ARGS...]

Runs the conformance suite (package pmtest) against the PM started by
COMMAND, in any language: the handshake and version negotiation, error codes,
announced capabilities and empty answers, ids and exact versions, fetch
idempotence, no network with update "none", end-of-input drain and
concurrent requests; and every message the PM sends, in every check, is
validated against the protocol's JSON Schema (docs/protocol.schema.json).
Each check starts the PM afresh in the workspace.

Prints one line per check (PASS, FAIL or SKIP, the sections of
docs/protocol.md it enforces, and what was seen), or with --json the report
as {"version":1,"command","pm","capabilities","checks":
[{"name","sections","status","message"}]}. Exit code 0 when no check failed, 1 when one did, 2
for a bad command line.

Without --cache-dir the PM gets a fresh temporary cache, removed afterwards.
The PM runs in the workspace: a relative COMMAND path is resolved from the
current directory, but relative paths in ARGS are the PM's own business and
resolve from the workspace.

Example:
  symposium-pm check --workspace ./my-crate -- symposium-pm-cargo
  symposium-pm check -- python3 my_pm.py

Flags:
`

// fetchIDs is the repeatable --fetch-id flag: PM:NAME@VERSION.
type fetchIDs []protocol.PackageID

func (f *fetchIDs) String() string {
	parts := make([]string, len(*f))
	for i, id := range *f {
		parts[i] = id.String()
	}
	return strings.Join(parts, ",")
}

// Set parses PM:NAME[@VERSION] as symposium-pm load does; an npm scope's
// leading @ is part of NAME.
func (f *fetchIDs) Set(v string) error {
	id, err := parseRef(v)
	if err != nil {
		return err
	}
	*f = append(*f, id)
	return nil
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("check", checkUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	fs.Lookup("cache-dir").Usage = "cache directory handed to the PM (default: a fresh temporary directory, removed afterwards)"
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var ids fetchIDs
	fs.Var(&ids, "fetch-id", "PM:NAME[@VERSION] to probe with fetch and load_plugin (repeatable)")
	list := fs.Bool("list", false, "print the names of the checks and exit")
	run := fs.String("run", "", "run only the checks whose names match this regular expression (the handshake always runs)")
	lineLimit := fs.Int("line-limit", 0, "the PM's own limit on one request line in bytes, which the oversize-line check exceeds by one (default 64 MiB, the protocol's)")
	update := fs.String("fetch-update", string(protocol.UpdateNone), "update level of the fetch probes: none, check or fetch")
	var command []string
	if dash := slices.Index(args, "--"); dash >= 0 {
		if err := flaghelp.Parse(fs, args[:dash], stdout); err != nil {
			return parseExit(err)
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "symposium-pm check: unexpected argument %q before --\n", fs.Arg(0))
			return ExitUsage
		}
		command = args[dash+1:]
	} else {
		// Flags stop at the first non-flag: the command and its own flags.
		if err := flaghelp.Parse(fs, args, stdout); err != nil {
			return parseExit(err)
		}
		command = fs.Args()
		noteCheckFlagsAfter(fs, command, stderr)
	}
	if *list {
		for _, name := range pmtest.Checks() {
			fmt.Fprintln(stdout, name)
		}
		return ExitOK
	}
	if len(command) == 0 {
		fmt.Fprintln(stderr, "symposium-pm check: missing the PM COMMAND to check")
		fs.Usage()
		return ExitUsage
	}
	u := protocol.UpdateLevel(*update)
	if !u.Valid() {
		fmt.Fprintf(stderr, "symposium-pm check: --fetch-update %q: want none, check or fetch\n", *update)
		return ExitUsage
	}
	var runRE *regexp.Regexp
	if *run != "" {
		var err error
		if runRE, err = regexp.Compile(*run); err != nil {
			fmt.Fprintf(stderr, "symposium-pm check: --run: %v\n", err)
			return ExitUsage
		}
	}
	tempCache := cf.cacheDir == ""
	hopts, err := cf.options()
	if err != nil {
		if code := optionsExit(err); code == ExitUsage {
			usageError(fs, "%v", err)
			return code
		}
		return fail(stdout, stderr, *asJSON, "check", err)
	}
	opts := []pmtest.Option{
		pmtest.WithWorkspace(hopts.Workspace),
		pmtest.WithFetchIDs(ids...),
		pmtest.WithFetchUpdate(u),
		pmtest.WithRun(runRE),
	}
	if !tempCache {
		opts = append(opts, pmtest.WithCacheDir(hopts.CacheDir))
	}
	for k, v := range hopts.Env {
		opts = append(opts, pmtest.WithEnv(k, v))
	}
	if cf.timeout > 0 {
		opts = append(opts, pmtest.WithInitializeTimeout(cf.timeout), pmtest.WithTimeout(cf.timeout), pmtest.WithSlowTimeout(cf.timeout))
	}
	if cf.maxMsg > 0 {
		opts = append(opts, pmtest.WithMaxMessageSize(cf.maxMsg))
	}
	if *lineLimit < 0 {
		fmt.Fprintf(stderr, "symposium-pm check: --line-limit %d: want a positive number of bytes\n", *lineLimit)
		return ExitUsage
	}
	if *lineLimit > 0 {
		opts = append(opts, pmtest.WithLineLimit(*lineLimit))
	}
	done := progress(stderr, fmt.Sprintf("checking %s (%d checks)", command[0], len(pmtest.Checks())))
	rep, err := pmtest.Check(ctx, command, opts...)
	done()
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm check: %v\n", err)
		return ExitUsage
	}
	if *asJSON {
		b, err := json.MarshalIndent(struct {
			Version int `json:"version"`
			*pmtest.Report
		}{JSONVersion, rep}, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "symposium-pm check: %v\n", err)
			return ExitFailure
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printReport(stdout, rep)
	}
	if rep.Failed() {
		return ExitFailure
	}
	return ExitOK
}

// noteCheckFlagsAfter says, for each of check's own flags written among
// the PM's ARGS (no -- given), that it went to the PM and where to put it
// for check. The flags every PM harness has too (--max-message-size,
// --help) are the PM's as written.
func noteCheckFlagsAfter(fs *flag.FlagSet, command []string, stderr io.Writer) {
	if len(command) < 2 {
		return
	}
	for _, a := range command[1:] {
		if a == "--" {
			return
		}
		name, ok := strings.CutPrefix(a, "-")
		if !ok || name == "" {
			continue
		}
		name = strings.TrimPrefix(name, "-")
		name, _, _ = strings.Cut(name, "=")
		switch name {
		case "max-message-size", "h", "help":
			continue
		}
		if fs.Lookup(name) != nil {
			fmt.Fprintf(stderr, "symposium-pm check: note: %s comes after the PM COMMAND %s, so it is passed to the PM; for check, put it before COMMAND\n", a, command[0])
		}
	}
}

func parseExit(err error) int {
	if err == flag.ErrHelp {
		return ExitOK
	}
	return ExitUsage
}

// printReport writes the report as a table: status, check, message.
func printReport(w io.Writer, rep *pmtest.Report) {
	pm := rep.PM
	if pm == "" {
		pm = "(no name: the handshake failed)"
	}
	fmt.Fprintf(w, "checking %s: pm %s\n", strings.Join(rep.Command, " "), pm)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Status, r.Name, strings.Join(r.Sections, " "), cell(r.Message))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", rep.Count(pmtest.Pass), rep.Count(pmtest.Fail), rep.Count(pmtest.Skip))
}
