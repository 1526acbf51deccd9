package pmserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/creachadair/jrpc2"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// rawPM keeps its active_plugins and list_deps answers encoded, keyed on
// the params, the way a PM with a persisted cache does across hooks (one
// Serve per hook, the same rawPM).
type rawPM struct {
	testPM

	mu        sync.Mutex
	answers   map[string]json.RawMessage // active_plugins params → result
	deps      json.RawMessage            // list_deps result
	computed  int                        // calls of ActivePlugins
	listed    int                        // calls of ListDeps
	warn      bool                       // ActivePluginsRaw sends a diagnostic
	decline   bool                       // ActivePluginsRaw always declines
	bad       json.RawMessage            // ActivePluginsRaw answers this
	rawErr    error                      // ActivePluginsRaw fails with this
	foreign   bool                       // ActivePlugins offers a foreign id
	encodeErr error                      // EncodeOffers' error in ActivePlugins
}

func (p *rawPM) ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error) {
	if p.warn {
		pmserver.Warn(ctx, pmserver.Diagnostic{Message: "served from the raw path"})
	}
	if p.rawErr != nil {
		return nil, false, p.rawErr
	}
	if p.bad != nil {
		return p.bad, true, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	res, ok := p.answers[string(params)]
	return res, ok && !p.decline, nil
}

func (p *rawPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	offers, _ := p.testPM.ActivePlugins(ctx, deps)
	if p.foreign {
		offers = append(offers, protocol.Offer{ID: protocol.PackageID{PM: "other", Name: "x", Version: "1"}, Root: "/x"})
	}
	enc, err := pmserver.EncodeOffers(ctx, offers)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.computed++
	p.encodeErr = err
	if err == nil {
		p.answers[string(pmserver.Params(ctx))] = enc
	}
	return offers, nil
}

func (p *rawPM) ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deps, p.deps != nil, nil
}

func (p *rawPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	deps, err := p.testPM.ListDeps(ctx)
	enc, eerr := pmserver.EncodeDeps(ctx, deps)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listed++
	if eerr == nil {
		p.deps = enc
	}
	return deps, err
}

func newRawPM() *rawPM { return &rawPM{answers: map[string]json.RawMessage{}} }

const rawParams = `{"deps":[{"pm":"test","name":"a","version":"1"},{"pm":"other","name":"b","version":"2"},{"pm":"test","name":"c","version":"3"}]}`

// hook runs one hook (initialize, list_deps, active_plugins) against pm and
// returns its output lines.
func hook(t *testing.T, pm pmserver.PM) []string {
	t.Helper()
	return rawServe(t, pm, initReq+"\n"+req(1, protocol.MethodListDeps, "")+"\n"+req(2, protocol.MethodActivePlugins, rawParams)+"\n")
}

// answers returns the results (or error codes) of a hook's responses by id.
func answers(t *testing.T, lines []string) (results map[string]string, codes map[string]int) {
	t.Helper()
	results, codes = map[string]string{}, map[string]int{}
	for _, l := range lines {
		if strings.Contains(l, `"method":"`+protocol.MethodDiagnostic+`"`) {
			continue
		}
		r := decodeRsp(t, l)
		results[string(r.ID)] = string(r.Result)
		codes[string(r.ID)] = r.code()
	}
	return results, codes
}

// TestRawAnswersServedAsEncoded: the second hook is answered from the
// encoded answers the first one kept, byte for byte the same, without
// calling ActivePlugins or ListDeps again; the params reach the raw path
// exactly as sent.
func TestRawAnswersServedAsEncoded(t *testing.T) {
	pm := newRawPM()
	first, _ := answers(t, hook(t, pm))
	if pm.computed != 1 || pm.listed != 1 {
		t.Fatalf("first hook: ActivePlugins ran %d times and ListDeps %d, want 1 and 1", pm.computed, pm.listed)
	}
	if _, ok := pm.answers[rawParams]; !ok {
		t.Fatalf("Params did not return the request's params as sent; kept %v", pm.answers)
	}
	second, codes := answers(t, hook(t, pm))
	if pm.computed != 1 || pm.listed != 1 {
		t.Errorf("second hook: ActivePlugins ran %d times and ListDeps %d in all, want the raw path to answer", pm.computed, pm.listed)
	}
	for _, id := range []string{"1", "2"} {
		if codes[id] != 0 || second[id] != first[id] {
			t.Errorf("request %s: raw answer %s (code %d), usual answer %s", id, second[id], codes[id], first[id])
		}
	}
	want := `[{"id":{"pm":"test","name":"a","version":"1"},"root":"/plugins/a","manifest":{}},{"id":{"pm":"test","name":"c","version":"3"},"root":"/plugins/c","manifest":{}}]`
	if first["2"] != want {
		t.Errorf("active_plugins answered %s, want %s", first["2"], want)
	}
}

