package pmserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// testPM is a PM with deps and a panicking method, for exercising the harness.
type testPM struct {
	sess *pmserver.Session
}

func (p *testPM) Name() string { return "test" }

func (p *testPM) Initialize(ctx context.Context, s *pmserver.Session) error {
	p.sess = s
	return nil
}

func (p *testPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	var out []protocol.Offer
	for _, d := range deps {
		out = append(out, protocol.Offer{ID: d, Root: "/plugins/" + d.Name})
	}
	return out, nil
}

func (p *testPM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	switch id.Name {
	case "boom":
		panic("boom")
	case "missing":
		return nil, protocol.ErrNotFound(id, "no package %s", id.Name)
	case "foreign":
		return []protocol.Offer{{ID: protocol.PackageID{PM: "other", Name: "x", Version: "1"}, Root: "/x"}}, nil
	case "plain-error":
		return nil, errors.New("disk on fire")
	}
	return nil, nil
}

func (p *testPM) Fetch(ctx context.Context, id protocol.PackageID, u protocol.UpdateLevel) (protocol.FetchResult, error) {
	if u == protocol.UpdateNone {
		return protocol.FetchResult{}, protocol.ErrOffline(id)
	}
	return protocol.FetchResult{ID: protocol.PackageID{PM: "test", Name: id.Name, Version: "1.0.0"}, Root: "/c/" + id.Name}, nil
}

func (p *testPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	if v := p.sess.Env.Get("TEST_SLOW"); v != "" {
		d, _ := time.ParseDuration(v)
		time.Sleep(d)
	}
	return []protocol.PackageID{{PM: "test", Name: "a", Version: p.sess.Env.Get("TEST_VERSION")}}, nil
}

// serve runs the harness over the given input and returns the responses by id.
func serve(t *testing.T, pm pmserver.PM, input string, opts ...pmserver.Option) map[string]map[string]any {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pmserver.Serve(ctx, pm, strings.NewReader(input), &out, opts...); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	rsps := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("response %q is not JSON: %v", line, err)
		}
		if m["jsonrpc"] != "2.0" {
			t.Errorf("response %q lacks jsonrpc 2.0", line)
		}
		rsps[fmt.Sprint(m["id"])] = m
	}
	return rsps
}

const initReq = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_version":1,"workspace":"/w","cache_dir":"/c","env":{"TEST_VERSION":"9.9.9"}}}`

