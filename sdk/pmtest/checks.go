package pmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Checks returns the names of the suite's checks, in the order they run and
// appear in a Report.
func Checks() []string { return slices.Clone(checkNames) }

var checkNames = append([]string{
	"handshake",
	"version-negotiation",
	"initialize-twice",
	"before-initialize",
	"method/list_deps",
	"method/active_plugins",
	"method/search",
	"method/refresh",
	"method/workspace",
	"method/load_plugin",
	"own-ids",
	"exact-versions",
	"fetch-idempotent",
	"stderr-volume",
	"bad-params/initialize",
	"bad-params/active_plugins",
	"bad-params/load_plugin",
	"bad-params/search",
	"bad-params/fetch",
	"bad-params/refresh",
	"unknown-method",
	"malformed-line",
	"foreign-id",
	"unknown-package",
	"no-network",
	"eof-drain",
	"concurrency",
}, append(append(append(edgeChecks, mustChecks...), checkWrites), "schema")...)

// checkGroup is checks reported by one run function.
type checkGroup struct {
	names []string
	run   func(context.Context)
}

// suite is one run of the checks.
type suite struct {
	cfg    *config
	report *Report
	info   protocol.InitializeResult
}

func (s *suite) add(name string, st Status, format string, args ...any) {
	s.report.Results = append(s.report.Results, Result{Name: name, Sections: Sections(name), Status: st, Message: fmt.Sprintf(format, args...)})
}

func (s *suite) pass(name, format string, args ...any) { s.add(name, Pass, format, args...) }
func (s *suite) fail(name, format string, args ...any) { s.add(name, Fail, format, args...) }
func (s *suite) skip(name, format string, args ...any) { s.add(name, Skip, format, args...) }

// has reports whether the PM announced capability c.
func (s *suite) has(c string) bool { return slices.Contains(s.info.Capabilities, c) }

// surveyChecks are the checks the survey session reports.
var surveyChecks = []string{"method/list_deps", "method/active_plugins", "method/search", "method/refresh",
	"method/workspace", "method/load_plugin", "own-ids", "exact-versions", "fetch-idempotent", "stderr-volume"}

// badParamsChecks are the checks badParams reports.
var badParamsChecks = []string{"bad-params/initialize", "bad-params/active_plugins", "bad-params/load_plugin",
	"bad-params/search", "bad-params/fetch", "bad-params/refresh"}

func (s *suite) run(ctx context.Context) {
	defer s.order()
	var before *writeSnapshot
	if s.want(checkWrites) {
		before = s.snapshotWrites()
	}
	if !s.handshake(ctx) {
		for _, name := range checkNames[1:] {
			if s.want(name) {
				s.skip(name, "not run: the handshake failed")
			}
		}
		return
	}
	groups := []checkGroup{
		{[]string{"version-negotiation"}, s.versionNegotiation},
		{[]string{"initialize-twice"}, s.initializeTwice},
		{[]string{"before-initialize"}, s.beforeInitialize},
		{surveyChecks, s.survey},
		{badParamsChecks, s.badParams},
		{[]string{"unknown-method"}, s.unknownMethod},
		{[]string{"malformed-line"}, s.malformedLine},
		{[]string{"foreign-id"}, s.foreignID},
		{[]string{"unknown-package"}, s.unknownPackage},
		{[]string{"no-network"}, s.noNetwork},
		{[]string{"eof-drain"}, s.eofDrain},
		{[]string{"concurrency"}, s.concurrency},
	}
	groups = append(groups, s.edgeGroups()...)
	groups = append(groups, s.mustGroups()...)
	for _, g := range groups {
		if !slices.ContainsFunc(g.names, s.want) {
			continue
		}
		if err := ctx.Err(); err != nil {
			for _, name := range g.names {
				if s.want(name) {
					s.skip(name, "not run: %v", err)
				}
			}
			continue
		}
		g.run(ctx)
	}
	if s.want(checkWrites) {
		s.writesConfined(before)
	}
	if s.want("schema") {
		s.schemaCheck()
	}
}

