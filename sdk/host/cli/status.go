package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/acquire"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/internal/oneline"
	"github.com/symposium-dev/symposium-pm/sdk/internal/printable"
)

const statusUsage = `Usage: symposium-pm status [flags]

Lists each package manager: the built-in ones found by name
(symposium-pm-<name> next to symposium-pm or on PATH) and every
[[package-manager]] entry. For each: where it comes from (built in, a
command, or an installation source and where it is configured), the version
acquired for an installation source, the binary, and whether it answers
initialize, with its name, version and capabilities. PMs not acquired yet
are not acquired here: run symposium-pm sync.

Then lists each plugin registry: the built-in ones that are on and every
[[registry]] entry, with, for a git registry, the commit cached and how old
it is (symposium-pm discover --refresh fetches it), and for a path
registry whether the directory exists. The built-in user-plugins registry
is ignored until its directory is made: that is a note, not a problem.

Exit code 0 when every configured PM (and every built-in one installed)
answers and every configured registry path exists, 1 otherwise or when the
configuration is invalid, 2 for a bad command line.

With --json prints {"version":1,"package_managers":[{"name","origin",
"configured_at","acquired","command","answers","pm_name","pm_version",
"protocol_version","capabilities","error"}],"registries":[{"name","kind",
"location","builtin","configured_at","commit","fetched_at","error"}],
"warnings":[{"pm","message","file","line"}]}.

Flags:
`

// pmStatus is one row of symposium-pm status.
type pmStatus struct {
	Name            string   `json:"name"`
	Origin          string   `json:"origin"`
	ConfiguredAt    string   `json:"configured_at,omitempty"`
	Acquired        string   `json:"acquired,omitempty"`
	Command         string   `json:"command,omitempty"`
	Answers         bool     `json:"answers"`
	PMName          string   `json:"pm_name,omitempty"`
	PMVersion       string   `json:"pm_version,omitempty"`
	ProtocolVersion int      `json:"protocol_version,omitempty"`
	Capabilities    []string `json:"capabilities"`
	Error           string   `json:"error,omitempty"`
	// absent marks a built-in PM that is not installed: not a failure.
	absent bool
}

// registryStatus is one registry of symposium-pm status.
type registryStatus struct {
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	Location     string     `json:"location"`
	Builtin      bool       `json:"builtin"`
	ConfiguredAt string     `json:"configured_at,omitempty"`
	Commit       string     `json:"commit,omitempty"`
	FetchedAt    *time.Time `json:"fetched_at,omitempty"`
	Error        string     `json:"error,omitempty"`
	// failed marks a problem that fails the command.
	failed bool
	// note marks an Error that is no problem: the built-in user-plugins
	// directory not made yet, which the registry is ignored without.
	note bool
}

// statusDoc is the --json output of status.
type statusDoc struct {
	Version         int              `json:"version"`
	PackageManagers []pmStatus       `json:"package_managers"`
	Registries      []registryStatus `json:"registries"`
	Warnings        []Warning        `json:"warnings"`
}

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("status", statusUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	noStart := fs.Bool("no-start", false, "do not start the PMs (initialize is not tried)")
	if code, ok := parseArgs(fs, args, noArgs(), stdout); !ok {
		return code
	}
	s, code := openSession("status", &cf, *asJSON, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	rows := statusRows(s)
	if !*noStart {
		var wg sync.WaitGroup
		for i := range rows {
			r := &rows[i]
			if r.Command == "" {
				continue
			}
			wg.Go(func() {
				conn, err := s.pms.Conn(ctx, r.Name)
				if err != nil {
					r.Error = err.Error()
					return
				}
				info := conn.Info()
				r.Answers = true
				r.PMName, r.PMVersion, r.ProtocolVersion = info.Name, info.Version, info.ProtocolVersion
				r.Capabilities = info.Capabilities
			})
		}
		wg.Wait()
	}
	for i := range rows {
		if rows[i].Capabilities == nil {
			rows[i].Capabilities = []string{}
		}
	}
	regs := registryRows(s, time.Now())
	if *asJSON {
		if rows == nil {
			rows = []pmStatus{}
		}
		doc := statusDoc{Version: JSONVersion, PackageManagers: rows, Registries: regs, Warnings: s.cfgWarnings}
		if err := printJSON(stdout, doc); err != nil {
			fmt.Fprintf(stderr, "symposium-pm status: %v\n", err)
			return ExitFailure
		}
	} else {
		printStatus(stdout, rows, *noStart)
		printRegistries(stdout, regs, time.Now())
		// The set-up's warnings are the rows' problems already.
		warnings := make([]string, len(s.cfgWarnings))
		for i, w := range s.cfgWarnings {
			warnings[i] = indentTail(w.Message)
		}
		printItems(stdout, fmt.Sprintf("Warnings (%d):", len(warnings)), warnings)
	}
	if slices.ContainsFunc(regs, func(r registryStatus) bool { return r.failed }) {
		return ExitFailure
	}
	if *noStart {
		return ExitOK
	}
	if slices.ContainsFunc(rows, func(r pmStatus) bool { return !r.Answers && !r.absent }) {
		return ExitFailure
	}
	return ExitOK
}

// registryRows describes every registry of the configuration, reading
// only the cache (nothing is fetched).
func registryRows(s *session, now time.Time) []registryStatus {
	out := []registryStatus{}
	for _, r := range s.cfg.Registries {
		row := registryStatus{Name: r.Name, Builtin: r.Builtin}
		if !r.Builtin {
			row.ConfiguredAt = r.Pos.String()
		}
		if r.Path != "" {
			row.Kind, row.Location = "path", r.Path
			if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
				if r.Builtin {
					row.Error, row.note = "no directory yet (put plugins there to use it)", true
				} else {
					row.Error, row.failed = fmt.Sprintf("%s is not a directory", r.Path), true
				}
			}
		} else {
			row.Kind, row.Location = "git", r.Git
			if r.Ref != "" {
				row.Location += "@" + r.Ref
			}
			if c := registryCache(s.opts.CacheDir, r); c.Fetched {
				row.Commit = c.Commit
				at := c.FetchedAt
				row.FetchedAt = &at
			} else {
				row.Error = "never fetched; run `symposium-pm discover --refresh` to fetch it"
			}
		}
		out = append(out, row)
	}
	return out
}

