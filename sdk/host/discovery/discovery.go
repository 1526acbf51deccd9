// Package discovery is what Symposium does with its package managers on a
// sync or a hook: collect the workspace's dependencies from every PM, ask
// every PM for the plugins it activates, follow chained references, validate
// every offer, and decide from configuration and provenance which plugins
// run. PMs report what exists; this package alone decides what is enabled.
//
// Nothing a PM answers extends what the host reads: the workspace is the
// directory the user opened (a PM's workspace answer may only narrow it);
// an offer's source.paths are checked to stay inside its root (one lstat
// settles a path of one component that is no link; any other path is
// resolved inside the root opened as an os.Root); only enabled plugins
// have their root opened, once, as an os.Root their walk goes through,
// within the bounds of skill.Limits and a budget per discovery.
//
// The PMs run at once (host.Registry.Hook): each PM's offers are judged in
// its own goroutine as they arrive, while the others still answer, and the
// batches are merged in configuration order.
package discovery

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Source says where a plugin came from, which decides whether it is trusted.
type Source string

// The sources.
const (
	// SourceRegistry: a configured plugin registry (trusted).
	SourceRegistry Source = "registry"
	// SourceWorkspace: the workspace's own root or members (trusted).
	SourceWorkspace Source = "workspace"
	// SourceDependency: embedded in a dependency (needs consent).
	SourceDependency Source = "dependency"
	// SourceChained: reached through a [[plugins]] reference of an enabled
	// plugin, which vouches for it.
	SourceChained Source = "chained"
)

// State is a plugin's enablement.
type State string

// The states.
const (
	Enabled      State = "enabled"
	NeedsConsent State = "needs consent"
	Disabled     State = "disabled"
	Dormant      State = "dormant"
	Invalid      State = "invalid"
)

// LocalPM is the pm of workspace plugins' ids.
const LocalPM = "local"

// Plugin is one discovered plugin and the decision about it.
type Plugin struct {
	ID protocol.PackageID `json:"id"`
	// Name is the canonical name: the pair (ID.PM, Name) is what users write
	// in [plugins].
	Name   string `json:"name"`
	Root   string `json:"root"`
	Source Source `json:"source"`
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Skills is the number of SKILL.md files in the plugin's skill groups.
	// Only enabled plugins are walked: it is 0 for the others.
	Skills int `json:"skills"`

	plugin *manifest.Plugin
}

// Warning is a problem discovery met that did not stop it: from the host
// (a PM that failed, an offer's walk that hit a bound) or reported by a PM
// itself while answering (a diagnostic, docs/protocol.md §4.7).
type Warning struct {
	// PM names the package manager or registry concerned, when one is.
	PM string `json:"pm,omitempty"`
	// Message is the whole text, naming the PM, package and file.
	Message string `json:"message"`
	// File and Line locate the problem, when known.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Package is the package concerned, when known.
	Package *protocol.PackageID `json:"package,omitempty"`
	// Level is protocol.LevelWarning, or protocol.LevelInfo for a PM's
	// statement about its answer that is not a problem (shown as a note).
	Level protocol.DiagnosticLevel `json:"level"`
}

// String returns the message.
func (w Warning) String() string { return w.Message }

// Result is the outcome of a discovery.
type Result struct {
	Plugins  []Plugin  `json:"plugins"`
	Warnings []Warning `json:"warnings"`
	// Deps are the workspace's direct dependencies, from every PM.
	Deps []protocol.PackageID `json:"-"`
}

// PathRegistry is a registry read in-process from a directory.
type PathRegistry struct {
	Name string
	Dir  string
}