// want reports whether the check called name was selected.
func (s *suite) want(name string) bool {
	return name == "handshake" || s.cfg.run == nil || s.cfg.run.MatchString(name)
}

// order keeps the selected results, in the order of Checks.
func (s *suite) order() {
	res := slices.DeleteFunc(s.report.Results, func(r Result) bool { return !s.want(r.Name) })
	slices.SortStableFunc(res, func(a, b Result) int {
		return slices.Index(checkNames, a.Name) - slices.Index(checkNames, b.Name)
	})
	s.report.Results = res
}

// session starts the PM and initializes it with protocol version 1.
func (s *suite) session(ctx context.Context, extraProcEnv []string, extraEnv map[string]string) (*proc, error) {
	p, err := start(s.cfg, extraProcEnv)
	if err != nil {
		return nil, err
	}
	_, perr, err := p.initialize(ctx, protocol.Version, extraEnv)
	if err == nil && perr != nil {
		err = fmt.Errorf("initialize failed: %s", describe(perr))
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("could not start a session: %w", err)
	}
	return p, nil
}

// describe renders a PM's error answer.
func describe(e *protocol.Error) string {
	return fmt.Sprintf("error %d (%s): %s", e.Code, e.Code, e.Message)
}

// answer renders a reply for a message.
func answer(r reply) string {
	if r.Err != nil {
		return describe(r.Err)
	}
	return "result " + quote(r.Result)
}

func (s *suite) handshake(ctx context.Context) bool {
	const name = "handshake"
	p, err := start(s.cfg, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return false
	}
	defer p.kill()
	res, perr, err := p.initialize(ctx, protocol.Version, nil)
	switch {
	case err != nil:
		s.fail(name, "initialize with protocol version %d: %v", protocol.Version, err)
		return false
	case perr != nil:
		s.fail(name, "initialize with protocol version %d answered %s", protocol.Version, describe(perr))
		return false
	}
	s.info = res
	s.report.PM, s.report.Capabilities = res.Name, res.Capabilities
	var problems []string
	if res.ProtocolVersion != protocol.Version {
		problems = append(problems, fmt.Sprintf("answered protocol_version %d to a host asking for version %d, which it must speak", res.ProtocolVersion, protocol.Version))
	}
	if res.Name == "" {
		problems = append(problems, "announced no name")
	} else if strings.ContainsAny(res.Name, ":@") || strings.ContainsFunc(res.Name, unicode.IsSpace) {
		problems = append(problems, fmt.Sprintf("announced the name %q, whose ':', '@' or whitespace make ids written pm:name@version ambiguous; protocol §6.1 forbids them in a name", res.Name))
	}
	if res.Capabilities == nil {
		problems = append(problems, `announced no "capabilities" array (send [] for none)`)
	}
	seen := map[string]bool{}
	var unknown []string
	for _, c := range res.Capabilities {
		if seen[c] {
			problems = append(problems, fmt.Sprintf("announced capability %q twice", c))
		}
		seen[c] = true
		if !slices.Contains(protocol.Capabilities, c) {
			unknown = append(unknown, c)
		}
	}
	if len(problems) > 0 {
		s.fail(name, "%s", strings.Join(problems, "; "))
		return false
	}
	msg := fmt.Sprintf("pm %q, protocol version %d, capabilities [%s]", res.Name, res.ProtocolVersion, strings.Join(res.Capabilities, " "))
	if res.Version != "" {
		msg += ", software version " + res.Version
	}
	if len(unknown) > 0 {
		msg += fmt.Sprintf("; capabilities outside protocol v1 (extensions, not checked): %s", strings.Join(unknown, " "))
	}
	s.pass(name, "%s", msg)
	return true
}

