package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/internal/tomlstr"
	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// session is one host invocation: configuration, plugin sources and the
// running PMs.
type session struct {
	opts host.Options
	cfg  *config.Config
	set  discovery.Set
	pms  *host.Registry
	// warnings are the configuration's and the set-up's; cfgWarnings the
	// configuration's alone.
	warnings, cfgWarnings []Warning
}

// openSession loads configuration and prepares (but does not start) the PMs.
// On failure it has reported why (as a JSON error document too when
// asJSON) and returns the exit code.
func openSession(cmd string, cf *commonFlags, asJSON bool, stdout, stderr io.Writer) (*session, int) {
	opts, err := cf.options()
	if err != nil {
		if code := optionsExit(err); code == ExitUsage {
			fmt.Fprintf(stderr, "symposium-pm %s: %v\n", cmd, err)
			return nil, code
		}
		return nil, fail(stdout, stderr, asJSON, cmd, err)
	}
	cfg, err := config.Load(userEnv, opts.Workspace)
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm %s: configuration errors:\n%v\n", cmd, indent(err.Error()))
		if asJSON {
			printJSON(stdout, errorDoc{Version: JSONVersion, Error: "configuration errors", Problems: problemsOf(err)})
		}
		return nil, ExitFailure
	}
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		exeDir = filepath.Dir(exe)
	}
	set := discovery.Setup(cfg, exeDir, opts.CacheDir)
	cfgWarnings := configWarnings(cfg.UnknownPMs(append(slices.Clone(discovery.BuiltinPMs), discovery.LocalPM)...))
	warnings := append(slices.Clone(cfgWarnings), stringWarnings(set.Warnings)...)
	return &session{opts: opts, cfg: cfg, set: set, pms: host.NewRegistry(opts, set.Specs...), warnings: warnings, cfgWarnings: cfgWarnings}, ExitOK
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

const discoverUsage = `Usage: symposium-pm discover [flags]

Runs discovery as Symposium does on a hook: every package manager's list_deps,
then active_plugins with the dependencies each owns, chained [[plugins]]
references through load_plugin, validation of every offer, and enablement from
your configuration. Offline, except for chained references to packages not on
disk, which the PM may download (the cargo PM runs cargo fetch). It runs the
shell() predicates of enabled plugins, the workspace's own among them, and the
PMs the workspace's .symposium/config.toml declares: review both in a checkout
you do not trust (see SECURITY.md).

--refresh first asks the registries to check for updates. A git registry that
has never been fetched is fetched then, even with auto-update = false; one
that has been is updated only when its auto-update is on, or with --force.

Each plugin gets a state:
  enabled        it runs (a trusted source, or a dependency you consented to)
  needs-consent  embedded in a dependency; add it to [plugins] auto-enable or use
  disabled       named in [plugins] disable (which beats every other entry)
  dormant        waits for [plugins] use, or its depends-on gate does not hold
  invalid        the offer or its manifest is broken (the reason says how)

A PM that fails, a registry that cannot be read or a configured source that
cannot be used is a warning: discovery goes on with the others. Exit codes:
0 discovery ran (with or without warnings), 1 the configuration is invalid,
the workspace does not exist, or --strict and there were warnings, 2 bad usage.

With --json prints {"version":1,"plugins":[{"id","name","root","source",
"state","reason","skills"}],"warnings":[{"pm","message","file","line"}],
"notes":[...]}; see docs/cli.md.

Flags:
`

// discoverDoc is the --json output of discover.
type discoverDoc struct {
	Version  int             `json:"version"`
	Plugins  []pluginJSON    `json:"plugins"`
	Warnings []Warning       `json:"warnings"`
	Notes    []string        `json:"notes"`
	Consent  []consentChoice `json:"-"`
}

