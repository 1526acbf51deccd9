package manifest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// Origin says where a manifest came from; the rules differ (docs/manifests.md §1).
type Origin int

const (
	// OriginRegistry is a registry entry (including a synthesized bare-skill
	// plugin): `name` required, `[defaults]` rejected, dormancy applies, no
	// default skill groups.
	OriginRegistry Origin = iota + 1
	// OriginWorkspace is a workspace root or member: name defaults to
	// DefaultName; unless `[defaults] skills = false` the groups `skills`
	// and, with AgentsSyncing, `.agents/skills` gated by workspace-member()
	// are appended; never dormant.
	OriginWorkspace
	// OriginPackage is a package-embedded plugin offered by an ecosystem PM:
	// name defaults to DefaultName, `[defaults]` accepted, never dormant. No
	// default group is appended: the PM already added it ([Embedded]).
	OriginPackage
)

// String names the origin.
func (o Origin) String() string {
	switch o {
	case OriginRegistry:
		return "registry"
	case OriginWorkspace:
		return "workspace"
	case OriginPackage:
		return "package"
	}
	return fmt.Sprintf("Origin(%d)", int(o))
}

// ValidateOptions configures [Validate].
type ValidateOptions struct {
	// Origin selects the origin's rules; zero means OriginRegistry.
	Origin Origin
	// DefaultName is the name used when the manifest has none (workspace:
	// the directory name; package: the package name).
	DefaultName string
	// AgentsSyncing adds the workspace `.agents/skills` default group.
	AgentsSyncing bool
	// File is copied into every Problem.
	File string
}

// MaxDescription is the longest skill or subcommand description, in bytes.
const MaxDescription = 1024

// ReservedSubcommands are the subcommand names a plugin may not define.
var ReservedSubcommands = []string{"init", "sync", "hook", "plugin", "crate-info", "self-update", "help"}

// Gate is a predicate set: every entry must hold (empty holds). It encodes
// as the canonical strings.
type Gate []predicate.Predicate

// Strings returns the canonical text of each predicate.
func (g Gate) Strings() []string {
	out := make([]string, len(g))
	for i, p := range g {
		out[i] = p.String()
	}
	return out
}

// MarshalJSON encodes the gate as canonical strings.
func (g Gate) MarshalJSON() ([]byte, error) { return marshalJSON(g.Strings()) }

