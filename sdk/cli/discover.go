package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/symposium-dev/symposium-pm/sdk/config"
	"github.com/symposium-dev/symposium-pm/sdk/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// session is one host invocation: configuration, plugin sources and the
// running PMs.
type session struct {
	opts host.Options
	cfg  *config.Config
	set  discovery.Set
	pms  *host.Registry
}

// openSession loads configuration and prepares (but does not start) the PMs.
func openSession(cf *commonFlags, stderr io.Writer) (*session, int) {
	opts, err := cf.options()
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm: %v\n", err)
		return nil, ExitUsage
	}
	cfg, err := config.Load(os.Getenv, opts.Workspace)
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm: configuration errors:\n%v\n", indent(err.Error()))
		return nil, ExitFailure
	}
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		exeDir = filepath.Dir(exe)
	}
	set := discovery.Setup(cfg, exeDir, opts.CacheDir)
	return &session{opts: opts, cfg: cfg, set: set, pms: host.NewRegistry(opts, set.Specs...)}, ExitOK
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

const discoverUsage = `Usage: symposium-pm discover [flags]

Runs discovery as Symposium does on a hook: every package manager's list_deps,
then active_plugins with the dependencies each owns, chained [[plugins]]
references through load_plugin, validation of every offer, and enablement from
your configuration. Offline unless --refresh.

Each plugin gets a state:
  enabled        it runs (a trusted source, or a dependency you consented to)
  needs consent  embedded in a dependency; add it to [plugins] auto-enable or use
  disabled       named in [plugins] disable (which beats every other entry)
  dormant        waits for [plugins] use, or its depends-on gate does not hold
  invalid        the offer or its manifest is broken (the reason says how)

Exit codes: 0 discovery ran (warnings do not fail it), 1 configuration errors,
2 bad usage.

Flags:
`

func cmdDiscover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("discover", discoverUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	refresh := fs.Bool("refresh", false, "refresh registries (update level check) before discovering")
	if code, ok := parseArgs(fs, args, none); !ok {
		return code
	}
	s, code := openSession(&cf, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	done := progress(stderr, fmt.Sprintf("discovering plugins with %d package managers", len(s.set.Specs)))
	warnings := append([]string{}, s.set.Warnings...)
	if *refresh {
		isRegistry := func(name string) bool { return s.set.Kinds[name] == discovery.SourceRegistry }
		for _, w := range s.pms.Refresh(ctx, protocol.UpdateCheck, false, isRegistry) {
			warnings = append(warnings, w.String())
		}
	}
	res := discovery.Discover(ctx, discovery.Options{
		Workspace:      s.opts.Workspace,
		Config:         s.cfg,
		PMs:            s.pms,
		Kinds:          s.set.Kinds,
		PathRegistries: s.set.PathRegistries,
	})
	done()
	res.Warnings = append(warnings, res.Warnings...)
	if *asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "symposium-pm discover: %v\n", err)
			return ExitFailure
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return ExitOK
	}
	printDiscovery(stdout, res, s.set.Notes)
	return ExitOK
}

func printDiscovery(w io.Writer, res discovery.Result, notes []string) {
	if len(res.Plugins) == 0 {
		fmt.Fprintln(w, "No plugins found.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PM\tNAME\tVERSION\tSOURCE\tSTATE\tSKILLS\tREASON")
		for _, p := range res.Plugins {
			// Only enabled plugins are walked, so only theirs are counted.
			skills := "-"
			if p.State == discovery.Enabled {
				skills = strconv.Itoa(p.Skills)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID.PM, p.Name, shortVersion(p.ID.Version), p.Source, p.State, skills, p.Reason)
		}
		tw.Flush()
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintf(w, "\nWarnings (%d):\n", len(res.Warnings))
		for _, x := range res.Warnings {
			fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(x, "\n", "\n    "))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// shortVersion abbreviates git commit ids for the table.
func shortVersion(v string) string {
	if len(v) == 40 && strings.Trim(v, "0123456789abcdef") == "" {
		return v[:12]
	}
	return v
}

// progress prints msg on stderr while work runs, when stderr is a terminal;
// the returned function clears it.
func progress(stderr io.Writer, msg string) func() {
	f, ok := stderr.(*os.File)
	if !ok {
		return func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	fmt.Fprintf(f, "%s…", msg)
	return func() { fmt.Fprintf(f, "\r\033[K") }
}