// Options are the inputs of Discover.
type Options struct {
	// Workspace is the absolute workspace root.
	Workspace string
	// Config holds the enablement lists.
	Config *config.Config
	// PMs are the running package managers (ecosystem PMs and git
	// registries), and Kinds says which of them are registries.
	PMs   *host.Registry
	Kinds map[string]Source
	// PathRegistries are read directly.
	PathRegistries []PathRegistry
	// LookupEnv is the environment predicates read (nil: the process's).
	LookupEnv func(string) (string, bool)
	// Limits bound the walk of each enabled plugin's skill groups; zero
	// fields take the defaults (skill.DefaultDepth, skill.DefaultEntries,
	// skill.DefaultTime).
	Limits skill.Limits
	// WalkBudget bounds the time spent walking over all plugins of one
	// discovery (zero: DefaultWalkBudget). Once it is spent, the remaining
	// enabled plugins are not walked and a warning says how many.
	WalkBudget time.Duration
}

// DefaultWalkBudget is the time one discovery spends walking skill groups
// at most, over all its plugins.
const DefaultWalkBudget = 5 * time.Second

// Discover runs discovery. It never fails as a whole: every problem is a
// warning, or an invalid plugin.
func Discover(ctx context.Context, o Options) Result {
	return discover(ctx, o, os.OpenRoot)
}

// discover is Discover, opening offers' roots with openRoot.
func discover(ctx context.Context, o Options, openRoot func(string) (*os.Root, error)) Result {
	d := &discoverer{o: o, depsReady: make(chan struct{}), openRoot: openRoot}
	// Each PM answers list_deps then active_plugins on its own, and its
	// offers are validated (and decided, and walked when enabled) in its
	// goroutine as soon as they are in, while the other PMs still run. Only
	// a gate waits for every PM's dependencies. The batches are then merged
	// in configuration order, so the result does not depend on which PM
	// answered first.
	names := o.PMs.Names()
	batches := make([][]judged, len(names))
	// The PMs' workspace answers (for workspacePlugins) are asked for in
	// the hook, each PM's right after its active_plugins, rather than in a
	// round of their own once every PM is done.
	var workMu sync.Mutex
	var work []host.WorkspaceAnswer
	hook := o.PMs.Hook(ctx, host.HookCallbacks{
		Workspace: func(a host.WorkspaceAnswer) {
			workMu.Lock()
			work = append(work, a)
			workMu.Unlock()
		},
		Deps: func(deps []protocol.PackageID) {
			d.res.Deps = deps
			close(d.depsReady)
		},
		Offers: func(pm string, offers []protocol.Offer) {
			batches[slices.Index(names, pm)] = d.judgeAll(ctx, pm, offers)
		},
	})
	d.warn(hook.ListWarnings)
	d.warn(hook.ActiveWarnings)
	total := 0
	for _, batch := range batches {
		total += len(batch)
	}
	d.res.Plugins = make([]Plugin, 0, total)
	d.seen = make(map[protocol.PackageID]int, total)
	for _, batch := range batches {
		for _, j := range batch {
			d.seen[j.plugin.ID] = len(d.res.Plugins)
			d.res.Plugins = append(d.res.Plugins, j.plugin)
			d.res.Warnings = append(d.res.Warnings, j.warns...)
		}
	}
	for _, pr := range o.PathRegistries {
		for _, of := range d.readPathRegistry(pr) {
			d.add(ctx, of, SourceRegistry, pr.Name, nil, nil)
		}
	}
	host.SortWorkspaceAnswers(work)
	d.workspacePlugins(ctx, work, hook.WorkspaceWarnings)

	// Chained references of enabled plugins, breadth first; the visited set
	// (pm and normalized name) ends cycles.
	visited := map[string]bool{}
	for i := range d.res.Plugins {
		d.queue = append(d.queue, i)
	}
	for len(d.queue) > 0 {
		p := d.res.Plugins[d.queue[0]]
		d.queue = d.queue[1:]
		if p.State != Enabled || p.plugin == nil {
			continue
		}
		for _, ch := range p.plugin.Chained {
			d.chase(ctx, p, ch, visited)
		}
	}
	slices.SortStableFunc(d.res.Plugins, func(a, b Plugin) int {
		return cmp.Or(strings.Compare(a.ID.PM, b.ID.PM), strings.Compare(a.Name, b.Name), strings.Compare(a.ID.Version, b.ID.Version))
	})
	if d.unwalked > 0 {
		d.warnf("walking skill groups took the whole budget of %v; the skills of %d more enabled plugins are not counted",
			cmp.Or(o.WalkBudget, DefaultWalkBudget), d.unwalked)
	}
	if d.res.Warnings == nil {
		d.res.Warnings = []Warning{}
	}
	if d.res.Plugins == nil {
		d.res.Plugins = []Plugin{}
	}
	return d.res
}