func (s *suite) versionNegotiation(ctx context.Context) {
	const name = "version-negotiation"
	const asked = 1000
	p, err := start(s.cfg, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	res, perr, err := p.initialize(ctx, asked, nil)
	switch {
	case err != nil:
		s.fail(name, "initialize with protocol version %d: %v", asked, err)
	case perr != nil:
		s.fail(name, "initialize with the unknown protocol version %d answered %s; a PM answers with its own version so the host can decide", asked, describe(perr))
	case res.ProtocolVersion != s.info.ProtocolVersion:
		s.fail(name, "asked for the unknown protocol version %d, the PM answered version %d; it must answer with its own version (%d)", asked, res.ProtocolVersion, s.info.ProtocolVersion)
	default:
		s.pass(name, "asked for protocol version %d, got the PM's own version %d back", asked, res.ProtocolVersion)
	}
}

func (s *suite) initializeTwice(ctx context.Context) {
	const name = "initialize-twice"
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	_, perr, err := p.initialize(ctx, protocol.Version, nil)
	switch {
	case err != nil:
		s.fail(name, "a second initialize: %v", err)
		return
	case perr == nil:
		s.fail(name, "a second initialize succeeded; it must be refused with error %d (%s)", protocol.CodeInvalidRequest, protocol.CodeInvalidRequest)
		return
	case perr.Code != protocol.CodeInvalidRequest:
		s.fail(name, "a second initialize answered %s; want error %d (%s)", describe(perr), protocol.CodeInvalidRequest, protocol.CodeInvalidRequest)
		return
	}
	if r, err := p.call(ctx, protocol.MethodListDeps, struct{}{}); err != nil {
		s.fail(name, "after refusing a second initialize, list_deps: %v", err)
		return
	} else if r.Err != nil && r.Err.Code == protocol.CodeNotInitialized {
		s.fail(name, "after refusing a second initialize the PM answered list_deps with %s; the first initialize still holds", describe(r.Err))
		return
	}
	s.pass(name, "a second initialize got %d and the PM kept serving", perr.Code)
}

// probeID is an id of the PM's own that it is unlikely to have.
func (s *suite) probeID() protocol.PackageID {
	return protocol.PackageID{PM: s.info.Name, Name: "pmtest-no-such-package", Version: protocol.AnyVersion}
}

func (s *suite) beforeInitialize(ctx context.Context) {
	const name = "before-initialize"
	p, err := start(s.cfg, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	id := s.probeID()
	calls := []struct {
		method string
		params any
	}{
		{protocol.MethodListDeps, struct{}{}},
		{protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{}}},
		{protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id}},
		{protocol.MethodSearch, protocol.SearchParams{Query: "pmtest"}},
		{protocol.MethodFetch, protocol.FetchParams{ID: id, Update: protocol.UpdateNone}},
		{protocol.MethodRefresh, protocol.RefreshParams{Update: protocol.UpdateNone}},
		{protocol.MethodWorkspace, struct{}{}},
	}
	var problems []string
	for _, c := range calls {
		r, err := p.call(ctx, c.method, c.params)
		if err != nil {
			s.fail(name, "%s before initialize: %v", c.method, err)
			return
		}
		if r.Err == nil || r.Err.Code != protocol.CodeNotInitialized {
			problems = append(problems, fmt.Sprintf("%s answered %s", c.method, answer(r)))
		}
	}
	if len(problems) > 0 {
		s.fail(name, "before initialize, every method must be refused with error %d (%s): %s", protocol.CodeNotInitialized, protocol.CodeNotInitialized, strings.Join(problems, "; "))
		return
	}
	if _, perr, err := p.initialize(ctx, protocol.Version, nil); err != nil || perr != nil {
		s.fail(name, "initialize after refused early requests: %v", cmpErr(err, perr))
		return
	}
	s.pass(name, "all %d methods got %d before initialize, and initialize then succeeded", len(calls), protocol.CodeNotInitialized)
}

func cmpErr(err error, perr *protocol.Error) string {
	if err != nil {
		return err.Error()
	}
	if perr != nil {
		return describe(perr)
	}
	return "no error"
}

