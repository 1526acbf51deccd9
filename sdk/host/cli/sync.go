package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/host/acquire"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

const syncUsage = `Usage: symposium-pm sync [flags] [NAME...]

Acquires the package managers your configuration declares with an installation
source (every one, or those NAMEd), through the ecosystem's own toolchain:

  source = "go"     module, version     go install into GOBIN (module is the
                                        command's import path)
  source = "cargo"  crate, version      cargo install --root
                    (or git, with branch, tag or rev; registry, locked, bin)
  source = "npm"    package, version,   npm install --prefix
                    bin

Each lands in <cache-dir>/pm-binaries/<name>/<version>/, where discovery finds
it offline. A pinned version already acquired is kept (--force acquires it
again); "latest", ranges and git branches are updated and swapped in
atomically. The toolchains read their own configuration (GOPROXY, cargo's
config and registries, .npmrc); SYMPOSIUM_GO, SYMPOSIUM_CARGO and
SYMPOSIUM_NPM name other toolchain binaries. A failed or interrupted
acquisition leaves nothing behind and keeps the previous copy; the others
still run.

Prints one line per PM, or with --json {"version":1,"results":[{"pm",
"source","status","version","previous","path","error"}]} where status is
acquired, updated, unchanged or failed. A failure is remembered in the cache
so that symposium-pm status can say the last sync failed, and why. Exit code
0 when every PM is acquired, 1 when one failed, a NAME is not configured or
has no installation source, or the configuration is invalid, 2 for a bad
command line.

Flags:
`

// syncResult is one PM's line of symposium-pm sync --json.
type syncResult struct {
	PM       string `json:"pm"`
	Source   string `json:"source"`
	Status   string `json:"status"`
	Version  string `json:"version,omitempty"`
	Previous string `json:"previous,omitempty"`
	Path     string `json:"path,omitempty"`
	Error    string `json:"error,omitempty"`
}

func cmdSync(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("sync", syncUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the results as JSON")
	force := fs.Bool("force", false, "acquire pinned versions again too")
	verbose := fs.Bool("v", false, "show the toolchains' output on stderr")
	if code, ok := parseArgs(fs, args, arity{0, -1, "[NAME...]"}, stdout); !ok {
		return code
	}
	s, code := openSession("sync", &cf, *asJSON, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	var sources []acquire.Source
	var results []syncResult
	names := fs.Args()
	for _, pm := range s.cfg.PackageManagers {
		if len(names) > 0 && !slices.Contains(names, pm.Name) {
			continue
		}
		if pm.Source == "" {
			if len(names) > 0 {
				return fail(stdout, stderr, *asJSON, "sync", fmt.Errorf("package manager %q runs command %q; it has no installation source to acquire", pm.Name, pm.Command))
			}
			continue
		}
		src, err := acquire.Parse(pm)
		if err != nil {
			results = append(results, syncResult{PM: pm.Name, Source: pm.Source, Status: "failed", Error: err.Error()})
			continue
		}
		sources = append(sources, src)
	}
	for _, n := range names {
		if !slices.ContainsFunc(s.cfg.PackageManagers, func(pm config.PackageManager) bool { return pm.Name == n }) {
			return fail(stdout, stderr, *asJSON, "sync", fmt.Errorf("no [[package-manager]] named %q in %s", n, strings.Join(s.cfg.Files, ", ")))
		}
	}
	if len(sources) == 0 && len(results) == 0 && !*asJSON {
		fmt.Fprintln(stdout, "No package manager with an installation source is configured.")
		return ExitOK
	}
	opts := acquire.Options{Env: os.Environ(), Force: *force}
	if *verbose {
		opts.Output = stderr
	}
	for _, src := range sources {
		r := syncResult{PM: src.PM, Source: src.String()}
		if ctx.Err() != nil {
			r.Status, r.Error = "failed", fmt.Sprintf("acquiring package manager %q from %s: interrupted before it started", src.PM, src)
			results = append(results, r)
			continue
		}
		done := progress(stderr, fmt.Sprintf("acquiring %s from %s", src.PM, src))
		res, err := acquire.Acquire(ctx, s.opts.CacheDir, src, opts)
		done()
		if ctx.Err() == nil {
			acquire.RecordFailure(s.opts.CacheDir, src, err)
		}
		switch {
		case err != nil:
			r.Status, r.Error = "failed", err.Error()
		case !res.Changed:
			r.Status = "unchanged"
		case res.Previous != "":
			r.Status = "updated"
		default:
			r.Status = "acquired"
		}
		if res != nil {
			r.Version, r.Previous, r.Path = res.Version, res.Previous, res.Path
		}
		results = append(results, r)
	}
	failed := slices.ContainsFunc(results, func(r syncResult) bool { return r.Status == "failed" })
	if *asJSON {
		if results == nil {
			results = []syncResult{}
		}
		if err := printJSON(stdout, syncDoc{Version: JSONVersion, Results: results}); err != nil {
			fmt.Fprintf(stderr, "symposium-pm sync: %v\n", err)
			return ExitFailure
		}
	} else {
		for _, r := range results {
			switch r.Status {
			case "failed":
				fmt.Fprintf(stdout, "%s: FAILED: %s\n", r.PM, indentTail(r.Error))
			case "unchanged":
				fmt.Fprintf(stdout, "%s: %s already acquired from %s\n", r.PM, r.Version, r.Source)
			case "updated":
				fmt.Fprintf(stdout, "%s: updated %s -> %s from %s: %s\n", r.PM, r.Previous, r.Version, r.Source, r.Path)
			default:
				fmt.Fprintf(stdout, "%s: acquired %s from %s: %s\n", r.PM, r.Version, r.Source, r.Path)
			}
		}
	}
	if failed {
		if errors.Is(ctx.Err(), context.Canceled) {
			fmt.Fprintln(stderr, "symposium-pm sync: interrupted")
		}
		return ExitFailure
	}
	return ExitOK
}

// indentTail indents the continuation lines of a multi-line message.
func indentTail(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// syncDoc is the --json output of sync.
type syncDoc struct {
	Version int          `json:"version"`
	Results []syncResult `json:"results"`
}