func req(id int, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func code(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

func TestHarness(t *testing.T) {
	lines := []string{
		initReq,
		req(2, "list_deps", ""),
		req(3, "initialize", `{"protocol_version":1}`),
		req(4, "search", `{"query":"x"}`),
		req(5, "refresh", `{"update":"check","force":false}`),
		req(6, "workspace", ""),
		req(7, "load_plugin", `{"id":{"pm":"test","name":"boom","version":"*"}}`),
		req(8, "load_plugin", `{"id":{"pm":"test","name":"missing","version":"*"}}`),
		req(9, "load_plugin", `{"id":{"pm":"cargo","name":"serde","version":"*"}}`),
		req(10, "load_plugin", `{"id":{"pm":"test","name":"foreign","version":"*"}}`),
		req(11, "load_plugin", `{"id":"nope"}`),
		req(12, "nonesuch", ""),
		`this is not json`,
		req(13, "fetch", `{"id":{"pm":"test","name":"a","version":"^1"},"update":"none"}`),
		req(14, "fetch", `{"id":{"pm":"test","name":"a","version":"^1"},"update":"check"}`),
		req(15, "fetch", `{"id":{"pm":"test","name":"a","version":"^1"},"update":"sometimes"}`),
		req(16, "active_plugins", `{"deps":[{"pm":"test","name":"p","version":"1"},{"pm":"npm","name":"q","version":"2"}]}`),
		req(17, "load_plugin", `{"id":{"pm":"test","name":"plain-error","version":"*"}}`),
		req(18, "load_plugin", `{"id":{"pm":"test","name":"empty","version":"*"}}`),
	}
	rsps := serve(t, &testPM{}, strings.Join(lines, "\n")+"\n")
	want := map[string]int{
		"0": 0, "2": 0, "3": -32600, "4": 0, "5": 0, "6": 0, "7": -32603, "8": -32010,
		"9": -32015, "10": -32603, "11": -32602, "12": -32601, "<nil>": -32700, "13": -32011, "14": 0,
		"15": -32602, "16": 0, "17": -32603, "18": 0,
	}
	for id, c := range want {
		r, ok := rsps[id]
		if !ok {
			t.Errorf("no response for id %s", id)
			continue
		}
		if got := code(r); got != c {
			t.Errorf("id %s: code %d, want %d (%v)", id, got, c, r)
		}
	}
	if len(rsps) != len(want) {
		t.Errorf("got %d responses, want %d", len(rsps), len(want))
	}
	check := func(id, wantJSON string) {
		t.Helper()
		got, _ := json.Marshal(rsps[id]["result"])
		if string(got) != wantJSON {
			t.Errorf("id %s: result %s, want %s", id, got, wantJSON)
		}
	}
	check("0", `{"capabilities":["list_deps"],"name":"test","protocol_version":1,"version":"devel"}`)
	check("2", `[{"name":"a","pm":"test","version":"9.9.9"}]`)
	check("4", `[]`)
	check("5", `{"refreshed":false}`)
	check("6", `{"members":[],"root":""}`)
	check("14", `{"id":{"name":"a","pm":"test","version":"1.0.0"},"root":"/c/a"}`)
	check("16", `[{"id":{"name":"p","pm":"test","version":"1"},"manifest":{},"root":"/plugins/p"}]`)
	check("18", `[]`)
}

func TestBeforeInitialize(t *testing.T) {
	for _, m := range []string{"list_deps", "active_plugins", "load_plugin", "fetch", "search", "refresh", "workspace"} {
		rsps := serve(t, &testPM{}, req(1, m, "")+"\n")
		if got := code(rsps["1"]); got != -32002 {
			t.Errorf("%s before initialize: code %d, want -32002", m, got)
		}
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	rsps := serve(t, &testPM{}, req(1, "initialize", `{"protocol_version":2,"workspace":"/w","cache_dir":"/c","env":{}}`)+"\n")
	got, _ := json.Marshal(rsps["1"]["result"])
	if !strings.Contains(string(got), `"protocol_version":1`) {
		t.Errorf("initialize asking for version 2: %s, want an answer with our version 1", got)
	}
}

// TestDrainAtEOF checks that requests still running at end of input are
// answered before Serve returns.
func TestDrainAtEOF(t *testing.T) {
	in := strings.Replace(initReq, `"env":{`, `"env":{"TEST_SLOW":"200ms",`, 1) + "\n"
	for i := 1; i <= 20; i++ {
		in += req(i, "list_deps", "") + "\n"
	}
	rsps := serve(t, &testPM{}, in)
	if len(rsps) != 21 {
		t.Fatalf("got %d responses, want 21", len(rsps))
	}
	for id, r := range rsps {
		if code(r) != 0 {
			t.Errorf("id %s failed: %v", id, r)
		}
	}
}

func TestOversizeLine(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":7,"method":"search","params":{"query":"` + strings.Repeat("x", 4096) + `"}}`
	in := initReq + "\n" + big + "\n" + req(8, "list_deps", "") + "\n"
	rsps := serve(t, &testPM{}, in, pmserver.WithMaxMessageSize(1024))
	if got := code(rsps["7"]); got != -32600 {
		t.Errorf("oversize request: code %d, want -32600 (%v)", got, rsps["7"])
	}
	if got := code(rsps["8"]); got != 0 {
		t.Errorf("request after the oversize one: code %d (%v)", got, rsps["8"])
	}
}

// oversizeAnswer serves line, over a limit of 200 bytes, ended by eol, and
// returns the one answer it gets.
func oversizeAnswer(t *testing.T, line, eol string) rsp {
	t.Helper()
	out := rawServe(t, &testPM{}, line+eol, pmserver.WithMaxMessageSize(200))
	if len(out) != 1 {
		t.Fatalf("answers: %q; want one", out)
	}
	return decodeRsp(t, out[0])
}

// TestOversizeLineNestedID: a line over the limit is answered under the
// request's id, or null (docs/protocol.md §2.2), never under an "id" member
// nested in its params: here an environment variable named "id" in
// initialize's env, which §6.1 and §10 allow, comes before the request's
// id 1 in the line.
func TestOversizeLineNestedID(t *testing.T) {
	line := `{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1,"workspace":"/w","cache_dir":"/c","env":{"id":"7","PAD":"` +
		strings.Repeat("x", 1000) + `"}},"id":1}`
	r := oversizeAnswer(t, line, "\n")
	if got := string(r.ID); got != "1" && got != "null" {
		t.Errorf("oversize line with the top-level id 1 answered under id %s, an id never sent", got)
	}
	if r.code() != -32600 {
		t.Errorf("oversize line answered %d; want -32600", r.code())
	}
}

// TestOversizeLineMalformedID: a line over the limit gets -32600 (§2.2,
// §7.1) with a null id when the id in its head is not a valid JSON number
// (1.2.3), not an internal error for an answer that cannot be encoded.
func TestOversizeLineMalformedID(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":1.2.3,"method":"search","params":{"query":"` + strings.Repeat("x", 1000) + `"}}`
	r := oversizeAnswer(t, line, "\n")
	if r.code() != -32600 || string(r.ID) != "null" {
		t.Errorf("oversize line with the id 1.2.3 answered id %s, code %d; want id null, code -32600", r.ID, r.code())
	}
}

// TestLineLimitExcludesCRLF: the limit is on the message without its line
// terminator (§2.2), and a reader accepts CR LF as one (§2.1): a message of
// exactly the limit ended by CR LF is served, as one ended by LF is.
func TestLineLimitExcludesCRLF(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_version":1,"workspace":"/w","cache_dir":"/c","env":{}}}`
	for _, eol := range []string{"\n", "\r\n"} {
		out := rawServe(t, &testPM{}, msg+eol, pmserver.WithMaxMessageSize(len(msg)))
		if len(out) != 1 {
			t.Fatalf("answers: %q; want one", out)
		}
		if r := decodeRsp(t, out[0]); r.code() != 0 {
			t.Errorf("a message of exactly the limit (%d bytes) ended by %q answered %s", len(msg), eol, out[0])
		}
	}
}

func TestNoTrailingNewline(t *testing.T) {
	rsps := serve(t, &testPM{}, initReq+"\n"+req(1, "list_deps", ""))
	if len(rsps) != 2 {
		t.Fatalf("got %d responses, want 2", len(rsps))
	}
}

// TestConcurrent sends many requests at once and checks every id is answered once.
func TestConcurrent(t *testing.T) {
	pr, pw := io.Pipe()
	var out pmtest.LogBuffer
	done := make(chan error, 1)
	go func() { done <- pmserver.Serve(context.Background(), &testPM{}, pr, &out) }()
	fmt.Fprintln(pw, initReq)
	for i := 1; i <= 200; i++ {
		fmt.Fprintln(pw, req(i, "list_deps", ""))
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct{ ID int }
		json.Unmarshal([]byte(line), &m)
		ids = append(ids, m.ID)
	}
	sort.Ints(ids)
	for i, id := range ids {
		if id != i {
			t.Fatalf("responses %v: want each id 0..200 once", ids)
		}
	}
}

// TestInvalidParamsInProtocolTerms checks that params of the wrong shape
// are explained by key and JSON kind, without Go type names.
func TestInvalidParamsInProtocolTerms(t *testing.T) {
	rsps := serve(t, &testPM{}, initReq+"\n"+req(1, "active_plugins", `{"deps":"left-pad"}`)+"\n"+req(2, "load_plugin", `{"id":"nope"}`)+"\n")
	for id, want := range map[string]string{
		"1": "active_plugins: invalid params: deps: expected an array, found a string",
		"2": "load_plugin: invalid params: id: expected an object, found a string",
	} {
		e, _ := rsps[id]["error"].(map[string]any)
		if msg, _ := e["message"].(string); msg != want {
			t.Errorf("id %s: message %q, want %q", id, msg, want)
		}
	}
}