// sourced is an id seen in a response, and where.
type sourced struct {
	id   protocol.PackageID
	from string
}

// surveyData is what one ordinary session learned.
type surveyData struct {
	broken error // the connection broke: later steps did not run
	deps   []protocol.PackageID
	offers []protocol.Offer
	hits   []protocol.SearchHit
	ids    []sourced
	loaded int // load_plugin probes answered with well-formed offers
}

// survey runs an ordinary session — the methods a host calls, in its order —
// and checks each answer, then the ids in all of them, then fetch.
func (s *suite) survey(ctx context.Context) {
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		for _, n := range surveyChecks {
			s.fail(n, "%v", err)
		}
		return
	}
	defer p.kill()
	var d surveyData
	s.surveyListDeps(ctx, p, &d)
	s.surveyActivePlugins(ctx, p, &d)
	s.surveySearch(ctx, p, &d)
	s.surveyRefresh(ctx, p, &d)
	s.surveyWorkspace(ctx, p, &d)
	s.surveyLoadPlugin(ctx, p, &d)
	fetched := s.fetchIdempotent(ctx, p, &d)
	s.ownIDs(&d, fetched)
	s.exactVersions(&d)
	s.addFetch(fetched)
	s.stderrVolume(p)
}

// callStep calls one method in the survey; a transport failure breaks the
// survey.
func (d *surveyData) callStep(ctx context.Context, p *proc, method string, params any) (reply, error) {
	if d.broken != nil {
		return reply{}, fmt.Errorf("not called: an earlier request broke the connection: %w", d.broken)
	}
	r, err := p.call(ctx, method, params)
	if err != nil {
		d.broken = err
	}
	return r, err
}

// accepted reports whether e is an application error that an environment
// without a reachable registry or cache may legitimately cause.
func accepted(e *protocol.Error) bool {
	switch e.Code {
	case protocol.CodeNotFound, protocol.CodeOffline, protocol.CodeRegistry, protocol.CodeIntegrity, protocol.CodeInvalidContent:
		return true
	}
	return false
}

// checkID returns what is wrong with the shape of a response id, or "".
func checkID(id protocol.PackageID) string {
	var missing []string
	if id.PM == "" {
		missing = append(missing, "pm")
	}
	if id.Name == "" {
		missing = append(missing, "name")
	}
	if id.Version == "" {
		missing = append(missing, "version")
	}
	if len(missing) > 0 {
		return fmt.Sprintf("id %s has no %s", id, strings.Join(missing, ", "))
	}
	return ""
}

func (s *suite) surveyListDeps(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/list_deps"
	r, err := d.callStep(ctx, p, protocol.MethodListDeps, struct{}{})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	if !s.has(protocol.CapListDeps) {
		s.emptyResult(name, r, "[]")
		return
	}
	if r.Err != nil {
		s.fail(name, "list_deps is announced but answered %s", describe(r.Err))
		return
	}
	if err := strictDecode(r.Result, &d.deps); err != nil {
		s.fail(name, "list_deps answered a result that is not an array of ids: %v: %s", err, quote(r.Result))
		d.deps = nil
		return
	}
	for _, id := range d.deps {
		if m := checkID(id); m != "" {
			s.fail(name, "list_deps answered an incomplete id: %s", m)
			return
		}
		d.ids = append(d.ids, sourced{id, "list_deps"})
	}
	s.pass(name, "announced; %s", plural(len(d.deps), "dependency", "dependencies"))
}

// emptyResult checks the answer of an optional method the PM did not
// announce: exactly want.
func (s *suite) emptyResult(name string, r reply, want string) {
	method := strings.TrimPrefix(name, "method/")
	if r.Err != nil {
		s.fail(name, "%s is not announced, so it must answer the empty result %s; it answered %s", method, want, describe(r.Err))
		return
	}
	if !jsonEqual(r.Result, json.RawMessage(want)) {
		s.fail(name, "%s is not announced, so it must answer the empty result %s; it answered %s", method, want, quote(r.Result))
		return
	}
	s.pass(name, "not announced; answered the empty result %s", want)
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// strictDecode decodes a result that must not be null.
func strictDecode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return errors.New("the result is null")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonfile.ExplainValue(raw, err)
	}
	return nil
}