type discoverer struct {
	o    Options
	res  Result
	seen map[protocol.PackageID]int // index in res.Plugins
	// queue holds the indices of plugins whose chained references are still
	// to follow, once the first round of offers is in.
	queue []int
	// openRoot opens an offer's root (os.OpenRoot; tests count the opens).
	openRoot func(string) (*os.Root, error)
	// depsReady is closed once res.Deps holds every PM's dependencies,
	// which a gate needs.
	depsReady chan struct{}
	// walkMu guards walked, the time spent walking so far, and unwalked,
	// the enabled plugins left unwalked once the budget was spent: PMs'
	// offers are walked concurrently.
	walkMu   sync.Mutex
	walked   time.Duration
	unwalked int
	// warned holds the PM problems already warned about.
	warned map[string]bool
}

// warn adds the host's warnings; those carrying a PM's diagnostic keep its
// level, file, line and package.
func (d *discoverer) warn(ws []host.Warning) {
	for _, hw := range ws {
		w := Warning{PM: hw.PM, Message: hw.String(), Level: protocol.LevelWarning}
		if dg := hw.Diagnostic; dg != nil {
			w.File, w.Line, w.Package = dg.File, dg.Line, dg.Package
			if dg.Level == protocol.LevelInfo {
				w.Level = protocol.LevelInfo
			}
		}
		// The same problem reported by two methods (a member's broken
		// manifest, from list_deps and from workspace) is shown once.
		// A PM's error names the file; the method prefix differs.
		key := w.PM + "\x00" + w.Message
		if pe := (*protocol.Error)(nil); errors.As(hw.Err, &pe) {
			key = w.PM + "\x00" + pe.Message
		}
		if d.warned[key] {
			continue
		}
		if d.warned == nil {
			d.warned = map[string]bool{}
		}
		d.warned[key] = true
		d.res.Warnings = append(d.res.Warnings, w)
	}
}

func (d *discoverer) warnf(format string, args ...any) {
	d.warnAt(Warning{}, format, args...)
}

// warnAt adds a warning with the known fields of w set.
func (d *discoverer) warnAt(w Warning, format string, args ...any) {
	w.Message = fmt.Sprintf(format, args...)
	w.Level = protocol.LevelWarning
	d.res.Warnings = append(d.res.Warnings, w)
}

// chase loads one chained reference of the enabled plugin from.
func (d *discoverer) chase(ctx context.Context, from Plugin, ch manifest.Chained, visited map[string]bool) {
	if !d.evaluator(SourceChained).Holds(ctx, ch.Predicates) {
		return
	}
	id := protocol.PackageID{PM: "cargo", Name: ch.Name, Version: cmp.Or(ch.Version, protocol.AnyVersion)}
	key := id.PM + "/" + strings.ReplaceAll(id.Name, "_", "-")
	if visited[key] {
		d.warnf("chained reference from %s to %s:%s closes a cycle; not followed again", from.ID, id.PM, id.Name)
		return
	}
	visited[key] = true
	offers, warns, err := d.o.PMs.LoadPlugin(ctx, id)
	if err != nil {
		d.warnAt(Warning{PM: id.PM, Package: &id}, "chained reference from %s: %v", from.ID, err)
		return
	}
	d.warn(warns)
	for _, of := range offers {
		if of.ID.PM != id.PM {
			d.warnAt(Warning{PM: id.PM}, "pm %s answered load_plugin with %s, an id under another pm's name; dropped", id.PM, of.ID)
			continue
		}
		d.add(ctx, of, SourceChained, id.PM, &from, nil)
	}
}

