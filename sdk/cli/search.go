package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/symposium-dev/symposium-pm/sdk/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const searchUsage = `Usage: symposium-pm search [flags] QUERY

Asks every package manager that can search (and every path registry) for
packages matching QUERY, a fragment of a name, and prints the hits.

Flags:
`

func cmdSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("search", searchUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the hits as JSON")
	if code, ok := parseArgs(fs, args, one); !ok {
		return code
	}
	query := fs.Arg(0)
	s, code := openSession(&cf, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	done := progress(stderr, "searching")
	hits, warns := s.pms.Search(ctx, query)
	done()
	for _, pr := range s.set.PathRegistries {
		entries, err := manifest.Enumerate(pr.Dir)
		if err != nil {
			fmt.Fprintf(stderr, "warning: registry %s: %v\n", pr.Name, err)
			continue
		}
		for _, e := range entries {
			if strings.Contains(strings.ToLower(e.Path), strings.ToLower(query)) {
				hits = append(hits, protocol.SearchHit{ID: protocol.PackageID{PM: pr.Name, Name: e.Path, Version: protocol.AnyVersion}})
			}
		}
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if *asJSON {
		if hits == nil {
			hits = []protocol.SearchHit{}
		}
		if err := printJSON(stdout, hits); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	if len(hits) == 0 {
		fmt.Fprintf(stdout, "No package matches %q.\n", query)
		return ExitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PM\tNAME\tVERSION\tDESCRIPTION")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.ID.PM, h.ID.Name, shortVersion(h.ID.Version), h.Description)
	}
	tw.Flush()
	return ExitOK
}

const loadUsage = `Usage: symposium-pm load [flags] PM:NAME[@REQUIREMENT]

Asks package manager PM to load NAME (at the version REQUIREMENT, in PM's
own syntax, default *), validates each offer it returns as discovery would,
and prints them. Exit code 1 when the PM fails or an offer is invalid.

Flags:
`

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("load", loadUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the offers as JSON")
	if code, ok := parseArgs(fs, args, one); !ok {
		return code
	}
	id, err := parseRef(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm load: %v\n", err)
		return ExitUsage
	}
	s, code := openSession(&cf, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	if !slices.Contains(s.pms.Names(), id.PM) {
		fmt.Fprintf(stderr, "symposium-pm load: no package manager %q (configured: %s)\n", id.PM, strings.Join(s.pms.Names(), ", "))
		return ExitFailure
	}
	offers, err := s.pms.LoadPlugin(ctx, id)
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm load: %v\n", err)
		return ExitFailure
	}
	src := s.set.Kinds[id.PM]
	status := ExitOK
	type checked struct {
		protocol.Offer
		Valid  bool   `json:"valid"`
		Reason string `json:"reason,omitempty"`
	}
	out := []checked{}
	for _, o := range offers {
		_, reason := discovery.ValidateOffer(o, src, id.PM)
		if reason != "" {
			status = ExitFailure
		}
		out = append(out, checked{Offer: o, Valid: reason == "", Reason: reason})
	}
	if *asJSON {
		printJSON(stdout, out)
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