// checkOffers returns what is wrong with offers answered by method.
func checkOffers(method string, raw json.RawMessage, offers *[]protocol.Offer) string {
	if err := strictDecode(raw, offers); err != nil {
		return fmt.Sprintf("%s answered a result that is not an array of offers: %v: %s", method, err, quote(raw))
	}
	for _, o := range *offers {
		if m := checkID(o.ID); m != "" {
			return fmt.Sprintf("%s offered an incomplete id: %s", method, m)
		}
		if !filepath.IsAbs(o.Root) {
			return fmt.Sprintf("%s offered %s with root %q, which is not an absolute path", method, o.ID, o.Root)
		}
		if fi, err := os.Stat(o.Root); err != nil || !fi.IsDir() {
			return fmt.Sprintf("%s offered %s with root %s, which is not an existing directory", method, o.ID, o.Root)
		}
		var m map[string]any
		if len(o.Manifest) == 0 || json.Unmarshal(o.Manifest, &m) != nil || m == nil {
			return fmt.Sprintf("%s offered %s with a manifest that is not a JSON object: %s", method, o.ID, quote(o.Manifest))
		}
	}
	return ""
}

func (s *suite) surveyActivePlugins(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/active_plugins"
	deps := d.deps
	if deps == nil {
		deps = []protocol.PackageID{}
	}
	r, err := d.callStep(ctx, p, protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	if r.Err != nil {
		s.fail(name, "active_plugins with the %d dependencies list_deps gave answered %s", len(deps), describe(r.Err))
		return
	}
	if m := checkOffers("active_plugins", r.Result, &d.offers); m != "" {
		d.offers = nil
		s.fail(name, "%s", m)
		return
	}
	for _, o := range d.offers {
		d.ids = append(d.ids, sourced{o.ID, "active_plugins"})
	}
	s.pass(name, "%s for %s, each with an existing absolute root and a manifest object", plural(len(d.offers), "offer", "offers"), plural(len(deps), "dependency", "dependencies"))
}

// searchQuery is a fragment of a name the PM showed, or a generic word.
func (d *surveyData) searchQuery() string {
	var n string
	switch {
	case len(d.offers) > 0:
		n = d.offers[0].ID.Name
	case len(d.deps) > 0:
		n = d.deps[0].Name
	default:
		return "skill"
	}
	n = n[strings.LastIndex(n, "/")+1:]
	if len(n) > 12 {
		n = n[:12]
	}
	return n
}

func (s *suite) surveySearch(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/search"
	q := d.searchQuery()
	r, err := d.callStep(ctx, p, protocol.MethodSearch, protocol.SearchParams{Query: q})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	if !s.has(protocol.CapSearch) {
		s.emptyResult(name, r, "[]")
		return
	}
	if r.Err != nil {
		if accepted(r.Err) {
			s.pass(name, "announced; search %q answered %s (accepted: the registry may be unreachable from here)", q, describe(r.Err))
		} else {
			s.fail(name, "search is announced but search %q answered %s", q, describe(r.Err))
		}
		return
	}
	if err := strictDecode(r.Result, &d.hits); err != nil {
		d.hits = nil
		s.fail(name, "search answered a result that is not an array of hits: %v: %s", err, quote(r.Result))
		return
	}
	for _, h := range d.hits {
		if m := checkID(h.ID); m != "" {
			s.fail(name, "search answered an incomplete id: %s", m)
			return
		}
		d.ids = append(d.ids, sourced{h.ID, "search"})
	}
	s.pass(name, "announced; search %q found %s", q, plural(len(d.hits), "hit", "hits"))
}

func (s *suite) surveyRefresh(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/refresh"
	r, err := d.callStep(ctx, p, protocol.MethodRefresh, protocol.RefreshParams{Update: protocol.UpdateNone})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	if !s.has(protocol.CapRefresh) {
		s.emptyResult(name, r, `{"refreshed":false}`)
		return
	}
	if r.Err != nil {
		if accepted(r.Err) {
			s.pass(name, `announced; refresh with update "none" answered %s (accepted)`, describe(r.Err))
		} else {
			s.fail(name, `refresh is announced but refresh with update "none" answered %s`, describe(r.Err))
		}
		return
	}
	var res struct {
		Refreshed *bool `json:"refreshed"`
	}
	if err := strictDecode(r.Result, &res); err != nil || res.Refreshed == nil {
		s.fail(name, `refresh answered %s; want {"refreshed":BOOL}`, quote(r.Result))
		return
	}
	s.pass(name, `announced; refresh with update "none" answered refreshed=%v`, *res.Refreshed)
}

func (s *suite) surveyWorkspace(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/workspace"
	r, err := d.callStep(ctx, p, protocol.MethodWorkspace, struct{}{})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	var res protocol.WorkspaceResult
	if r.Err == nil {
		if err := strictDecode(r.Result, &res); err != nil {
			s.fail(name, "workspace answered a result of the wrong shape: %v: %s", err, quote(r.Result))
			return
		}
	}
	if !s.has(protocol.CapWorkspace) {
		if r.Err != nil || res.Root != "" || len(res.Members) > 0 {
			s.fail(name, `workspace is not announced, so it must answer the empty result {"root":"","members":[]}; it answered %s`, answer(r))
			return
		}
		s.pass(name, "not announced; answered an empty workspace")
		return
	}
	if r.Err != nil {
		s.fail(name, "workspace is announced but answered %s", describe(r.Err))
		return
	}
	if !filepath.IsAbs(res.Root) {
		s.fail(name, "workspace answered root %q, which is not an absolute path", res.Root)
		return
	}
	if fi, err := os.Stat(res.Root); err != nil || !fi.IsDir() {
		s.fail(name, "workspace answered root %s, which is not an existing directory", res.Root)
		return
	}
	for _, m := range res.Members {
		if m.Name == "" || !filepath.IsAbs(m.Dir) {
			s.fail(name, "workspace answered member %+v: each member needs a name and an absolute dir", m)
			return
		}
	}
	s.pass(name, "announced; root %s with %s", res.Root, plural(len(res.Members), "member", "members"))
}

// candidates are the ids probed with fetch: those given in the options, then
// the PM's own offers, search hits and dependencies, at most limit of the
// latter.
func (s *suite) candidates(d *surveyData, limit int) []protocol.PackageID {
	var out []protocol.PackageID
	seen := map[protocol.PackageID]bool{}
	add := func(id protocol.PackageID, force bool) {
		if seen[id] || id.PM != s.info.Name || id.Name == "" || (!force && len(out) >= len(s.cfg.fetchIDs)+limit) {
			return
		}
		seen[id] = true
		out = append(out, id)
	}
	for _, id := range s.cfg.fetchIDs {
		add(id, true)
	}
	for _, o := range d.offers {
		add(o.ID, false)
	}
	for _, h := range d.hits {
		add(h.ID, false)
	}
	for _, dep := range d.deps {
		add(dep, false)
	}
	return out
}

func (s *suite) surveyLoadPlugin(ctx context.Context, p *proc, d *surveyData) {
	const name = "method/load_plugin"
	// load_plugin may go to the registry: probe only ids whose content the
	// PM just offered, and those given in the options.
	ids := slices.Clone(s.cfg.fetchIDs)
	for _, o := range d.offers {
		if len(ids) >= len(s.cfg.fetchIDs)+3 {
			break
		}
		if o.ID.PM == s.info.Name && !slices.Contains(ids, o.ID) {
			ids = append(ids, o.ID)
		}
	}
	if len(ids) == 0 {
		s.skip(name, "no id to load: the PM offered no plugin in this workspace and no ids were given (--fetch-id)")
		return
	}
	var notes []string
	for _, id := range ids {
		r, err := d.callStep(ctx, p, protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id})
		if err != nil {
			s.fail(name, "load_plugin %s: %v", id, err)
			return
		}
		if r.Err != nil {
			if accepted(r.Err) {
				notes = append(notes, fmt.Sprintf("%s: %s", id, describe(r.Err)))
				continue
			}
			s.fail(name, "load_plugin %s answered %s", id, describe(r.Err))
			return
		}
		var offers []protocol.Offer
		if m := checkOffers("load_plugin "+id.String(), r.Result, &offers); m != "" {
			s.fail(name, "%s", m)
			return
		}
		for _, o := range offers {
			d.ids = append(d.ids, sourced{o.ID, "load_plugin " + id.String()})
		}
		d.loaded++
	}
	if d.loaded == 0 {
		s.skip(name, "no probe could be loaded here (errors accepted: %s)", strings.Join(notes, "; "))
		return
	}
	msg := fmt.Sprintf("%d of %s loaded with well-formed offers", d.loaded, plural(len(ids), "id", "ids"))
	if len(notes) > 0 {
		msg += "; accepted errors: " + strings.Join(notes, "; ")
	}
	s.pass(name, "%s", msg)
}