// judged is an offer validated and decided, with the warnings its walk
// raised.
type judged struct {
	plugin Plugin
	warns  []Warning
}

// judgeAll judges the offers pm made, in its order; a repeated id is judged
// once (duplicates collapse). It may run for several PMs at once, and
// splits a large batch over the cores: the last PM to answer has the
// machine to itself.
func (d *discoverer) judgeAll(ctx context.Context, pm string, offers []protocol.Offer) []judged {
	src := cmp.Or(d.o.Kinds[pm], SourceDependency)
	seen := make(map[protocol.PackageID]int, len(offers))
	uniq := make([]protocol.Offer, 0, len(offers))
	var dups map[int][]Warning // by the index in uniq of the offer kept
	for _, of := range offers {
		at, dup := seen[of.ID]
		if !dup {
			seen[of.ID] = len(uniq)
			uniq = append(uniq, of)
			continue
		}
		if kept := uniq[at]; kept.Root != of.Root || !bytes.Equal(kept.Manifest, of.Manifest) {
			if dups == nil {
				dups = map[int][]Warning{}
			}
			dups[at] = append(dups[at], duplicateWarning(pm, of, kept.Root))
		}
	}
	out := make([]judged, len(uniq))
	defer func() {
		for at, ws := range dups {
			out[at].warns = append(out[at].warns, ws...)
		}
	}()
	judgeRange := func(lo, hi int) {
		var ps pathStats
		defer ps.close()
		for i := lo; i < hi; i++ {
			p, warns := d.judge(ctx, uniq[i], src, pm, nil, nil, &ps)
			out[i] = judged{p, warns}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(uniq)/judgeChunk)
	if workers <= 1 {
		judgeRange(0, len(uniq))
		return out
	}
	var wg sync.WaitGroup
	per := (len(uniq) + workers - 1) / workers
	for lo := 0; lo < len(uniq); lo += per {
		wg.Go(func() { judgeRange(lo, min(lo+per, len(uniq))) })
	}
	wg.Wait()
	return out
}

// duplicateWarning says that pm's offer of was left out for having the id
// of the plugin at keptRoot, which discovery keeps (the first offered).
// An offer repeated exactly, root and manifest, is no problem and needs
// none.
func duplicateWarning(pm string, of protocol.Offer, keptRoot string) Warning {
	id := of.ID
	what := "with another manifest"
	if of.Root != keptRoot {
		what = "at " + strconv.Quote(of.Root)
	}
	return Warning{PM: pm, Package: &id, Level: protocol.LevelWarning,
		Message: fmt.Sprintf("plugin %s offered a second time, %s; left out: the plugin at %q has its id", id, what, keptRoot)}
}

// judgeChunk is the fewest offers judgeAll gives a goroutine of its own.
const judgeChunk = 64

// add validates an offer, decides its state and adds it to the result,
// unless its id is already there. A plugin waiting for consent as a
// dependency is vouched for when an enabled plugin references it: it is
// decided again as chained.
func (d *discoverer) add(ctx context.Context, of protocol.Offer, src Source, pm string, via *Plugin, root *os.Root) {
	at, dup := d.seen[of.ID]
	if dup && !(src == SourceChained && d.res.Plugins[at].State == NeedsConsent) {
		if root != nil {
			root.Close()
		}
		// Duplicates collapse; one from elsewhere (two workspace
		// directories whose manifests give one name) is said to be left
		// out. A chained reference to a plugin already in is the point of
		// chaining.
		if kept := d.res.Plugins[at].Root; src != SourceChained && kept != of.Root {
			d.res.Warnings = append(d.res.Warnings, duplicateWarning(pm, of, kept))
		}
		return
	}
	p, warns := d.judge(ctx, of, src, pm, via, root, nil)
	d.res.Warnings = append(d.res.Warnings, warns...)
	if dup {
		d.res.Plugins[at] = p
	} else {
		at = len(d.res.Plugins)
		d.seen[of.ID] = at
		d.res.Plugins = append(d.res.Plugins, p)
	}
	if src == SourceChained {
		d.queue = append(d.queue, at)
	}
}

// judge validates an offer and decides its state; only a plugin that ends
// up enabled has its skill groups walked, and the warnings of that walk are
// returned. root, when not nil, is the offer's root already opened (and is
// closed here); otherwise the offer is checked by checkOffer, looking at
// its paths through ps (the calling goroutine's own, or nil), and the root
// of a plugin enabled is opened once, for its walk, which goes through it.
// judge changes nothing in d but the walk budget, so several may run at
// once.
func (d *discoverer) judge(ctx context.Context, of protocol.Offer, src Source, pm string, via *Plugin, root *os.Root, ps *pathStats) (Plugin, []Warning) {
	p := Plugin{ID: of.ID, Name: of.ID.Name, Root: of.Root, Source: src}
	var plugin *manifest.Plugin
	var reason string
	if root != nil {
		defer root.Close()
		plugin, reason = validateIn(root, of, src)
	} else {
		plugin, reason = checkOffer(of, src, pm, d.openRoot, ps)
	}
	if plugin == nil {
		p.State, p.Reason = Invalid, reason
		return p, nil
	}
	p.plugin = plugin
	// Decide first: nothing is walked, nor its root opened, for a plugin
	// that will not run.
	p.State, p.Reason = d.decide(ctx, p, via)
	if p.State != Enabled || !hasGroups(plugin) {
		return p, nil
	}
	if root == nil {
		var err error
		if root, err = d.openRoot(of.Root); err != nil {
			p.State, p.Reason = Invalid, fmt.Sprintf("root %s is not an existing directory", of.Root)
			return p, nil
		}
		defer root.Close()
	}
	var warns []Warning
	p.Skills, warns = d.countSkills(ctx, p, root)
	return p, warns
}

func origin(src Source) manifest.Origin {
	switch src {
	case SourceRegistry:
		return manifest.OriginRegistry
	case SourceWorkspace:
		return manifest.OriginWorkspace
	}
	return manifest.OriginPackage
}

// ValidateOffer checks an offer that pm made as the host must: the id is
// under pm's name, the root an existing directory named by an absolute,
// clean path (filepath.Clean leaves it as it is), the manifest
// valid for the source's origin, and every source.path inside the root even
// through symlinks. It returns the validated plugin, or nil and the reason.
func ValidateOffer(of protocol.Offer, src Source, pm string) (*manifest.Plugin, string) {
	return checkOffer(of, src, pm, os.OpenRoot, nil)
}

// hasGroups reports whether the plugin has a local skill group to walk.
func hasGroups(p *manifest.Plugin) bool {
	for _, g := range p.Skills {
		if g.Path != "" {
			return true
		}
	}
	return false
}

// validateIn checks the offer's manifest and that every source.path stays
// inside root, lexically and through symbolic links.
func validateIn(root *os.Root, of protocol.Offer, src Source) (*manifest.Plugin, string) {
	plugin, reason := validateManifest(of, src)
	if plugin == nil {
		return nil, reason
	}
	for _, g := range plugin.Skills {
		if g.Path == "" {
			continue
		}
		if err := contained(root, g.Path); err != nil {
			return nil, err.Error()
		}
	}
	return plugin, ""
}

// contained checks that rel, a source.path, stays inside root, lexically
// and, resolved inside the os.Root, through symbolic links.
func contained(root *os.Root, rel string) error {
	if _, ok := localPath(rel); !ok {
		return fmt.Errorf("source.path %q escapes the plugin root", rel)
	}
	_, err := root.Stat(filepath.FromSlash(rel))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil // absent: nothing to escape with
	}
	if skill.LeadsOutside(err) {
		return fmt.Errorf("source.path %q leads outside the plugin root", rel)
	}
	return fmt.Errorf("source.path %q cannot be followed inside the plugin root (%v)", rel, causeOf(err))
}

