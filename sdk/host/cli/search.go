package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const searchUsage = `Usage: symposium-pm search [flags] QUERY

Asks every package manager that can search (and every path registry) for
packages matching QUERY, a fragment of a name, and prints the hits. A source
whose search fails is a warning; when every source failed the exit code is 1.

The diagnostics the PMs sent about the search go to stderr as load shows
them ("warning: PM: FILE:LINE: message", "note: ..."). With --json prints
{"version":1,"hits":[{"id","description"}],"warnings":[{"pm","message",
"file","line"}],"notes":[...]}, the diagnostics as discover --json has them.

Flags:
`

func cmdSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("search", searchUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the hits as JSON")
	if code, ok := parseArgs(fs, args, arity{1, 1, "QUERY"}, stdout); !ok {
		return code
	}
	query := fs.Arg(0)
	s, code := openSession("search", &cf, *asJSON, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	done := progress(stderr, "searching")
	hits, hw := s.pms.Search(ctx, query)
	done()
	// The PMs' diagnostics are shown as load shows them; the other
	// warnings are sources whose search failed.
	reports, failures := splitReports(hw)
	warns := append(slices.Clone(s.warnings), hostWarnings(failures)...)
	// The sources that searched: PMs announcing search whose search did not
	// fail, and path registries that could be read.
	failed := map[string]bool{}
	for _, w := range failures {
		failed[w.PM] = true
	}
	searched, tried := 0, len(failures)
	for _, name := range s.pms.Names() {
		if c, err := s.pms.Conn(ctx, name); err == nil && c.Has(protocol.CapSearch) && !failed[name] {
			searched++
			tried++
		}
	}
	for _, pr := range s.set.PathRegistries {
		tried++
		entries, err := layout.Enumerate(pr.Dir)
		if err != nil {
			warns = append(warns, Warning{PM: pr.Name, Message: fmt.Sprintf("registry %s: %v", pr.Name, err), File: pr.Dir})
			continue
		}
		searched++
		for _, e := range entries {
			if strings.Contains(strings.ToLower(e.Path), strings.ToLower(query)) {
				hits = append(hits, protocol.SearchHit{ID: protocol.PackageID{PM: pr.Name, Name: e.Path, Version: protocol.AnyVersion}})
			}
		}
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "warning: %s\n", w.Message)
	}
	reports.print(stderr)
	warns = append(warns, reports.warnings...)
	code = ExitOK
	failure := ""
	if tried > 0 && searched == 0 {
		failure = fmt.Sprintf("every source's search failed (%d)", tried)
		fmt.Fprintf(stderr, "symposium-pm search: %s\n", failure)
		code = ExitFailure
	}
	if *asJSON {
		if hits == nil {
			hits = []protocol.SearchHit{}
		}
		if err := printJSON(stdout, searchDoc{Version: JSONVersion, Error: failure, Hits: hits, Warnings: warns, Notes: reports.notes}); err != nil {
			return ExitFailure
		}
		return code
	}
	if len(hits) == 0 {
		if code == ExitOK {
			fmt.Fprintf(stdout, "No package matches %q.\n", query)
		}
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PM\tNAME\tVERSION\tDESCRIPTION")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(h.ID.PM), cell(h.ID.Name), cell(shortVersion(h.ID.Version)), cell(h.Description))
	}
	tw.Flush()
	return code
}

// searchDoc is the --json output of search.
type searchDoc struct {
	Version int `json:"version"`
	// Error, when every source's search failed (exit 1), says so; the
	// warnings say why.
	Error    string               `json:"error,omitempty"`
	Hits     []protocol.SearchHit `json:"hits"`
	Warnings []Warning            `json:"warnings"`
	Notes    []string             `json:"notes"`
}