// writeJSON writes the document as printJSON would, byte for byte, but
// streams it through a buffered writer: the plugins one at a time by
// appendIndented, the notes one at a time (one of them is the consent
// hint, a line per plugin waiting for consent, that the encoder would
// encode and then indent again as a whole), and the other members through
// one encoder. On a workspace of a thousand plugins the whole document and
// its indented copy (3.5 MB allocated between them, most of it fresh
// pages) were a seventh of the command's CPU.
func (d discoverDoc) writeJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	var elem bytes.Buffer
	enc := json.NewEncoder(&elem)
	enc.SetIndent("  ", "  ")
	// put writes head, then v indented as MarshalIndent indents a member of
	// the document (its lines after the first prefixed with one indent),
	// then a comma unless v is the last member, and a newline.
	put := func(head string, v any, last bool) error {
		elem.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		bw.WriteString(head)
		bw.Write(bytes.TrimSuffix(elem.Bytes(), []byte("\n")))
		if !last {
			bw.WriteByte(',')
		}
		return bw.WriteByte('\n')
	}
	// list writes a member that is a non-empty list as put would: head and
	// "[", each of its n elements on a line of its own (appended by
	// appendElem, indented two levels), then "]" and close.
	var buf []byte
	list := func(head string, n int, appendElem func(b []byte, i int) []byte, close string) {
		bw.WriteString(head + "[\n")
		for i := range n {
			buf = appendElem(buf[:0], i)
			if i < n-1 {
				buf = append(buf, ',')
			}
			bw.Write(append(buf, '\n'))
		}
		bw.WriteString("  ]" + close)
	}
	bw.WriteString("{\n")
	if err := put(`  "version": `, d.Version, false); err != nil {
		return err
	}
	if len(d.Plugins) == 0 {
		if err := put(`  "plugins": `, d.Plugins, false); err != nil {
			return err
		}
	} else {
		list(`  "plugins": `, len(d.Plugins), func(b []byte, i int) []byte { return d.Plugins[i].appendIndented(b) }, ",\n")
	}
	if err := put(`  "warnings": `, d.Warnings, false); err != nil {
		return err
	}
	if len(d.Notes) == 0 {
		if err := put(`  "notes": `, d.Notes, true); err != nil {
			return err
		}
	} else {
		list(`  "notes": `, len(d.Notes), func(b []byte, i int) []byte { return jsonscan.AppendString(append(b, "    "...), d.Notes[i]) }, "\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// pluginJSON is one plugin of discover --json.
type pluginJSON struct {
	ID     protocol.PackageID `json:"id"`
	Name   string             `json:"name"`
	Root   string             `json:"root"`
	Source discovery.Source   `json:"source"`
	State  string             `json:"state"`
	Reason string             `json:"reason,omitempty"`
	Skills int                `json:"skills"`
}

// appendIndented appends p as the encoder writes an element of the
// document's plugin list (indented two levels, with two spaces), byte for
// byte, without its reflection and its second, indenting pass over what it
// encoded: those were a tenth of discover's own CPU on a thousand plugins.
func (p *pluginJSON) appendIndented(b []byte) []byte {
	b = append(b, "    {\n      \"id\": {\n        \"pm\": "...)
	b = jsonscan.AppendString(b, p.ID.PM)
	b = append(b, ",\n        \"name\": "...)
	b = jsonscan.AppendString(b, p.ID.Name)
	b = append(b, ",\n        \"version\": "...)
	b = jsonscan.AppendString(b, p.ID.Version)
	b = append(b, "\n      },\n      \"name\": "...)
	b = jsonscan.AppendString(b, p.Name)
	b = append(b, ",\n      \"root\": "...)
	b = jsonscan.AppendString(b, p.Root)
	b = append(b, ",\n      \"source\": "...)
	b = jsonscan.AppendString(b, p.Source)
	b = append(b, ",\n      \"state\": "...)
	b = jsonscan.AppendString(b, p.State)
	if p.Reason != "" {
		b = append(b, ",\n      \"reason\": "...)
		b = jsonscan.AppendString(b, p.Reason)
	}
	b = append(b, ",\n      \"skills\": "...)
	b = strconv.AppendInt(b, int64(p.Skills), 10)
	return append(b, "\n    }"...)
}

// consentChoice is a plugin waiting for consent, for the hint.
type consentChoice struct{ pm, name string }

func cmdDiscover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("discover", discoverUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	refresh := fs.Bool("refresh", false, "refresh registries (update level check) before discovering; a git registry never fetched is fetched even with auto-update = false")
	force := fs.Bool("force", false, "with --refresh, update the registries configured with auto-update = false too")
	strict := fs.Bool("strict", false, "exit 1 when there are warnings (for CI)")
	if code, ok := parseArgs(fs, args, noArgs(), stdout); !ok {
		return code
	}
	if *force && !*refresh {
		usageError(fs, "--force forces a refresh: give it with --refresh")
		return ExitUsage
	}
	s, code := openSession("discover", &cf, *asJSON, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.pms.Close()
	warnings := slices.Clone(s.warnings)
	var notes []string
	if *refresh {
		isRegistry := func(name string) bool { return s.set.Kinds[name] == discovery.SourceRegistry }
		forced, kept := refreshPlan(s, *force)
		done := progress(stderr, "refreshing registries")
		warnings = append(warnings, hostWarnings(s.pms.RefreshEach(ctx, protocol.UpdateCheck, func(name string) bool { return *force || forced[name] }, isRegistry))...)
		done()
		for _, k := range kept {
			notes = append(notes, fmt.Sprintf("registry %s (%s) has auto-update = false, so --refresh left it at commit %s; run `symposium-pm discover --refresh --force` to update it", k.r.Name, k.r.Git, shortVersion(k.commit)))
		}
	} else {
		for _, r := range s.cfg.Registries {
			if r.Git == "" || s.set.Kinds[r.Name] != discovery.SourceRegistry {
				continue
			}
			if c := registryCache(s.opts.CacheDir, r); !c.Fetched {
				notes = append(notes, fmt.Sprintf("registry %s (%s) has never been fetched, so it offers nothing yet; run `symposium-pm discover --refresh` to fetch it", r.Name, r.Git))
			}
		}
	}
	done := progress(stderr, fmt.Sprintf("discovering plugins with %d package managers", len(s.set.Specs)))
	res := discovery.Discover(ctx, discovery.Options{
		Workspace:      s.opts.Workspace,
		Config:         s.cfg,
		PMs:            s.pms,
		Kinds:          s.set.Kinds,
		PathRegistries: s.set.PathRegistries,
	})
	done()
	found, pmNotes := discoveryWarnings(res.Warnings)
	notes = append(notes, pmNotes...)
	doc := discoverDoc{Version: JSONVersion, Plugins: make([]pluginJSON, 0, len(res.Plugins)), Warnings: append(warnings, found...)}
	for _, p := range res.Plugins {
		doc.Plugins = append(doc.Plugins, pluginJSON{ID: p.ID, Name: p.Name, Root: p.Root, Source: p.Source, State: StateID(p.State), Reason: p.Reason, Skills: p.Skills})
		if p.State == discovery.NeedsConsent {
			doc.Consent = append(doc.Consent, consentChoice{p.ID.PM, p.Name})
		}
	}
	doc.Notes = append(append(notes, s.set.Notes...), consentHint(doc.Consent, s.cfg)...)
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if *asJSON {
		if err := doc.writeJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "symposium-pm discover: %v\n", err)
			return ExitFailure
		}
	} else {
		printDiscovery(stdout, doc)
	}
	if *strict && len(doc.Warnings) > 0 {
		fmt.Fprintf(stderr, "symposium-pm discover: %d warning(s) and --strict\n", len(doc.Warnings))
		return ExitFailure
	}
	return ExitOK
}

// keptRegistry is a git registry a refresh leaves where it is: fetched
// already, at commit, and configured with auto-update = false.
type keptRegistry struct {
	r      config.Registry
	commit string
}

// refreshPlan decides, for discover --refresh, which git registries are
// sent force (forced, by name) besides every one when force is set: those
// never fetched, since an opt-out of automatic updates (auto-update =
// false) keeps a registry where it is, and a registry never fetched is
// nowhere yet. It also returns the registries the refresh leaves alone
// because of that opt-out (none when force is set), for a note saying how
// to update them.
func refreshPlan(s *session, force bool) (forced map[string]bool, kept []keptRegistry) {
	forced = map[string]bool{}
	for _, r := range s.cfg.Registries {
		if r.Git == "" || s.set.Kinds[r.Name] != discovery.SourceRegistry {
			continue
		}
		switch c := registryCache(s.opts.CacheDir, r); {
		case !c.Fetched:
			forced[r.Name] = true
		case !r.AutoUpdates() && !force:
			kept = append(kept, keptRegistry{r: r, commit: c.Commit})
		}
	}
	return forced, kept
}

// consentHint is a note holding the [plugins] snippet that consents to
// every plugin waiting for it, ready to paste into the user config. When
// that file already has a [plugins] table (a second [plugins] header would
// not parse), the snippet is what goes under it: the auto-enable key, or
// only its entries when the table already has an auto-enable list.
func consentHint(choices []consentChoice, cfg *config.Config) []string {
	if len(choices) == 0 {
		return nil
	}
	file := filepath.Join(cfg.Dir, config.FileName)
	header, list := pluginsTableLines(file)
	var b strings.Builder
	switch {
	case list > 0:
		fmt.Fprintf(&b, "to consent to the plugins that need it, add these entries to the auto-enable list of [plugins] in %s:%d:\n", file, list)
	case header > 0:
		fmt.Fprintf(&b, "to consent to the plugins that need it, add under the [plugins] table of %s:%d:\n", file, header)
		b.WriteString("auto-enable = [\n")
	default:
		fmt.Fprintf(&b, "to consent to the plugins that need it, add to %s:\n", file)
		b.WriteString("[plugins]\nauto-enable = [\n")
	}
	for _, c := range choices {
		// TOML, printable: a name a PM chose is pasted back as it is.
		fmt.Fprintf(&b, "  { pm = %s, name = %s },\n", tomlstr.Quote(c.pm), tomlstr.Quote(c.name))
	}
	if list > 0 {
		return []string{strings.TrimSuffix(b.String(), "\n")}
	}
	b.WriteString("]")
	return []string{b.String()}
}

// pluginsTableLines finds, in the configuration file at path, the line of
// its [plugins] header and the line of the auto-enable key in that table
// (0 when absent). It reads the file as config.Load does (config.ReadFile:
// a regular file of at most config.MaxFileSize bytes); one it cannot read
// places no hint, which is all this is for.
func pluginsTableLines(path string) (header, autoEnable int) {
	data, err := config.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	inPlugins := false
	for n, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], " \t[]"))
			inPlugins = name == "plugins" && !strings.HasPrefix(t, "[[")
			if inPlugins && header == 0 {
				header = n + 1
			}
			continue
		}
		if inPlugins && autoEnable == 0 {
			key, _, ok := strings.Cut(t, "=")
			if ok && strings.Trim(strings.TrimSpace(key), `"'`) == "auto-enable" {
				autoEnable = n + 1
			}
		}
	}
	return header, autoEnable
}