// localPath cleans rel, a slash-separated path, and reports whether it
// stays below its base ("." included).
func localPath(rel string) (string, bool) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", false
	}
	c := path.Clean(rel)
	return c, c == "." || filepath.IsLocal(filepath.FromSlash(c))
}

// countSkills walks the plugin's local skill groups inside root and counts
// their skills; what the walk left out, and a bound it reached, are
// returned as warnings naming the plugin.
func (d *discoverer) countSkills(ctx context.Context, p Plugin, root *os.Root) (int, []Warning) {
	var groups []string
	for _, g := range p.plugin.Skills {
		if c, ok := localPath(g.Path); ok && g.Path != "" {
			groups = append(groups, filepath.FromSlash(c))
		}
	}
	if len(groups) == 0 {
		return 0, nil
	}
	d.walkMu.Lock()
	spent := d.walked >= cmp.Or(d.o.WalkBudget, DefaultWalkBudget)
	if spent {
		d.unwalked++
	}
	d.walkMu.Unlock()
	if spent {
		return 0, nil
	}
	start := time.Now()
	res := skill.Walk(ctx, root, groups, d.o.Limits)
	d.walkMu.Lock()
	d.walked += time.Since(start)
	d.walkMu.Unlock()
	var warns []Warning
	warnf := func(format string, args ...any) {
		warns = append(warns, Warning{PM: p.ID.PM, Package: &p.ID, Message: fmt.Sprintf(format, args...), Level: protocol.LevelWarning})
	}
	for _, pr := range res.Problems {
		warnf("plugin %s (root %s): %s", p.ID, p.Root, pr)
	}
	if more := res.NProblems - len(res.Problems); more > 0 {
		warnf("plugin %s (root %s): %d more entries leading outside the plugin root or not what their name says; left out", p.ID, p.Root, more)
	}
	if res.Deep != "" {
		warnf("plugin %s (root %s): %s lies below the depth bound of %d levels; its skills are not counted",
			p.ID, p.Root, res.Deep, cmp.Or(d.o.Limits.Depth, skill.DefaultDepth))
	}
	if res.Bound != "" {
		warnf("plugin %s (root %s): walking its skill groups stopped at %s; skills past it are not counted", p.ID, p.Root, res.Bound)
	}
	return len(res.Skills), warns
}