// ParseGate parses a `depends-on` value and a `predicates` list into one
// predicate set: the lowered depends-on first, then the predicates (ANDed).
func ParseGate(d DependsOn, predicates []string) (Gate, error) {
	var atoms []predicate.Atom
	for _, s := range d.Atoms {
		a, err := predicate.ParseAtom(s)
		if err != nil {
			return nil, err
		}
		atoms = append(atoms, a)
	}
	var out []predicate.Predicate
	if p := predicate.Lower(atoms); p != nil {
		out = append(out, p)
	}
	for _, s := range predicates {
		p, err := predicate.Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Plugin is a validated plugin (Symposium's validated form): depends-on folded into
// predicates, inline installations promoted to named ones, references
// resolved.
type Plugin struct {
	Name             string                     `json:"name"`
	Predicates       Gate                       `json:"predicates"`
	Installations    []ValidInstallation        `json:"installations"`
	Hooks            []ValidHook                `json:"hooks"`
	Skills           []ValidSkillGroup          `json:"skills"`
	MCPServers       []ValidMCPServer           `json:"mcp_servers"`
	Subcommands      map[string]ValidSubcommand `json:"subcommands,omitempty"`
	CustomPredicates []ValidPredicateDef        `json:"custom_predicates,omitempty"`
	Chained          []Chained                  `json:"chained,omitempty"`
	RequiresUse      bool                       `json:"requires_use,omitempty"`
	Origin           Origin                     `json:"-"`
	Manifest         *Manifest                  `json:"-"`
}

// ValidInstallation is an installation with its source checked and its
// requirements resolved to names.
type ValidInstallation struct {
	Name            string         `json:"name"`
	Source          *InstallSource `json:"source,omitempty"`
	Executable      string         `json:"executable,omitempty"`
	Script          string         `json:"script,omitempty"`
	Args            []string       `json:"args,omitempty"`
	Requirements    []string       `json:"requirements,omitempty"`
	InstallCommands []string       `json:"install_commands,omitempty"`
}

// InstallSource is how an installation is acquired.
type InstallSource struct {
	// Kind is "cargo" or "github".
	Kind    string `json:"source"`
	Crate   string `json:"crate,omitempty"`
	Version string `json:"version,omitempty"`
	Git     string `json:"git,omitempty"`
	Global  bool   `json:"global,omitempty"`
	URL     string `json:"url,omitempty"`
}

// ValidHook is a hook with its command installation resolved and exactly
// one runnable across the hook and that installation (or none for a
// cargo-sourced installation).
type ValidHook struct {
	Name         string   `json:"name"`
	Event        string   `json:"event"`
	Agent        *string  `json:"agent"`
	Matcher      *string  `json:"matcher"`
	Requirements []string `json:"requirements"`
	Command      string   `json:"command"`
	Executable   *string  `json:"executable"`
	Script       *string  `json:"script"`
	Args         []string `json:"args"`
	Format       string   `json:"format"`
	Predicates   Gate     `json:"predicates"`
}

// ValidSkillGroup is a gated skill group: Path (relative to the manifest's
// directory, as written; hosts resolve and contain it) or Git.
type ValidSkillGroup struct {
	Predicates Gate `json:"predicates"`
	Path       string
	Git        string
}

// MarshalJSON renders the group as `{predicates, source: {path|git}}`.
func (g ValidSkillGroup) MarshalJSON() ([]byte, error) {
	src := map[string]string{}
	if g.Git != "" {
		src[keyGit] = g.Git
	} else {
		src[keyPath] = g.Path
	}
	return marshalJSON(struct {
		Predicates Gate              `json:"predicates"`
		Source     map[string]string `json:"source"`
	}{g.Predicates, src})
}

// ValidMCPServer is a gated MCP server.
type ValidMCPServer struct {
	Predicates Gate      `json:"predicates"`
	Server     MCPServer `json:"-"`
}

// MarshalJSON renders the server's own keys (as on the wire, without its
// depends-on) with the folded predicates.
func (s ValidMCPServer) MarshalJSON() ([]byte, error) {
	m := Manifest{MCPServers: []MCPServer{s.Server}}
	t := m.Table()[keyMCPServers].([]any)[0].(map[string]any)
	delete(t, keyDependsOn)
	t[keyPredicates] = s.Predicates.Strings()
	return marshalJSON(t)
}

// ValidSubcommand is a subcommand with its command resolved to an
// installation name.
type ValidSubcommand struct {
	Description string `json:"description"`
	Audience    string `json:"audience"`
	Command     string `json:"command"`
	Predicates  Gate   `json:"predicates"`
}

// ValidPredicateDef is a custom predicate with its command resolved.
type ValidPredicateDef struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
}

// Chained is a chained plugin reference: a cargo package by name, with the
// version requirement recorded (not enforced).
type Chained struct {
	Predicates Gate   `json:"predicates,omitempty"`
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
}

// Validate checks a manifest with the rules of its origin (docs/manifests.md §1–§9)
// and returns the validated plugin, or nil when there is an error. Problems
// come in the order Symposium would find them: first the parse-level ones
// (types were checked by decoding; then unknown keys, required keys, atoms
// and predicates, in document order), and if there are none the validation
// pipeline in Symposium's order. Warnings (Problem.Warning) do not make the
// plugin invalid: a dormant registry plugin, a non-GitHub source.git.
//
// Beyond Symposium, an installation whose source does not parse (unknown
// kind, missing crate or url, a key that does not belong to its kind) is an
// error here, where Symposium silently drops the source. source.path
// containment is the host's business, not checked here.
func Validate(m *Manifest, opts ValidateOptions) (*Plugin, []Problem) {
	if opts.Origin == 0 {
		opts.Origin = OriginRegistry
	}
	if ps := parseProblems(m); len(ps) > 0 {
		return nil, withFile(ps, opts.File)
	}
	v := &validator{m: m, opts: opts, p: &Plugin{Origin: opts.Origin, Manifest: m}}
	v.run()
	ps := withFile(v.problems, opts.File)
	for _, p := range ps {
		if !p.Warning {
			return nil, ps
		}
	}
	return v.p, ps
}

func withFile(ps []Problem, file string) []Problem {
	for i := range ps {
		ps[i].File = file
	}
	return ps
}

type validator struct {
	m        *Manifest
	opts     ValidateOptions
	p        *Plugin
	problems []Problem
	names    map[string]int // installation name → index in p.Installations
}

func (v *validator) add(field, format string, args ...any) {
	v.problems = append(v.problems, Problem{Field: field, Line: v.m.Line(field), Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(field, format string, args ...any) {
	v.problems = append(v.problems, Problem{Field: field, Line: v.m.Line(field), Message: fmt.Sprintf(format, args...), Warning: true})
}

func (v *validator) gate(d DependsOn, predicates []string) Gate {
	g, err := ParseGate(d, predicates)
	if err != nil { // unreachable: parseProblems checked every atom and predicate
		v.add("", "%v", err)
	}
	if g == nil {
		g = Gate{}
	}
	return g
}

func (v *validator) run() {
	m, p := v.m, v.p
	// 1. name
	p.Name = m.Name
	if p.Name == "" {
		if v.opts.Origin == OriginRegistry {
			v.add(keyName, "manifest is missing name (a registry plugin must be named)")
		} else {
			p.Name = v.opts.DefaultName
		}
	}
	// 2. origin defaults
	groups := slices.Clip(m.Skills) // appended to below without touching m
	switch v.opts.Origin {
	case OriginRegistry:
		if m.Defaults != nil {
			v.add(keyDefaults, "[defaults] is not allowed in a registry plugin manifest; registry plugins get no default skill groups, declare [[skills]] instead")
		}
	case OriginWorkspace:
		if m.Defaults == nil || m.Defaults.Skills == nil || *m.Defaults.Skills {
			groups = append(groups, SkillGroup{Source: &SkillSource{Path: DefaultSkillsPath}})
			if v.opts.AgentsSyncing {
				groups = append(groups, SkillGroup{Predicates: []string{"workspace-member()"}, Source: &SkillSource{Path: ".agents/skills"}})
			}
		}
	}
	// 3. duplicate installation names
	seen := map[string]bool{}
	for i, in := range m.Installations {
		if seen[in.Name] {
			v.add(joinPath(indexPath(keyInstallations, i), keyName), "duplicate installation name %q", in.Name)
		}
		seen[in.Name] = true
	}
	for _, in := range m.Installations {
		if _, ok := v.names[in.Name]; !ok {
			v.name(in.Name, len(p.Installations))
			p.Installations = append(p.Installations, ValidInstallation{Name: in.Name})
		}
	}
	// 4. installations in declaration order
	for i := range m.Installations {
		in := &m.Installations[i]
		path := indexPath(keyInstallations, i)
		v.fillInstallation(v.names[in.Name], in, path)
		v.requirements(v.names[in.Name], in.Name, in.Requirements, path)
	}
	// 5. hooks
	for i, h := range m.Hooks {
		v.hook(i, h)
	}
	// 6. subcommands in key order
	for name := range keys(m.Subcommand) {
		v.subcommand(name, m.Subcommand[name])
	}
	// 7. custom predicates
	for i, pd := range m.Predicate {
		v.customPredicate(i, pd)
	}
	// 8. retired top-level crates
	if c, ok := m.Extra[keyRetiredCrates]; ok {
		v.add(keyRetiredCrates, "crates was renamed: write depends-on = %s", tomlInline(c))
	}
	// 9. plugin gate
	p.Predicates = v.gate(m.DependsOn, m.Predicates)
	// 10. skill groups, MCP servers, chained references
	for i, g := range groups {
		v.skillGroup(i, g)
	}
	for i, s := range m.MCPServers {
		path := indexPath(keyMCPServers, i)
		if c, ok := s.Extra[keyRetiredCrates]; ok {
			v.add(joinPath(path, keyRetiredCrates), "crates was renamed: write depends-on = %s", tomlInline(c))
		}
		switch s.Type {
		case "", "http", "sse":
		case "stdio":
			v.warn(joinPath(path, keyType), "type = \"stdio\" is not a tag Symposium knows; leave type out for a stdio server")
		default:
			v.warn(joinPath(path, keyType), "unknown MCP transport %q; Symposium reads this server as stdio (type \"http\" or \"sse\", or no type for stdio)", s.Type)
		}
		p.MCPServers = append(p.MCPServers, ValidMCPServer{Predicates: v.gate(s.DependsOn, s.Predicates), Server: s})
	}
	for i, r := range m.Plugins {
		v.chained(i, r)
	}
	if p.Hooks == nil {
		p.Hooks = []ValidHook{}
	}
	if p.Installations == nil {
		p.Installations = []ValidInstallation{}
	}
	if p.Skills == nil {
		p.Skills = []ValidSkillGroup{}
	}
	if p.MCPServers == nil {
		p.MCPServers = []ValidMCPServer{}
	}
	if p.Predicates == nil {
		p.Predicates = Gate{}
	}
	// 11. dormancy (only worth a warning for a plugin that loads)
	if v.opts.Origin == OriginRegistry && len(v.problems) == 0 && !p.mentionsDependency() {
		p.RequiresUse = true
		v.warn("", "plugin %q is dormant: nothing in it mentions a dependency (depends-on) or calls a custom predicate, so it stays inactive until a [plugins] use entry names it", p.Name)
	}
}

// fillInstallation validates one installation (declared or promoted) into
// p.Installations[idx].
func (v *validator) fillInstallation(idx int, in *Installation, path string) {
	out := &v.p.Installations[idx]
	out.Executable, out.Script = in.Executable, in.Script
	out.Args = slices.Clone(in.Args)
	out.InstallCommands = slices.Clone(in.InstallCommands)
	label := "inline installation"
	if in.Name != "" && strings.HasPrefix(path, "installations[") {
		label = fmt.Sprintf("installation %q", in.Name)
	}
	switch in.Source {
	case "":
		for _, k := range []struct{ key, val string }{{keyCrate, in.Crate}, {keyVersion, in.Version}, {keyURL, in.URL}} {
			if k.val != "" {
				v.add(joinPath(path, k.key), "%s sets %s but no source; add source = %q (Symposium would silently ignore %s)", label, k.key, sourceFor(k.key), k.key)
			}
		}
		if in.Global != nil {
			v.add(joinPath(path, keyGlobal), "%s sets global but no source; add source = \"cargo\" (Symposium would silently ignore global)", label)
		}
	case "cargo":
		if in.Crate == "" {
			v.add(path, "%s has source = \"cargo\" but no crate; set crate = \"<crate name>\" (Symposium would silently drop the source)", label)
		}
		if in.URL != "" {
			v.add(joinPath(path, keyURL), "%s has source = \"cargo\", which has no url key; use git = \"...\" for cargo install --git, or source = \"github\"", label)
		}
		v.strayInstallKeys(in, path, label)
		out.Source = &InstallSource{Kind: "cargo", Crate: in.Crate, Version: in.Version, Git: in.Git, Global: in.Global != nil && *in.Global}
		if in.Executable != "" && in.Script != "" {
			break // reported below
		}
		if in.Git != "" && in.Executable == "" {
			v.add(path, "%s installs a cargo crate from git and must name the binary: set executable", label)
		}
		if in.Global != nil && *in.Global && in.Executable == "" {
			v.add(path, "%s installs a cargo crate globally and must name the binary: set executable", label)
		}
	case "github":
		url := in.URL
		switch {
		case in.URL != "" && in.Git != "":
			v.add(path, "%s sets both url and git; for source = \"github\" they are the same key, set url", label)
		case url == "":
			url = in.Git
		}
		if url == "" {
			v.add(path, "%s has source = \"github\" but no url; set url = \"https://github.com/<owner>/<repo>\" (Symposium would silently drop the source)", label)
		}
		for _, k := range []struct{ key, val string }{{keyCrate, in.Crate}, {keyVersion, in.Version}} {
			if k.val != "" {
				v.add(joinPath(path, k.key), "%s has source = \"github\", which has no %s key (Symposium would silently drop the source)", label, k.key)
			}
		}
		if in.Global != nil {
			v.add(joinPath(path, keyGlobal), "%s has source = \"github\", which has no global key (Symposium would silently drop the source)", label)
		}
		v.strayInstallKeys(in, path, label)
		out.Source = &InstallSource{Kind: "github", URL: url}
	default:
		v.add(joinPath(path, keySource), "%s has unknown source %q; expected \"cargo\" or \"github\", or no source for a program already on disk (Symposium would silently drop the source)", label, in.Source)
	}
	if in.Executable != "" && in.Script != "" {
		v.add(path, "%s sets both executable and script; they are mutually exclusive", label)
	}
}

func sourceFor(key string) string {
	if key == keyURL {
		return "github"
	}
	return "cargo"
}

// strayInstallKeys reports unknown keys in an installation with a source:
// Symposium's source parser rejects them and then silently drops the source.
func (v *validator) strayInstallKeys(in *Installation, path, label string) {
	for k := range keys(in.Extra) {
		if k == keyName {
			continue
		}
		v.add(joinPath(path, k), "%s has source = %q and an unknown key %q (Symposium would silently drop the source)", label, in.Source, k)
	}
}

// requirements resolves an installation's requirement list into
// p.Installations[idx].Requirements, promoting inline ones.
func (v *validator) requirements(idx int, owner string, reqs []InstallRef, path string) {
	var names []string
	for i, r := range reqs {
		rp := indexPath(joinPath(path, keyRequirements), i)
		if name, ok := v.resolve(r, fmt.Sprintf("%s__req_%d", owner, i), rp); ok {
			names = append(names, name)
		}
	}
	v.p.Installations[idx].Requirements = names
}

// name records that the installation named name is p.Installations[idx].
// The map is made at the first name: most plugins name none.
func (v *validator) name(name string, idx int) {
	if v.names == nil {
		v.names = map[string]int{}
	}
	v.names[name] = idx
}

// resolve turns a reference into an installation name: a string must name an
// existing installation; an inline table is promoted under synthetic.
func (v *validator) resolve(r InstallRef, synthetic, path string) (string, bool) {
	if r.Inline == nil {
		if _, ok := v.names[r.Name]; !ok {
			v.add(path, "references unknown installation %q", r.Name)
			return "", false
		}
		return r.Name, true
	}
	if _, ok := v.names[synthetic]; ok {
		v.add(path, "the inline installation's synthetic name %q conflicts with an existing one; rename the hook, subcommand or installation", synthetic)
		return "", false
	}
	idx := len(v.p.Installations)
	v.name(synthetic, idx)
	v.p.Installations = append(v.p.Installations, ValidInstallation{Name: synthetic})
	v.fillInstallation(idx, r.Inline, path)
	v.requirements(idx, synthetic, r.Inline.Requirements, path)
	return synthetic, true
}

func (v *validator) hook(i int, h Hook) {
	path := indexPath(keyHooks, i)
	cmd, ok := v.resolve(h.Command, h.Name, joinPath(path, keyCommand))
	if !ok {
		return
	}
	var reqs []string
	for j, r := range h.Requirements {
		name, ok := v.resolve(r, fmt.Sprintf("%s__req_%d", h.Name, j), indexPath(joinPath(path, keyRequirements), j))
		if !ok {
			return
		}
		reqs = append(reqs, name)
	}
	in := v.p.Installations[v.names[cmd]]
	var set []string
	if in.Executable != "" {
		set = append(set, "installation executable")
	}
	if in.Script != "" {
		set = append(set, "installation script")
	}
	if h.Executable != "" {
		set = append(set, "hook executable")
	}
	if h.Script != "" {
		set = append(set, "hook script")
	}
	switch {
	case len(set) > 1:
		v.add(path, "hook %q has more than one thing to run (%s); set exactly one", h.Name, strings.Join(set, ", "))
		return
	case len(set) == 0 && (in.Source == nil || in.Source.Kind != "cargo"):
		v.add(path, "hook %q has nothing to run: set executable or script on the hook or on installation %q", h.Name, cmd)
		return
	}
	if len(in.Args) > 0 && len(h.Args) > 0 {
		v.add(joinPath(path, keyArgs), "hook %q and its installation %q both set args; set them in one place", h.Name, cmd)
		return
	}
	args := in.Args
	if len(args) == 0 {
		args = h.Args
	}
	final := slices.Clone(in.Requirements)
	for _, r := range reqs {
		final = append(final, v.p.Installations[v.names[r]].Requirements...)
		final = append(final, r)
	}
	if h.Matcher != "" && h.Matcher != "*" {
		if _, err := regexp.Compile(h.Matcher); err != nil {
			v.warn(joinPath(path, keyMatcher), "matcher %q is not a valid regular expression, so the hook never fires: %v", h.Matcher, err)
		}
	}
	vh := ValidHook{
		Name: h.Name, Event: h.Event, Command: cmd, Requirements: final,
		Args: append([]string{}, args...), Format: h.Format,
		Predicates: v.gate(DependsOn{}, h.Predicates),
	}
	if vh.Format == "" {
		vh.Format = "symposium"
	}
	if vh.Requirements == nil {
		vh.Requirements = []string{}
	}
	vh.Agent, vh.Matcher = optStr(h.Agent), optStr(h.Matcher)
	vh.Executable, vh.Script = optStr(h.Executable), optStr(h.Script)
	v.p.Hooks = append(v.p.Hooks, vh)
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (v *validator) subcommand(name string, s Subcommand) {
	path := joinPath(keySubcommand, name)
	switch {
	case !validSubcommandName(name):
		v.add(path, "invalid subcommand name %q: use only ASCII letters, digits, '-' and '_'", name)
		return
	case slices.Contains(ReservedSubcommands, name):
		v.add(path, "subcommand name %q is reserved by Symposium (reserved: %s)", name, strings.Join(ReservedSubcommands, ", "))
		return
	case len(s.Description) > MaxDescription:
		v.add(joinPath(path, keyDescription), "subcommand %q description is %d bytes long; the limit is %d", name, len(s.Description), MaxDescription)
		return
	}
	if c, ok := s.Extra[keyRetiredCrates]; ok {
		v.add(joinPath(path, keyRetiredCrates), "crates was renamed: write depends-on = %s", tomlInline(c))
		return
	}
	cmd, ok := v.resolve(s.Command, name, joinPath(path, keyCommand))
	if !ok {
		return
	}
	aud := s.Audience
	if aud == "" {
		aud = "agents"
	}
	if v.p.Subcommands == nil {
		v.p.Subcommands = map[string]ValidSubcommand{}
	}
	v.p.Subcommands[name] = ValidSubcommand{Description: s.Description, Audience: aud, Command: cmd, Predicates: v.gate(s.DependsOn, s.Predicates)}
}

func validSubcommandName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (v *validator) customPredicate(i int, pd PredicateDef) {
	path := indexPath(keyPredicate, i)
	switch {
	case predicate.IsBuiltin(pd.Name):
		v.add(joinPath(path, keyName), "custom predicate name %q is a builtin predicate", pd.Name)
		return
	case !predicate.IsCustomName(pd.Name):
		v.add(joinPath(path, keyName), "invalid custom predicate name %q: start with a letter, then letters, digits or '_'", pd.Name)
		return
	}
	cmd, ok := v.resolve(pd.Command, "__pred_"+pd.Name, joinPath(path, keyCommand))
	if !ok {
		return
	}
	v.p.CustomPredicates = append(v.p.CustomPredicates, ValidPredicateDef{Name: pd.Name, Command: cmd, Args: slices.Clone(pd.Args)})
}

const pluginsHint = "reference a crate's plugin with [[plugins]] source.cargo = \"<crate>\" instead"

func (v *validator) skillGroup(i int, g SkillGroup) {
	// The group's path is spelled out only for a problem.
	path := func() string { return indexPath(keySkills, i) }
	if c, ok := g.Extra[keyRetiredCrates]; ok {
		v.add(joinPath(path(), keyRetiredCrates), "crates was renamed: write depends-on = %s", tomlInline(c))
		return
	}
	s := g.Source
	switch {
	case s == nil:
		v.add(path(), "a skills group must set source.path or source.git")
		return
	case s.Scalar != "":
		v.add(joinPath(path(), keySource), "source = %q: string sources are no longer supported; %s, or set source.path for a directory", s.Scalar, pluginsHint)
		return
	}
	for _, k := range []string{keyCrate, keyRetiredCratePath} {
		if _, ok := s.Extra[k]; ok {
			v.add(joinPath(joinPath(path(), keySource), k), "source.%s is no longer supported; %s", k, pluginsHint)
			return
		}
	}
	switch {
	case s.hasPath() && s.hasGit():
		v.add(joinPath(path(), keySource), "source.path and source.git are mutually exclusive")
		return
	case !s.hasPath() && s.Git == "":
		// An empty git names nothing to fetch.
		v.add(joinPath(path(), keySource), "source must set path or git")
		return
	}
	if s.hasGit() && !isGitHubURL(s.Git) {
		v.warn(joinPath(joinPath(path(), keySource), keyGit), "%q is not a https://github.com/ URL; Symposium can only fetch skill groups from GitHub and will skip this group", s.Git)
	}
	dir := s.Path
	if s.hasPath() && dir == "" {
		dir = "." // an empty path is the manifest's directory, the plugin root
	}
	v.p.Skills = append(v.p.Skills, ValidSkillGroup{Predicates: v.gate(g.DependsOn, g.Predicates), Path: dir, Git: s.Git})
}

func isGitHubURL(u string) bool {
	const prefix = "https://github.com/"
	return len(u) > len(prefix) && strings.EqualFold(u[:len(prefix)], prefix)
}

func (v *validator) chained(i int, r PluginRef) {
	path := indexPath(keyPlugins, i)
	src := r.Source
	sp := joinPath(path, keySource)
	if src.Git != nil || src.Path != nil {
		k := keyGit
		if src.Git == nil {
			k = keyPath
		}
		v.add(joinPath(sp, k), "only source.cargo is supported; git and path chained plugins are not yet implemented")
		return
	}
	if src.Cargo == nil {
		v.add(sp, "a chained plugin reference needs source.cargo = \"<crate>\"")
		return
	}
	c := src.Cargo
	cp := joinPath(sp, keyCargo)
	var ch Chained
	switch {
	case c.Other != nil:
		if t, ok := c.Other.(map[string]any); ok && len(t) == 1 {
			for k, val := range t {
				if s, ok := val.(string); ok {
					v.add(cp, "the dependency-table form { %s = %q } is not supported; write source.cargo = { name = %q, version = %q }", k, s, k, s)
					return
				}
			}
		}
		v.add(cp, "source.cargo takes a dependency atom (\"crate\", \"crate>=1\") or a { name, version } table")
		return
	case c.Atom != "":
		a, err := predicate.ParseAtom(c.Atom)
		if err != nil {
			v.add(cp, "%v", err)
			return
		}
		if a.Wildcard() {
			v.add(cp, "source.cargo = \"*\" needs a crate name")
			return
		}
		ch = Chained{Name: a.Name, Version: a.Req}
	default:
		if c.Name == "" {
			v.add(joinPath(cp, keyName), "source.cargo.name must not be empty")
			return
		}
		ch = Chained{Name: c.Name}
		if c.Version != "" && c.Version != "*" {
			if _, err := versions.Cargo.Matches(c.Version, "0.0.0"); err != nil {
				v.add(joinPath(cp, keyVersion), "source.cargo.version %q is not a Cargo version requirement", c.Version)
				return
			}
			ch.Version = c.Version
		}
	}
	ch.Predicates = v.gate(r.DependsOn, r.Predicates)
	v.p.Chained = append(v.p.Chained, ch)
}

// mentionsDependency is the dormancy test of docs/manifests.md §7.
func (p *Plugin) mentionsDependency() bool {
	for _, pr := range p.Predicates {
		if _, ok := pr.(predicate.Custom); ok {
			return true
		}
	}
	gates := []Gate{p.Predicates}
	for _, g := range p.Skills {
		gates = append(gates, g.Predicates)
	}
	for _, h := range p.Hooks {
		gates = append(gates, h.Predicates)
	}
	for _, s := range p.MCPServers {
		gates = append(gates, s.Predicates)
	}
	for _, c := range p.Chained {
		gates = append(gates, c.Predicates)
	}
	for _, g := range gates {
		for _, pr := range g {
			if mentionsDep(pr) {
				return true
			}
		}
	}
	return false
}

func mentionsDep(p predicate.Predicate) bool {
	switch p := p.(type) {
	case predicate.DependsOn:
		return true
	case predicate.Not:
		return mentionsDep(p.P)
	case predicate.Any:
		return slices.ContainsFunc(p.Ps, mentionsDep)
	case predicate.All:
		return slices.ContainsFunc(p.Ps, mentionsDep)
	}
	return false
}

// tomlInline renders a value as TOML inline text for migration hints.
func tomlInline(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = tomlInline(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