func printRegistries(w io.Writer, regs []registryStatus, now time.Time) {
	if len(regs) == 0 {
		fmt.Fprintln(w, "\nNo registries.")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REGISTRY\tKIND\tLOCATION\tCOMMIT\tFETCHED")
	var problems, notes []string
	for _, r := range regs {
		commit, fetched := "-", "-"
		if r.Commit != "" {
			commit = shortVersion(r.Commit)
		}
		if r.FetchedAt != nil {
			fetched = age(now, *r.FetchedAt)
		}
		name := r.Name
		if r.Builtin {
			name += " (built in)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(name), r.Kind, cell(r.Location), cell(commit), fetched)
		switch {
		case r.note:
			notes = append(notes, fmt.Sprintf("registry %s: %s", r.Name, r.Error))
		case r.Error != "":
			problems = append(problems, fmt.Sprintf("registry %s: %s", r.Name, r.Error))
		}
	}
	tw.Flush()
	printItems(w, "Registry problems:", problems)
	printItems(w, "Registry notes:", notes)
}

// printItems prints items as a list under heading, after a blank line;
// nothing when there are none.
func printItems(w io.Writer, heading string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", heading)
	for _, it := range items {
		fmt.Fprintf(w, "  - %s\n", printable.String(it))
	}
}

// cell renders text for a cell of a table printed to the terminal: what
// comes from a PM or a package without what a terminal would interpret
// (printable.String), on one line (oneline.Flatten).
func cell(s string) string { return oneline.Flatten(printable.String(s)) }

// statusRows describes every PM the configuration yields, without starting
// any: the built-ins not overridden, then the [[package-manager]] entries.
func statusRows(s *session) []pmStatus {
	specs := map[string]host.Spec{}
	for _, sp := range s.set.Specs {
		specs[sp.Name] = sp
	}
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		exeDir = filepath.Dir(exe)
	}
	var rows []pmStatus
	for _, name := range discovery.BuiltinPMs {
		if slices.ContainsFunc(s.cfg.PackageManagers, func(pm config.PackageManager) bool { return pm.Name == name }) {
			continue
		}
		r := pmStatus{Name: name, Origin: "built in"}
		if sp, ok := specs[name]; ok {
			r.Command = sp.Command
		} else if _, err := host.LookPathNextTo(exeDir, "symposium-pm-"+name); err != nil {
			r.Error, r.absent = "symposium-pm-"+name+" is not installed", true
		}
		rows = append(rows, r)
	}
	for _, pm := range s.cfg.PackageManagers {
		r := pmStatus{Name: pm.Name, ConfiguredAt: pm.Pos.String()}
		if sp, ok := specs[pm.Name]; ok {
			r.Command = sp.Command
		}
		if pm.Source != "" && pm.Command == "" {
			src, err := acquire.Parse(pm)
			if err != nil {
				r.Origin, r.Error = "source "+pm.Source, err.Error()
				rows = append(rows, r)
				continue
			}
			r.Origin = src.String()
			if inst, err := acquire.Installed(s.opts.CacheDir, src); err != nil {
				if f := acquire.LastFailure(s.opts.CacheDir, src); f != nil {
					r.Error = fmt.Sprintf("%v: the last `symposium-pm sync` (%s) failed: %s; fix the cause, then run sync again", err, f.At.Format(time.RFC3339), f.Error)
				} else {
					r.Error = fmt.Sprintf("%v; run `symposium-pm sync` to acquire it", err)
				}
			} else {
				r.Acquired = inst.Version
			}
		} else {
			r.Origin = "command " + filepath.Base(pm.Command)
			if r.Command == "" {
				r.Error = fmt.Sprintf("command %q not found", pm.Command)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func printStatus(w io.Writer, rows []pmStatus, noStart bool) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No package managers.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tORIGIN\tACQUIRED\tANSWERS\tVERSION\tCAPABILITIES")
	var problems []string
	for _, r := range rows {
		acquired := r.Acquired
		if acquired == "" {
			acquired = "-"
		}
		answers := "no"
		switch {
		case r.Answers:
			answers = "yes"
		case r.absent:
			answers = "-"
		case noStart && r.Command != "":
			answers = "not started"
		}
		version := r.PMVersion
		if version == "" {
			version = "-"
		}
		caps := strings.Join(r.Capabilities, ",")
		if caps == "" {
			caps = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Origin, acquired, answers, version, caps)
		if r.Error != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", r.Name, indentTail(r.Error)))
		}
	}
	tw.Flush()
	printItems(w, "Problems:", problems)
}