// evaluator returns the evaluator of predicates for plugins from src. It
// waits until every PM's dependencies are in: a predicate may name any.
func (d *discoverer) evaluator(src Source) *predicate.Evaluator {
	<-d.depsReady
	return &predicate.Evaluator{
		Deps:            predicate.Deps(d.res.Deps),
		WorkspaceMember: src == SourceWorkspace,
		Dir:             d.o.Workspace,
		LookupEnv:       d.o.LookupEnv,
		Shell:           d.shell,
	}
}

// shell runs a shell() predicate's command with `sh -c` in the workspace
// and reports whether it exited 0. The predicate package runs nothing
// itself; the host, which decides what runs, is where the command starts.
func (d *discoverer) shell(ctx context.Context, command string) bool {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = d.o.Workspace
	return cmd.Run() == nil
}

// decide applies the enablement rules: disable beats everything; trusted
// sources are enabled, dependency-embedded plugins need consent (use or
// auto-enable), chained plugins follow the plugin that references them;
// dormant plugins need use; a gate that does not hold leaves a plugin dormant.
func (d *discoverer) decide(ctx context.Context, p Plugin, via *Plugin) (State, string) {
	pl := d.o.Config.Plugins
	ws := d.o.Workspace
	match := func(list []config.Selector) *config.Selector {
		for i := range list {
			if list[i].Matches(p.ID.PM, p.Name, ws) {
				return &list[i]
			}
		}
		return nil
	}
	if s := match(pl.Disable); s != nil {
		return Disabled, fmt.Sprintf("disabled by %s (%s)", s, s.Pos)
	}
	use := match(pl.Use)
	var reason string
	switch p.Source {
	case SourceRegistry, SourceWorkspace:
		reason = "trusted " + string(p.Source)
		if p.plugin.RequiresUse {
			if use == nil {
				return Dormant, fmt.Sprintf("applies to every workspace, so it waits for use = [{pm = %q, name = %q}] in [plugins]", p.ID.PM, p.Name)
			}
			reason = fmt.Sprintf("woken by use %s (%s)", use, use.Pos)
		}
	case SourceChained:
		reason = "referenced by " + via.ID.String()
	default:
		auto := match(pl.AutoEnable)
		switch {
		case use != nil:
			reason = fmt.Sprintf("use %s (%s)", use, use.Pos)
		case auto != nil:
			reason = fmt.Sprintf("auto-enable %s (%s)", auto, auto.Pos)
		default:
			// Most plugins of a large workspace end here: the reason is
			// built without fmt (the same text as %q would quote).
			return NeedsConsent, "embedded in a dependency; consent with auto-enable = [{pm = " + strconv.Quote(p.ID.PM) + ", name = " + strconv.Quote(p.Name) + "}] in [plugins]"
		}
	}
	if gate := p.plugin.Predicates; len(gate) > 0 && !d.evaluator(p.Source).Holds(ctx, gate) {
		return Dormant, fmt.Sprintf("its gate %s does not hold in this workspace", strings.Join(gate.Strings(), ", "))
	}
	return Enabled, reason
}

