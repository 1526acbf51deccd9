package pmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// badCase is one request with invalid params.
type badCase struct {
	method string
	params json.RawMessage
}

func (s *suite) badParams(ctx context.Context) {
	// initialize first, on a connection of its own: the PM must refuse the
	// bad params and still accept a good initialize.
	if s.want("bad-params/initialize") {
		s.badInitialize(ctx)
	}

	own, _ := json.Marshal(s.probeID())
	cases := []badCase{
		{protocol.MethodActivePlugins, json.RawMessage(`{"deps":"pmtest"}`)},
		{protocol.MethodActivePlugins, json.RawMessage(`{"deps":[{"pm":7,"name":[],"version":{}}]}`)},
		{protocol.MethodLoadPlugin, json.RawMessage(`{"id":"pmtest"}`)},
		{protocol.MethodLoadPlugin, json.RawMessage(`{"id":{"pm":1,"name":2,"version":3}}`)},
		{protocol.MethodSearch, json.RawMessage(`{"query":42}`)},
		{protocol.MethodFetch, json.RawMessage(`{"id":` + string(own) + `,"update":"sometimes"}`)},
		{protocol.MethodFetch, json.RawMessage(`{"id":"pmtest","update":"none"}`)},
		{protocol.MethodRefresh, json.RawMessage(`{"update":"sometimes","force":false}`)},
		{protocol.MethodRefresh, json.RawMessage(`{"update":"none","force":"yes"}`)},
	}
	methods := []string{protocol.MethodActivePlugins, protocol.MethodLoadPlugin, protocol.MethodSearch,
		protocol.MethodFetch, protocol.MethodRefresh}
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		for _, m := range methods {
			s.fail("bad-params/"+m, "%v", err)
		}
		return
	}
	defer p.kill()
	var broken error
	for _, m := range methods {
		name := "bad-params/" + m
		if !s.want(name) {
			continue
		}
		if broken != nil {
			s.fail(name, "not run: an earlier request broke the connection: %v", broken)
			continue
		}
		optional := (m == protocol.MethodSearch && !s.has(protocol.CapSearch)) ||
			(m == protocol.MethodRefresh && !s.has(protocol.CapRefresh))
		var problems, notes []string
		n := 0
		for _, c := range cases {
			if c.method != m {
				continue
			}
			n++
			r, err := p.call(ctx, c.method, c.params)
			if err != nil {
				broken = err
				problems = append(problems, fmt.Sprintf("params %s: %v", c.params, err))
				break
			}
			switch {
			case r.Err != nil && r.Err.Code == protocol.CodeInvalidParams:
			case optional && r.Err == nil && isEmpty(r.Result):
				notes = append(notes, fmt.Sprintf("params %s answered the empty result", c.params))
			default:
				problems = append(problems, fmt.Sprintf("params %s answered %s", c.params, answer(r)))
			}
		}
		switch {
		case len(problems) > 0:
			s.fail(name, "invalid params must be refused with error %d (%s): %s", protocol.CodeInvalidParams, protocol.CodeInvalidParams, strings.Join(problems, "; "))
		case len(notes) > 0:
			s.pass(name, "not announced; accepted: %s", strings.Join(notes, "; "))
		default:
			s.pass(name, "%s of invalid params got %d", plural(n, "case", "cases"), protocol.CodeInvalidParams)
		}
	}
}

// isEmpty reports whether a result is an optional method's empty result.
func isEmpty(raw json.RawMessage) bool {
	return jsonEqual(raw, json.RawMessage(`[]`)) || jsonEqual(raw, json.RawMessage(`{"refreshed":false}`))
}