// fetchOutcome is the fetch-idempotent verdict, reported after the id checks.
type fetchOutcome struct {
	status Status
	msg    string
}

func (s *suite) fetchIdempotent(ctx context.Context, p *proc, d *surveyData) fetchOutcome {
	if d.broken != nil {
		return fetchOutcome{Fail, fmt.Sprintf("not run: an earlier request broke the connection: %v", d.broken)}
	}
	ids := s.candidates(d, 3)
	if len(ids) == 0 {
		return fetchOutcome{Skip, fmt.Sprintf("no id of pm %q to fetch: the PM offered, found and listed none in this workspace, and no ids were given", s.info.Name)}
	}
	u := s.cfg.fetchUpdate
	var ok []string
	var errs []string
	for _, id := range ids {
		var got [2]protocol.FetchResult
		var fail string
		for i := range got {
			r, err := d.callStep(ctx, p, protocol.MethodFetch, protocol.FetchParams{ID: id, Update: u})
			if err != nil {
				return fetchOutcome{Fail, fmt.Sprintf("fetch %s: %v", id, err)}
			}
			if r.Err != nil {
				if i == 1 {
					return fetchOutcome{Fail, fmt.Sprintf("fetch %s succeeded, then the same fetch answered %s", id, describe(r.Err))}
				}
				if !accepted(r.Err) {
					return fetchOutcome{Fail, fmt.Sprintf("fetch %s (update %q) answered %s", id, u, describe(r.Err))}
				}
				fail = describe(r.Err)
				break
			}
			if err := strictDecode(r.Result, &got[i]); err != nil {
				return fetchOutcome{Fail, fmt.Sprintf("fetch %s answered a result of the wrong shape: %v: %s", id, err, quote(r.Result))}
			}
			if m := checkID(got[i].ID); m != "" {
				return fetchOutcome{Fail, fmt.Sprintf("fetch %s answered an incomplete id: %s", id, m)}
			}
			d.ids = append(d.ids, sourced{got[i].ID, "fetch " + id.String()})
		}
		if fail != "" {
			errs = append(errs, fmt.Sprintf("%s: %s", id, fail))
			continue
		}
		a, b := got[0], got[1]
		switch {
		case a.ID != b.ID:
			return fetchOutcome{Fail, fmt.Sprintf("fetching %s twice gave two ids, %s then %s; fetch must be idempotent", id, a.ID, b.ID)}
		case a.Root != b.Root:
			return fetchOutcome{Fail, fmt.Sprintf("fetching %s twice gave two roots, %s then %s; a root stays valid and unchanged for the connection", id, a.Root, b.Root)}
		case !filepath.IsAbs(a.Root):
			return fetchOutcome{Fail, fmt.Sprintf("fetch %s answered root %q, which is not an absolute path", id, a.Root)}
		}
		if fi, err := os.Stat(a.Root); err != nil || !fi.IsDir() {
			return fetchOutcome{Fail, fmt.Sprintf("fetch %s answered root %s, which is not an existing directory", id, a.Root)}
		}
		ok = append(ok, fmt.Sprintf("%s → %s", id, a.ID))
	}
	if len(ok) == 0 {
		return fetchOutcome{Skip, fmt.Sprintf("no probe could be fetched with update %q (errors accepted: %s)", u, strings.Join(errs, "; "))}
	}
	msg := fmt.Sprintf("fetched twice with update %q, same id and existing absolute root: %s", u, strings.Join(ok, ", "))
	if len(errs) > 0 {
		msg += "; not fetchable here: " + strings.Join(errs, "; ")
	}
	return fetchOutcome{Pass, msg}
}