// readPathRegistry offers every entry of a directory registry. Each
// entry's SYMPOSIUM.toml or SKILL.md is read through the registry opened as
// a root, as validate reads it (sdk/pkgfile): a regular file of at most
// MaxManifestSize bytes, a link followed only inside the registry.
func (d *discoverer) readPathRegistry(pr PathRegistry) []protocol.Offer {
	entries, err := layout.Enumerate(pr.Dir)
	if err != nil {
		d.warnAt(Warning{PM: pr.Name}, "registry %s (%s): %v", pr.Name, pr.Dir, err)
		return nil
	}
	if len(entries) == 0 {
		return nil
	}
	root, err := os.OpenRoot(pr.Dir)
	if err != nil {
		d.warnAt(Warning{PM: pr.Name}, "registry %s (%s): %v", pr.Name, pr.Dir, err)
		return nil
	}
	defer root.Close()
	var out []protocol.Offer
	for _, e := range entries {
		dir := filepath.Join(pr.Dir, filepath.FromSlash(e.Path))
		var m *manifest.Manifest
		switch e.Kind {
		case layout.EntryPlugin:
			data, err := pkgfile.ReadRoot(root, path.Join(e.Path, manifest.ManifestFile), MaxManifestSize)
			if err == nil {
				m, err = manifest.DecodeTOML(data)
			}
			if err != nil {
				d.warnAt(Warning{PM: pr.Name}, "registry %s: entry %s: %v", pr.Name, e.Path, err)
				continue
			}
		default:
			data, err := pkgfile.ReadRoot(root, path.Join(e.Path, skill.File), skill.MaxFileSize)
			var sk *skill.Skill
			if err == nil {
				sk, err = skill.Parse(data, true)
			}
			if err != nil {
				d.warnAt(Warning{PM: pr.Name}, "registry %s: entry %s: %v", pr.Name, e.Path, err)
				continue
			}
			m = layout.SkillPlugin(filepath.Base(dir), sk)
		}
		raw, err := m.WireJSON()
		if err != nil {
			d.warnAt(Warning{PM: pr.Name}, "registry %s: entry %s: %v", pr.Name, e.Path, err)
			continue
		}
		out = append(out, protocol.Offer{ID: protocol.PackageID{PM: pr.Name, Name: e.Path, Version: protocol.AnyVersion}, Root: dir, Manifest: raw})
	}
	return out
}