func printDiscovery(w io.Writer, doc discoverDoc) {
	if len(doc.Plugins) == 0 {
		fmt.Fprintln(w, "No plugins found.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PM\tNAME\tVERSION\tSOURCE\tSTATE\tSKILLS\tREASON")
		for _, p := range doc.Plugins {
			// Only enabled plugins are walked, so only theirs are counted.
			skills := "-"
			if p.State == "enabled" {
				skills = strconv.Itoa(p.Skills)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(p.ID.PM), cell(p.Name), cell(shortVersion(p.ID.Version)), p.Source, p.State, skills, cell(p.Reason))
		}
		tw.Flush()
	}
	warnings := make([]string, len(doc.Warnings))
	for i, x := range doc.Warnings {
		warnings[i] = indentTail(x.Message)
	}
	printItems(w, fmt.Sprintf("Warnings (%d):", len(warnings)), warnings)
	notes := make([]string, len(doc.Notes))
	for i, n := range doc.Notes {
		notes[i] = strings.ReplaceAll(n, "\n", "\n      ") // a note's later lines are a block to paste
	}
	printItems(w, "Notes:", notes)
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
	if !ok || !isTerminal(f) {
		return func() {}
	}
	fmt.Fprintf(f, "%s…", msg)
	return func() { fmt.Fprintf(f, "\r\033[K") }
}

// discoveryWarnings converts discovery's structured warnings, field for
// field; a PM's informational diagnostics (level info) become notes.
func discoveryWarnings(ws []discovery.Warning) (warnings []Warning, notes []string) {
	warnings = make([]Warning, 0, len(ws))
	for _, w := range ws {
		if w.Level == protocol.LevelInfo {
			notes = append(notes, w.Message)
			continue
		}
		warnings = append(warnings, Warning{PM: w.PM, Message: w.Message, File: w.File, Line: w.Line})
	}
	return warnings, notes
}