func (s *suite) addFetch(o fetchOutcome) { s.add("fetch-idempotent", o.status, "%s", o.msg) }

func (s *suite) ownIDs(d *surveyData, fetched fetchOutcome) {
	const name = "own-ids"
	var bad []string
	for _, x := range d.ids {
		if x.id.PM != s.info.Name {
			bad = append(bad, fmt.Sprintf("%s answered %s", x.from, x.id))
		}
	}
	if len(bad) > 0 {
		s.fail(name, "ids minted under another pm than %q, the name the PM announced: %s", s.info.Name, firstFew(bad))
		return
	}
	if d.broken != nil && len(d.ids) == 0 {
		s.fail(name, "no ids collected: the connection broke: %v", d.broken)
		return
	}
	s.pass(name, "all %s in responses are under pm %q", plural(len(d.ids), "id", "ids"), s.info.Name)
}

func firstFew(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:3], "; "), len(items)-3)
}

// inexact returns why v is not an exact version, or "".
func inexact(v string) string {
	switch {
	case v == "":
		return "is empty"
	case v == protocol.AnyVersion:
		return "is *, no version at all"
	case strings.ContainsAny(v, "^~<>=|,"):
		return "is a requirement, not a version"
	case strings.ContainsAny(v, " \t"):
		return "has blanks"
	case strings.Contains(v, "*"):
		return "has a wildcard"
	}
	release := v
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		release = v[:i] // a pre-release or build label may be "x"
	}
	for _, seg := range strings.Split(release, ".") {
		if seg == "x" || seg == "X" {
			return "has a wildcard segment"
		}
	}
	return ""
}