func (s *suite) badInitialize(ctx context.Context) {
	const name = "bad-params/initialize"
	p, err := start(s.cfg, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	bad := []json.RawMessage{
		json.RawMessage(`{"protocol_version":"one","workspace":"/","cache_dir":"/tmp","env":{}}`),
		json.RawMessage(`{"protocol_version":1,"workspace":["/"],"cache_dir":"/tmp","env":{}}`),
	}
	for _, params := range bad {
		r, err := p.call(ctx, protocol.MethodInitialize, params)
		if err != nil {
			s.fail(name, "initialize with params %s: %v", params, err)
			return
		}
		if r.Err == nil || r.Err.Code != protocol.CodeInvalidParams {
			s.fail(name, "initialize with params %s answered %s; want error %d (%s)", params, answer(r), protocol.CodeInvalidParams, protocol.CodeInvalidParams)
			return
		}
	}
	if _, perr, err := p.initialize(ctx, protocol.Version, nil); err != nil || perr != nil {
		s.fail(name, "initialize with good params, after refusing bad ones: %s", cmpErr(err, perr))
		return
	}
	s.pass(name, "%s of invalid params got %d, then a good initialize succeeded", plural(len(bad), "case", "cases"), protocol.CodeInvalidParams)
}

func (s *suite) unknownMethod(ctx context.Context) {
	const name = "unknown-method"
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	for _, m := range []string{"pmtest/no_such_method", "list_dependencies"} {
		r, err := p.call(ctx, m, struct{}{})
		if err != nil {
			s.fail(name, "method %q: %v", m, err)
			return
		}
		if r.Err == nil || r.Err.Code != protocol.CodeMethodNotFound {
			s.fail(name, "method %q answered %s; want error %d (%s)", m, answer(r), protocol.CodeMethodNotFound, protocol.CodeMethodNotFound)
			return
		}
	}
	s.pass(name, "unknown methods got %d", protocol.CodeMethodNotFound)
}

func (s *suite) malformedLine(ctx context.Context) {
	const name = "malformed-line"
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	for _, line := range []string{`this line is not JSON`, `{"jsonrpc":"2.0","id":99,"method":"list_deps"`} {
		if err := p.write([]byte(line)); err != nil {
			s.fail(name, "writing a malformed line: %v", err)
			return
		}
		r, err := p.waitNull(ctx, fmt.Sprintf("the malformed line %q", line))
		if err != nil {
			s.fail(name, "%v; a malformed line must get error %d (%s) with a null id", err, protocol.CodeParseError, protocol.CodeParseError)
			return
		}
		if r.Err.Code != protocol.CodeParseError {
			s.fail(name, "the malformed line %q got %s; want error %d (%s)", line, describe(r.Err), protocol.CodeParseError, protocol.CodeParseError)
			return
		}
		r, err = p.call(ctx, protocol.MethodListDeps, struct{}{})
		if err != nil {
			s.fail(name, "after the malformed line %q, list_deps: %v; a malformed line never stops the PM", line, err)
			return
		}
		if r.Err != nil {
			s.fail(name, "after the malformed line %q, list_deps answered %s", line, describe(r.Err))
			return
		}
	}
	s.pass(name, "malformed lines got %d and the PM kept serving", protocol.CodeParseError)
}

func (s *suite) foreignID(ctx context.Context) {
	const name = "foreign-id"
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	other := "not-" + s.info.Name
	foreign := protocol.PackageID{PM: other, Name: "pmtest", Version: protocol.AnyVersion}
	nameless := protocol.PackageID{PM: s.info.Name, Name: "", Version: protocol.AnyVersion}
	calls := []struct {
		what   string
		method string
		params any
	}{
		{"load_plugin of " + foreign.String(), protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: foreign}},
		{"fetch of " + foreign.String(), protocol.MethodFetch, protocol.FetchParams{ID: foreign, Update: protocol.UpdateNone}},
		{"load_plugin of an id without a name", protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: nameless}},
		{"fetch of an id without a name", protocol.MethodFetch, protocol.FetchParams{ID: nameless, Update: protocol.UpdateNone}},
	}
	var problems []string
	for _, c := range calls {
		r, err := p.call(ctx, c.method, c.params)
		if err != nil {
			s.fail(name, "%s: %v", c.what, err)
			return
		}
		if r.Err == nil || r.Err.Code != protocol.CodeForeignID {
			problems = append(problems, fmt.Sprintf("%s answered %s", c.what, answer(r)))
		}
	}
	if len(problems) > 0 {
		s.fail(name, "an id of another pm, or a malformed one, must be refused with error %d (%s): %s", protocol.CodeForeignID, protocol.CodeForeignID, strings.Join(problems, "; "))
		return
	}
	s.pass(name, "ids of pm %q and ids without a name got %d", other, protocol.CodeForeignID)
}