const loadUsage = `Usage: symposium-pm load [flags] PM:NAME[@REQUIREMENT]

Asks package manager PM to load NAME (at the version REQUIREMENT, in PM's
own syntax, default *), validates each offer it returns as discovery would,
and prints them. A package that embeds no plugin (no manifest layer, no
skills directory) is said so. Exit code 1 when PM is not configured, the PM
fails, an offer is invalid or the package offers no plugin.

The diagnostics the PM sent about the request go to stderr ("warning: PM:
FILE:LINE: message"). With --json prints {"version":1,"offers":[{"id",
"root","manifest","valid","reason"}],"warnings":[{"pm","message","file",
"line"}],"notes":[...]}, the PM's diagnostics as discover --json has them.

Flags:
`

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("load", loadUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the offers as JSON")
	if code, ok := parseArgs(fs, args, arity{1, 1, "PM:NAME[@REQUIREMENT]"}, stdout); !ok {
		return code
	}
	id, err := parseRef(fs.Arg(0))
	if err != nil {
		usageError(fs, "%v", err)
		return ExitUsage
	}
	s, code := openSession("load", &cf, *asJSON, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	if !slices.Contains(s.pms.Names(), id.PM) {
		return fail(stdout, stderr, *asJSON, "load", fmt.Errorf("no package manager %q (configured: %s)", id.PM, strings.Join(s.pms.Names(), ", ")))
	}
	done := progress(stderr, fmt.Sprintf("loading %s (it may be fetched)", id))
	offers, diags, err := s.pms.LoadPlugin(ctx, id)
	done()
	if err != nil {
		return fail(stdout, stderr, *asJSON, "load", err)
	}
	reports, _ := splitReports(diags)
	reports.print(stderr)
	src := s.set.Kinds[id.PM]
	status := ExitOK
	type checked struct {
		protocol.Offer
		Valid  bool   `json:"valid"`
		Reason string `json:"reason,omitempty"`
	}
	out := []checked{}
	for _, o := range offers {
		p, reason := discovery.ValidateOffer(o, src, id.PM)
		if p != nil && src == discovery.SourceDependency && embedsNothing(o.Root, p) {
			p, reason = nil, fmt.Sprintf("%s offers no plugin: its manifest declares no hooks, MCP servers, subcommands or chained plugins, and no skill directory it names (%s) exists under %s",
				o.ID, skillPaths(p), o.Root)
		}
		if reason != "" {
			status = ExitFailure
		}
		out = append(out, checked{Offer: o, Valid: reason == "", Reason: reason})
	}
	if len(out) == 0 {
		// Nothing to run: the job failed, as for an offer that embeds nothing.
		fmt.Fprintf(stderr, "symposium-pm load: %s offers no plugin\n", id)
		status = ExitFailure
	}
	if *asJSON {
		printJSON(stdout, struct {
			Version  int       `json:"version"`
			Offers   []checked `json:"offers"`
			Warnings []Warning `json:"warnings"`
			Notes    []string  `json:"notes"`
		}{JSONVersion, out, reports.warnings, reports.notes})
		return status
	}
	if len(out) == 0 {
		fmt.Fprintf(stdout, "%s offers no plugin for %s.\n", id.PM, id)
	}
	for _, o := range out {
		verdict := "valid"
		if !o.Valid {
			verdict = "invalid: " + o.Reason
		}
		m, _ := json.Marshal(o.Manifest)
		fmt.Fprintf(stdout, "%s\n  root:     %s\n  manifest: %s\n  %s\n", o.ID, o.Root, m, verdict)
	}
	return status
}

// parseRef parses PM:NAME[@REQ]. An npm scope's leading @ is part of NAME.
func parseRef(s string) (protocol.PackageID, error) {
	pm, rest, ok := strings.Cut(s, ":")
	if !ok || pm == "" || rest == "" {
		return protocol.PackageID{}, fmt.Errorf("%q: want PM:NAME[@REQUIREMENT]", s)
	}
	name, req := rest, protocol.AnyVersion
	if i := strings.LastIndex(rest, "@"); i > 0 {
		name, req = rest[:i], rest[i+1:]
	}
	if req == "" {
		return protocol.PackageID{}, fmt.Errorf("%q: empty requirement after @", s)
	}
	return protocol.PackageID{PM: pm, Name: name, Version: req}, nil
}

// skillPaths lists the local skill directories a manifest names, for a
// message.
func skillPaths(p *manifest.Plugin) string {
	var paths []string
	for _, g := range p.Skills {
		if g.Path != "" {
			paths = append(paths, g.Path)
		}
	}
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

// embedsNothing reports whether a package's offer carries no plugin: its
// manifest declares nothing but skill groups, and none of those exists
// under root. A PM may offer such a package (the default skills/ group of
// a package-embedded plugin) although Symposium would find nothing there.
func embedsNothing(root string, p *manifest.Plugin) bool {
	if len(p.Hooks) > 0 || len(p.MCPServers) > 0 || len(p.Subcommands) > 0 || len(p.Chained) > 0 || len(p.Installations) > 0 {
		return false
	}
	if _, err := os.Stat(filepath.Join(root, manifest.ManifestFile)); err == nil {
		return false
	}
	for _, g := range p.Skills {
		if g.Path == "" {
			return false // a remote group
		}
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(g.Path))); err == nil && fi.IsDir() {
			return false
		}
	}
	return true
}