func (s *suite) exactVersions(d *surveyData) {
	const name = "exact-versions"
	var bad []string
	for _, x := range d.ids {
		if x.from == "list_deps" && x.id.Version == protocol.AnyVersion {
			continue // declared but not resolvable offline
		}
		if why := inexact(x.id.Version); why != "" {
			bad = append(bad, fmt.Sprintf("%s answered %s, whose version %q %s", x.from, x.id, x.id.Version, why))
		}
	}
	if len(bad) > 0 {
		s.fail(name, "every id in a response needs an exact version (list_deps may say * for a dependency it cannot resolve offline): %s", firstFew(bad))
		return
	}
	if d.broken != nil && len(d.ids) == 0 {
		s.fail(name, "no ids collected: the connection broke: %v", d.broken)
		return
	}
	s.pass(name, "all %s in responses have exact versions", plural(len(d.ids), "id", "ids"))
}

func (s *suite) stderrVolume(p *proc) {
	const name = "stderr-volume"
	n := p.stderr.size()
	if n > s.cfg.maxStderr {
		s.fail(name, "the PM wrote %s to stderr during an ordinary session; at the default log level a PM should write at most %s (stderr is for diagnostics, and the host must read all of it)",
			bytesize(n), bytesize(s.cfg.maxStderr))
		return
	}
	s.pass(name, "%s on stderr during an ordinary session", bytesize(n))
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// plural renders a count with the right form of its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