// unknownPackage checks the answers for a package the PM does not have:
// load_plugin finds nothing (zero offers, or not found; a registry failure is
// accepted since load_plugin may ask the registry), and fetch with update
// "none" is not found or offline, never a success or an internal error.
func (s *suite) unknownPackage(ctx context.Context) {
	const name = "unknown-package"
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	id := s.probeID()
	r, err := p.call(ctx, protocol.MethodFetch, protocol.FetchParams{ID: id, Update: protocol.UpdateNone})
	if err != nil {
		s.fail(name, "fetch %s: %v", id, err)
		return
	}
	if r.Err == nil || (r.Err.Code != protocol.CodeNotFound && r.Err.Code != protocol.CodeOffline) {
		s.fail(name, `fetch of %s, a package it does not have, with update "none" answered %s; want error %d (%s) or %d (%s)`,
			id, answer(r), protocol.CodeNotFound, protocol.CodeNotFound, protocol.CodeOffline, protocol.CodeOffline)
		return
	}
	fetchCode := r.Err.Code
	r, err = p.call(ctx, protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id})
	if err != nil {
		s.fail(name, "load_plugin %s: %v", id, err)
		return
	}
	switch {
	case r.Err != nil && (r.Err.Code == protocol.CodeNotFound || r.Err.Code == protocol.CodeOffline || r.Err.Code == protocol.CodeRegistry):
	case r.Err == nil && jsonEqual(r.Result, json.RawMessage(`[]`)):
	default:
		s.fail(name, "load_plugin of %s, a package it does not have, answered %s; want [] or error %d (%s)",
			id, answer(r), protocol.CodeNotFound, protocol.CodeNotFound)
		return
	}
	s.pass(name, "fetch of a package it does not have got %d; load_plugin got %s", fetchCode, answer(r))
}

func (s *suite) noNetwork(ctx context.Context) {
	const name = "no-network"
	w, err := newNetwatch()
	if err != nil {
		s.skip(name, "cannot watch the network: %v", err)
		return
	}
	proxy := w.proxyEnv()
	var procEnv []string
	keys := make([]string, 0, len(proxy))
	for k, v := range proxy {
		procEnv = append(procEnv, k+"="+v)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p, err := s.session(ctx, procEnv, proxy)
	if err != nil {
		w.close()
		s.fail(name, "%v", err)
		return
	}
	var d surveyData
	var calls []string
	step := func(method string, params any) (reply, bool) {
		r, err := d.callStep(ctx, p, method, params)
		if err != nil {
			return r, false
		}
		calls = append(calls, method)
		return r, true
	}
	if r, ok := step(protocol.MethodListDeps, struct{}{}); ok && r.Err == nil {
		json.Unmarshal(r.Result, &d.deps)
	}
	deps := d.deps
	if deps == nil {
		deps = []protocol.PackageID{}
	}
	if r, ok := step(protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}); ok && r.Err == nil {
		json.Unmarshal(r.Result, &d.offers)
	}
	step(protocol.MethodWorkspace, struct{}{})
	if s.has(protocol.CapRefresh) {
		step(protocol.MethodRefresh, protocol.RefreshParams{Update: protocol.UpdateNone})
	}
	for _, id := range s.candidates(&d, 5) {
		step(protocol.MethodFetch, protocol.FetchParams{ID: id, Update: protocol.UpdateNone})
	}
	p.kill()
	seen := w.close()
	switch {
	case len(seen) > 0:
		s.fail(name, `with update "none" the PM connected to the network %d times (through the proxy set in %s): %s`,
			len(seen), strings.Join(keys, ", "), firstFew(seen))
	case d.broken != nil:
		s.fail(name, "with proxy variables set: %v", d.broken)
	default:
		s.pass(name, `no connection during initialize, %s with update "none" and every proxy variable pointing at a recording listener`, summarize(calls))
	}
}

// summarize renders a list of calls as "list_deps, active_plugins, 3×fetch".
func summarize(calls []string) string {
	var order []string
	count := map[string]int{}
	for _, c := range calls {
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		if count[c] > 1 {
			parts[i] = fmt.Sprintf("%d×%s", count[c], c)
		} else {
			parts[i] = c
		}
	}
	return strings.Join(parts, ", ")
}

// quickCall is a request every PM answers at once, offline.
func quickCall(i int) (string, any) {
	switch i % 3 {
	case 0:
		return protocol.MethodListDeps, struct{}{}
	case 1:
		return protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{}}
	}
	return protocol.MethodWorkspace, struct{}{}
}