// TestRawDeclineFallsBack: a raw path that declines leaves the usual path
// to answer, every time.
func TestRawDeclineFallsBack(t *testing.T) {
	pm := newRawPM()
	pm.decline = true
	first, _ := answers(t, hook(t, pm))
	second, _ := answers(t, hook(t, pm))
	if pm.computed != 2 {
		t.Errorf("ActivePlugins ran %d times over two declined hooks, want 2", pm.computed)
	}
	if first["2"] != second["2"] || !strings.Contains(first["2"], `"/plugins/c"`) {
		t.Errorf("declined hooks answered %s then %s", first["2"], second["2"])
	}
}

// TestRawPathDiagnostics: diagnostics sent from the raw path reach the
// host, labelled with the request, before its answer.
func TestRawPathDiagnostics(t *testing.T) {
	pm := newRawPM()
	hook(t, pm)
	pm.warn = true
	lines := hook(t, pm)
	diag, answered := -1, -1
	for i, l := range lines {
		if strings.Contains(l, "served from the raw path") && strings.Contains(l, `"request":2`) {
			diag = i
		}
		if strings.Contains(l, `"id":2,"result"`) {
			answered = i
		}
	}
	if diag < 0 || answered < 0 || diag > answered {
		t.Fatalf("want the raw path's diagnostic (line %d) before its answer (line %d):\n%s", diag, answered, strings.Join(lines, "\n"))
	}
	if pm.computed != 1 {
		t.Errorf("ActivePlugins ran %d times, want the second hook answered by the raw path", pm.computed)
	}
}

// TestRawResultVetted: a raw result that is not a JSON array, or not JSON
// at all, is an internal error, not a line that breaks the stream; a raw
// path's error reaches the host with its code.
func TestRawResultVetted(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  string
		err  error
		code int
	}{
		{"object", `{"a":1}`, nil, int(protocol.CodeInternalError)},
		{"empty", ` `, nil, int(protocol.CodeInternalError)},
		{"truncated", `[{"id":`, nil, int(protocol.CodeInternalError)},
		{"unclosed", `[{"id":1}`, nil, int(protocol.CodeInternalError)},
		{"two lines", "[1,\n2]", nil, int(protocol.CodeInternalError)},
		{"not UTF-8", "[\"\xff\"]", nil, int(protocol.CodeInternalError)},
		{"error", "", protocol.NewError(protocol.CodeInvalidParams, nil, "no"), int(protocol.CodeInvalidParams)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pm := newRawPM()
			pm.bad, pm.rawErr = json.RawMessage(tc.bad), tc.err
			if tc.bad == "" {
				pm.bad = nil
			}
			lines := hook(t, pm)
			if len(lines) != 3 {
				t.Fatalf("want 3 response lines, got %d:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			_, codes := answers(t, lines)
			if codes["2"] != tc.code {
				t.Errorf("code %d, want %d", codes["2"], tc.code)
			}
		})
	}
}