// workspacePlugins offers the plugins of the workspace the user opened: its
// own, and those of the members its PMs report, each a directory with
// SYMPOSIUM.toml or with a skills/ directory. A PM's workspace answer may
// only narrow the opened workspace: a root or member outside it (lexically,
// or through a symbolic link) is refused with a warning naming the PM and
// the directory, and nothing there is read.
func (d *discoverer) workspacePlugins(ctx context.Context, answers []host.WorkspaceAnswer, warns []host.Warning) {
	d.warn(warns)
	scope, err := openScope(d.o.Workspace)
	if err != nil {
		d.warnf("workspace plugins are not looked for: %v", causeOf(err))
		return
	}
	defer scope.root.Close()
	dirs := []reportedDir{{dir: scope.dir}}
	for _, a := range answers {
		if a.Root != "" {
			dirs = append(dirs, reportedDir{pm: a.PM, what: "root", dir: a.Root})
		}
		for _, m := range a.Members {
			dirs = append(dirs, reportedDir{pm: a.PM, what: "member " + m.Name, dir: m.Dir})
		}
	}
	done := map[string]bool{}
	for _, rd := range dirs {
		rel, ok := scope.rel(rd.dir)
		if !ok {
			d.warnAt(Warning{PM: rd.pm}, "%s, outside the opened workspace %s; a PM may narrow the workspace, never extend it, so nothing there is trusted as a workspace plugin",
				rd, scope.dir)
			continue
		}
		if done[rel] {
			continue
		}
		done[rel] = true
		root, err := scope.open(rel)
		if err != nil {
			switch {
			case skill.LeadsOutside(err):
				d.warnAt(Warning{PM: rd.pm}, "%s, which leads outside the opened workspace %s; nothing there is trusted as a workspace plugin", rd, scope.dir)
			case !errors.Is(err, fs.ErrNotExist):
				d.warnAt(Warning{PM: rd.pm}, "%s, which cannot be opened inside the opened workspace %s (%v); nothing there is trusted as a workspace plugin",
					rd, scope.dir, causeOf(err))
			}
			continue
		}
		dir := filepath.Join(scope.dir, rel)
		of, ok := d.workspaceOffer(root, dir)
		if !ok {
			root.Close()
			continue
		}
		d.add(ctx, of, SourceWorkspace, LocalPM, nil, root)
	}
}

// workspaceOffer makes the offer of the workspace directory dir, opened as
// root, when it holds a plugin.
func (d *discoverer) workspaceOffer(root *os.Root, dir string) (protocol.Offer, bool) {
	var raw json.RawMessage
	data, err := readManifestIn(root, manifest.ManifestFile)
	switch {
	case err == nil:
		m, err := manifest.DecodeTOML(data)
		if err != nil {
			d.warnAt(Warning{File: filepath.Join(dir, manifest.ManifestFile)}, "workspace plugin %s: %v", filepath.Join(dir, manifest.ManifestFile), err)
			return protocol.Offer{}, false
		}
		if raw, err = m.WireJSON(); err != nil {
			d.warnf("workspace plugin %s: %v", dir, err)
			return protocol.Offer{}, false
		}
	case !errors.Is(err, fs.ErrNotExist):
		d.warnAt(Warning{File: filepath.Join(dir, manifest.ManifestFile)}, "workspace plugin %s: %v", filepath.Join(dir, manifest.ManifestFile), causeOf(err))
		return protocol.Offer{}, false
	default:
		if fi, err := root.Stat(manifest.DefaultSkillsPath); err != nil || !fi.IsDir() {
			return protocol.Offer{}, false
		}
		raw = json.RawMessage("{}")
	}
	name := filepath.Base(dir)
	if m, err := manifest.DecodeJSON(raw); err == nil && m.Name != "" {
		name = m.Name
	}
	return protocol.Offer{ID: protocol.PackageID{PM: LocalPM, Name: name, Version: protocol.AnyVersion}, Root: dir, Manifest: raw}, true
}