func (s *suite) eofDrain(ctx context.Context) {
	const name = "eof-drain"
	const n = 16
	p, err := start(s.cfg, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	init := protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: s.cfg.workspace, CacheDir: s.cfg.cacheDir, Env: s.cfg.env}
	lines := [][]byte{request(0, protocol.MethodInitialize, init)}
	type pend struct {
		method string
		ch     chan reply
	}
	pends := []pend{{protocol.MethodInitialize, nil}}
	_, pends[0].ch = p.expect(0)
	for i := 1; i <= n; i++ {
		m, params := quickCall(i)
		_, ch := p.expect(i)
		pends = append(pends, pend{m, ch})
		lines = append(lines, request(i, m, params))
	}
	if err := p.write(lines...); err != nil {
		s.fail(name, "%v", err)
		return
	}
	p.hp.CloseInput()
	for i, pd := range pends {
		r, err := p.wait(ctx, pd.method, pd.ch)
		if err != nil {
			s.fail(name, "piped initialize and %d requests, then closed stdin: request %d (%s): %v; a PM answers every request it has read before exiting", n, i, pd.method, err)
			return
		}
		if r.Err != nil && (i == 0 || r.Err.Code != protocol.CodeNotInitialized) {
			// A request written behind initialize, before its answer came,
			// may be refused with -32002 (docs/protocol.md §3.2): what
			// counts here is that every request read gets its answer.
			s.fail(name, "piped initialize and %d requests, then closed stdin: request %d (%s) answered %s", n, i, pd.method, describe(r.Err))
			return
		}
	}
	if !p.closeInput(s.cfg.grace) {
		s.fail(name, "answered all %d requests but did not exit within %v of its input ending", n+1, s.cfg.grace)
		return
	}
	if p.hp.ExitErr() != nil {
		s.fail(name, "answered all %d requests, then exited with %s after its input ended; want exit status 0", n+1, p.hp.ExitDescription())
		return
	}
	s.pass(name, "all %d piped requests answered after stdin closed, then exit status 0", n+1)
}

func (s *suite) concurrency(ctx context.Context) {
	const name = "concurrency"
	n := s.cfg.concurrency
	p, err := s.session(ctx, nil, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	defer p.kill()
	type pend struct {
		id     any
		method string
		ch     chan reply
	}
	var pends []pend
	var lines [][]byte
	for i := range n {
		// Alternate string and number ids: both must come back as sent.
		var id any = 1000 + i
		if i%2 == 1 {
			id = fmt.Sprintf("pmtest-%d", i)
		}
		m, params := quickCall(i)
		_, ch := p.expect(id)
		pends = append(pends, pend{id, m, ch})
		lines = append(lines, request(id, m, params))
	}
	if err := p.write(lines...); err != nil {
		s.fail(name, "%v", err)
		return
	}
	results := map[string]string{}
	for _, pd := range pends {
		r, err := p.wait(ctx, pd.method, pd.ch)
		if err != nil {
			s.fail(name, "%d requests in flight: %s with id %v: %v", n, pd.method, pd.id, err)
			return
		}
		if r.Err != nil {
			s.fail(name, "%d requests in flight: %s with id %v answered %s", n, pd.method, pd.id, describe(r.Err))
			return
		}
		var v any
		if json.Unmarshal(r.Result, &v) != nil {
			continue
		}
		canon, _ := json.Marshal(v)
		if prev, ok := results[pd.method]; !ok {
			results[pd.method] = string(canon)
		} else if !sameAnswer(prev, string(canon)) {
			s.fail(name, "%d requests in flight: %s answered differently to identical requests: %s and %s", n, pd.method, quote([]byte(prev)), quote(canon))
			return
		}
	}
	s.pass(name, "%d requests in flight (string and number ids) all answered under their own ids", n)
}

// sameAnswer reports whether two canonical JSON answers to identical
// requests agree, up to the order of array elements.
func sameAnswer(a, b string) bool {
	if a == b {
		return true
	}
	var x, y []any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil || len(x) != len(y) {
		return false
	}
	canon := func(v []any) []string {
		out := make([]string, len(v))
		for i, e := range v {
			b, _ := json.Marshal(e)
			out[i] = string(b)
		}
		sort.Strings(out)
		return out
	}
	cx, cy := canon(x), canon(y)
	for i := range cx {
		if cx[i] != cy[i] {
			return false
		}
	}
	return true
}