// TestEncodeChecks: EncodeOffers refuses what the usual path refuses (a
// foreign id), and both encoders fail outside a request.
func TestEncodeChecks(t *testing.T) {
	pm := newRawPM()
	pm.foreign = true
	_, codes := answers(t, hook(t, pm))
	if pm.encodeErr == nil || !strings.Contains(pm.encodeErr.Error(), `under pm "other"`) {
		t.Errorf("EncodeOffers of a foreign id: %v, want it refused", pm.encodeErr)
	}
	if codes["2"] != int(protocol.CodeInternalError) {
		t.Errorf("usual path answered a foreign id with code %d", codes["2"])
	}
	if _, err := pmserver.EncodeOffers(context.Background(), nil); err == nil {
		t.Error("EncodeOffers outside a request succeeded")
	}
	if _, err := pmserver.EncodeDeps(context.Background(), nil); err == nil {
		t.Error("EncodeDeps outside a request succeeded")
	}
	if p := pmserver.Params(context.Background()); p != nil {
		t.Errorf("Params outside a request = %s", p)
	}
}

// paramsPM records the params each active_plugins request reaches the PM
// with, by request id, and declines the raw path.
type paramsPM struct {
	testPM
	mu   sync.Mutex
	seen map[string]string // request id → params as received ("<nil>" for none)
}

func (p *paramsPM) ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error) {
	got := "<nil>"
	if params != nil {
		got = string(params)
	}
	if pp := pmserver.Params(ctx); string(pp) != string(params) || (pp == nil) != (params == nil) {
		return nil, false, fmt.Errorf("Params(ctx) = %q, but the raw path got %q", pp, params)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[jrpc2.InboundRequest(ctx).ID()] = got
	return nil, false, nil
}

// TestParamsAsWritten: a handler receives a request's params exactly as the
// line holds them, whatever the spacing, the spelling of the member name,
// its repetition (the last counts) or the strings inside; absent and null
// params reach it as nil. The harness hands jrpc2 only the request's id and
// method and keeps the params for the handler, so this is what checks that
// nothing is lost or changed on the way. Requests jrpc2 answers without a
// handler (an unknown method) are still answered, and params the usual
// path cannot decode are refused as before.
func TestParamsAsWritten(t *testing.T) {
	pm := &paramsPM{seen: map[string]string{}}
	lines := []string{
		initReq,
		`{"jsonrpc":"2.0","id":1,"method":"active_plugins"}`,
		`{"jsonrpc":"2.0","id":2,"method":"active_plugins","params":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"active_plugins","params":{"deps":[]}}`,
		`{ "params" : { "deps" : [ { "pm" : "test" , "name" : "a}\"]" , "version" : "1" } ] } , "id" : 4 , "method" : "active_plugins" , "jsonrpc" : "2.0" }`,
		`{"jsonrpc":"2.0","id":"five","method":"active_plugins","params":{"deps":1},"p\u0061rams":{"deps":[{"pm":"test","name":"b","version":"2"}]}}`,
		`{"jsonrpc":"2.0","id":6,"method":"act\u0069ve_plugins","params":[]}`,
		`{"jsonrpc":"2.0","id":7,"method":"no_such_method","params":{"x":1}}`,
	}
	results, codes := answers(t, rawServe(t, pm, strings.Join(lines, "\n")+"\n"))
	want := map[string]string{
		"1":      "<nil>",
		"2":      "<nil>",
		"3":      `{"deps":[]}`,
		"4":      `{ "deps" : [ { "pm" : "test" , "name" : "a}\"]" , "version" : "1" } ] }`,
		`"five"`: `{"deps":[{"pm":"test","name":"b","version":"2"}]}`,
		"6":      `[]`,
	}
	for id, w := range want {
		if got := pm.seen[id]; got != w {
			t.Errorf("request %s: params %s, want %s", id, got, w)
		}
	}
	if len(pm.seen) != len(want) {
		t.Errorf("the raw path saw %d requests, want %d: %v", len(pm.seen), len(want), pm.seen)
	}
	if r := results["4"]; r != `[{"id":{"pm":"test","name":"a}\"]","version":"1"},"root":"/plugins/a}\"]","manifest":{}}]` {
		t.Errorf("request 4 answered %s", r)
	}
	if codes["6"] != int(protocol.CodeInvalidParams) || codes["7"] != int(protocol.CodeMethodNotFound) {
		t.Errorf("request 6 answered code %d (want %d: params are an array), request 7 code %d (want %d)",
			codes["6"], protocol.CodeInvalidParams, codes["7"], protocol.CodeMethodNotFound)
	}
}
