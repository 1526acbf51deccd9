package pmserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// pipeConn is the harness serving one PM over pipes, for tests that must
// read an answer before they send the next request.
type pipeConn struct {
	in     *io.PipeWriter
	out    *bufio.Scanner // the harness's output, line by line
	writes sync.WaitGroup
	served chan error
}

// pipeServe starts the harness for pm on pipes.
func pipeServe(pm pmserver.PM) *pipeConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &pipeConn{in: inW, out: bufio.NewScanner(outR), served: make(chan error, 1)}
	c.out.Buffer(nil, 1<<20)
	go func() {
		c.served <- pmserver.Serve(context.Background(), pm, inR, outW)
		outW.Close()
	}()
	return c
}

// write sends one line without waiting for the harness to read it (it
// may be busy writing an answer nobody reads yet).
func (c *pipeConn) write(line string) {
	c.writes.Go(func() { io.WriteString(c.in, line+"\n") })
}

// end closes the input once every write is through and returns what Serve
// returned.
func (c *pipeConn) end() error {
	c.writes.Wait()
	c.in.Close()
	return <-c.served
}

// rawServe runs the harness over input, with opts, and returns its output
// lines.
func rawServe(t *testing.T, pm pmserver.PM, input string, opts ...pmserver.Option) []string {
	t.Helper()
	var out pmtest.LogBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := pmserver.Serve(ctx, pm, strings.NewReader(input), &out, opts...); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	s := strings.TrimSuffix(out.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// rsp is one decoded response.
type rsp struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r rsp) code() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

func decodeRsp(t *testing.T, line string) rsp {
	t.Helper()
	if !utf8.ValidString(line) {
		t.Fatalf("output line is not valid UTF-8: %q", line)
	}
	var r rsp
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("output line %q is not a response: %v", line, err)
	}
	return r
}

// TestUnknownVersionInitializesFully: a host asking for a version the PM
// does not speak gets the PM's own version, and the PM is then initialized
// exactly as for that version (before, its Initialize never ran and the
// first method dereferenced a nil session).
func TestUnknownVersionInitializesFully(t *testing.T) {
	pm := &testPM{}
	in := strings.Replace(initReq, `"protocol_version":1`, `"protocol_version":2`, 1) + "\n" + req(1, "list_deps", "") + "\n"
	lines := rawServe(t, pm, in)
	if len(lines) != 2 {
		t.Fatalf("got %d answers, want 2: %q", len(lines), lines)
	}
	byID := map[string]rsp{}
	for _, l := range lines {
		r := decodeRsp(t, l)
		byID[string(r.ID)] = r
	}
	if got := string(byID["0"].Result); !strings.Contains(got, `"protocol_version":1`) {
		t.Errorf("initialize asking for version 2 answered %s; want our version 1", got)
	}
	if r := byID["1"]; r.code() != 0 || string(r.Result) != `[{"pm":"test","name":"a","version":"9.9.9"}]` {
		t.Errorf("list_deps after initialize with version 2: %s %+v; want the deps of a fully initialized PM", r.Result, r.Error)
	}
	if pm.sess == nil || pm.sess.ProtocolVersion != protocol.Version || pm.sess.RequestedVersion != 2 {
		t.Errorf("session %+v: want ProtocolVersion %d and RequestedVersion 2", pm.sess, protocol.Version)
	}
}

// edgeLines are requests a host should never send, each with the answer
// (code, id) every PM owes it; nil want means no answer.
var edgeLines = []struct {
	line string
	code int
	id   string // raw JSON id of the answer
	n    int    // answers in a batch array, 0 for a single answer
}{
	{`{"jsonrpc":"1.0","id":2,"method":"list_deps"}`, -32600, `2`, 0},
	{`{"id":3,"method":"list_deps"}`, -32600, `3`, 0},
	{`{"jsonrpc":"2.0","id":80,"method":5}`, -32600, `80`, 0},
	{`{"jsonrpc":"2.0","id":4,"method":"list_deps","params":5}`, -32600, `4`, 0},
	{`{"jsonrpc":"2.0","id":5,"method":"list_deps","result":1}`, -32600, `5`, 0},
	{`{"jsonrpc":"2.0","id":"x\u00ff","method":"list_deps","extra":true}`, -32600, `"x\u00ff"`, 0},
	{`{"jsonrpc":"2.0","id":null,"method":"list_deps"}`, -32600, `null`, 0},
	{`{"jsonrpc":"2.0","id":[6],"method":"list_deps"}`, -32600, `null`, 0},
	{`{"jsonrpc":"2.0","id":"\xff","method":"list_deps"}`, -32700, `null`, 0},
	{`this is not json`, -32700, `null`, 0},
	{`{"jsonrpc":"2.0","id":7,"method":"list_deps"`, -32700, `null`, 0},
	{`42`, -32600, `null`, 0},
	{`[]`, -32600, `null`, 0},
	{`[{"jsonrpc":"2.0","id":8,"method":"list_deps"},{"jsonrpc":"2.0","method":"list_deps"},7]`, -32600, ``, 2},
}

// TestEveryRequestAnsweredAtEOF pipes invalid requests, then valid ones, and
// ends input at once, many times: every line owed an answer gets exactly
// one, and the output is valid UTF-8. Before, the invalid requests' answers
// were lost in most runs.
func TestEveryRequestAnsweredAtEOF(t *testing.T) {
	var in strings.Builder
	in.WriteString(initReq + "\n")
	want := map[string]int{`0`: 0} // id → code, for single answers
	batches := 0
	for _, e := range edgeLines {
		in.WriteString(e.line + "\n")
		if e.n > 0 {
			batches++
		}
	}
	in.WriteString(`{"jsonrpc":"2.0","method":"list_deps"}` + "\n") // a notification: no answer
	in.WriteString(req(100, "list_deps", "") + "\n")
	want[`100`] = 0
	iterations := 200
	if testing.Short() {
		iterations = 20
	}
	for i := range iterations {
		lines := rawServe(t, &testPM{}, in.String())
		if len(lines) != len(edgeLines)+2 {
			t.Fatalf("run %d: %d answers, want %d:\n%s", i, len(lines), len(edgeLines)+2, strings.Join(lines, "\n"))
		}
		var got []string
		gotBatches := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "[") {
				var arr []rsp
				if err := json.Unmarshal([]byte(l), &arr); err != nil || len(arr) != 2 {
					t.Fatalf("run %d: batch answer %s: want 2 errors", i, l)
				}
				for _, r := range arr {
					if r.code() != -32600 {
						t.Errorf("run %d: batch answer %s: want -32600 for each", i, l)
					}
				}
				if string(arr[0].ID) != "8" || string(arr[1].ID) != "null" {
					t.Errorf("run %d: batch answer %s: want ids 8 and null", i, l)
				}
				gotBatches++
				continue
			}
			r := decodeRsp(t, l)
			got = append(got, fmt.Sprintf("%s:%d", r.ID, r.code()))
		}
		if gotBatches != batches {
			t.Errorf("run %d: %d batch answers, want %d", i, gotBatches, batches)
		}
		for _, e := range edgeLines {
			if e.n > 0 {
				continue
			}
			w := fmt.Sprintf("%s:%d", e.id, e.code)
			if !remove(&got, w) {
				t.Errorf("run %d: no answer %s for %s; got %v", i, w, e.line, got)
			}
		}
		for id, c := range want {
			if !remove(&got, fmt.Sprintf("%s:%d", id, c)) {
				t.Errorf("run %d: no answer %s:%d; got %v", i, id, c, got)
			}
		}
		if len(got) > 0 {
			t.Errorf("run %d: unexpected answers %v", i, got)
		}
		if t.Failed() {
			return
		}
	}
}

func remove(list *[]string, s string) bool {
	for i, x := range *list {
		if x == s {
			*list = append((*list)[:i], (*list)[i+1:]...)
			return true
		}
	}
	return false
}

// TestEdgeMessages checks the wording of the answers to malformed lines.
func TestEdgeMessages(t *testing.T) {
	tests := []struct{ line, want string }{
		{`this is not json`, `parse error: the message is not valid JSON: invalid character 'h' in literal true (expecting 'r') (column 2)`},
		{`{"jsonrpc":"2.0","id":7`, `parse error: the message is not valid JSON: it ends before the value is complete (column 24)`},
		{"{\"id\":\"\xff\"}", `parse error: the message is not valid UTF-8 (byte 0xff at column 8), so it is not JSON`},
		{`{"jsonrpc":"2.0","id":80,"method":5}`, `invalid request: "method" must be a string, not a number`},
		{`{"jsonrpc":"1.0","id":2,"method":"list_deps"}`, `invalid request: "jsonrpc" must be "2.0", not "1.0"`},
		{`{"id":3,"method":"list_deps"}`, `invalid request: the request has no "jsonrpc" member; it must be "2.0"`},
		{`{"jsonrpc":"2.0","id":4,"method":"x","params":"p"}`, `invalid request: "params" must be an object or an array, not a string`},
		{`{"jsonrpc":"2.0","id":4,"method":"x","b":1,"a":2}`, `invalid request: unknown member "a" in the request (a request has only jsonrpc, id, method and params)`},
		{`[]`, `invalid request: an empty batch holds no request`},
		{`true`, `invalid request: a request is a JSON object, not a boolean`},
	}
	for _, tt := range tests {
		lines := rawServe(t, &testPM{}, tt.line+"\n")
		if len(lines) != 1 {
			t.Errorf("%q: %d answers, want 1", tt.line, len(lines))
			continue
		}
		r := decodeRsp(t, lines[0])
		if r.Error == nil || r.Error.Message != tt.want {
			t.Errorf("%q: answered %s\nwant message %q", tt.line, lines[0], tt.want)
		}
	}
}

// TestBatchRefused: a batch is refused element by element without running
// anything, so an initialize inside it does not initialize, and a later
// initialize and list_deps behave as on a fresh connection.
func TestBatchRefused(t *testing.T) {
	in := "[" + initReq + "," + req(1, "list_deps", "") + "]\n" +
		strings.Replace(initReq, `"id":0`, `"id":2`, 1) + "\n" + req(3, "list_deps", "") + "\n"
	lines := rawServe(t, &testPM{}, in)
	if len(lines) != 3 {
		t.Fatalf("got %d answers, want 3: %q", len(lines), lines)
	}
	var batch []rsp
	if err := json.Unmarshal([]byte(lines[0]), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("batch answer %s: want an array of 2 errors", lines[0])
	}
	for i, id := range []string{"0", "1"} {
		if string(batch[i].ID) != id || batch[i].code() != -32600 || !strings.Contains(batch[i].Error.Message, "batches are not supported") {
			t.Errorf("batch answer %d: %+v; want -32600 under id %s", i, batch[i], id)
		}
	}
	for _, l := range lines[1:] {
		if r := decodeRsp(t, l); r.code() != 0 {
			t.Errorf("after the refused batch: %s", l)
		}
	}
}

// gatedPM blocks fetch until its gate is opened.
type gatedPM struct {
	testPM
	gate    chan struct{}
	started chan struct{}
}

func (p *gatedPM) Fetch(ctx context.Context, id protocol.PackageID, u protocol.UpdateLevel) (protocol.FetchResult, error) {
	close(p.started)
	<-p.gate
	return protocol.FetchResult{ID: protocol.PackageID{PM: "test", Name: id.Name, Version: "1.0.0"}, Root: "/c/" + id.Name}, nil
}

// TestDuplicateIDInFlight: a request reusing the id of one still being
// answered is refused with -32600 under that id, and the first is still
// answered (before, the first's answer was lost).
func TestDuplicateIDInFlight(t *testing.T) {
	pm := &gatedPM{gate: make(chan struct{}), started: make(chan struct{})}
	c := pipeServe(pm)
	next := func() rsp {
		t.Helper()
		if !c.out.Scan() {
			t.Fatalf("no answer: %v", c.out.Err())
		}
		return decodeRsp(t, c.out.Text())
	}
	c.write(initReq)
	if r := next(); r.code() != 0 {
		t.Fatalf("initialize: %+v", r.Error)
	}
	c.write(req(2, "fetch", `{"id":{"pm":"test","name":"a","version":"*"},"update":"fetch"}`))
	<-pm.started
	c.write(req(2, "list_deps", ""))
	r := next()
	if r.code() != -32600 || string(r.ID) != "2" || !strings.Contains(r.Error.Message, "id 2 is already in use") {
		t.Fatalf("second request with id 2 while the first runs: %+v %s; want -32600 under id 2", r.Error, r.Result)
	}
	close(pm.gate)
	r = next()
	if r.code() != 0 || string(r.ID) != "2" || !strings.Contains(string(r.Result), `"root":"/c/a"`) {
		t.Fatalf("the first request with id 2: %+v %s; want the fetch result", r.Error, r.Result)
	}
	// Once answered, the id may be used again.
	c.write(req(2, "list_deps", ""))
	if r := next(); r.code() != 0 {
		t.Fatalf("id 2 reused after its answer: %+v", r.Error)
	}
	if err := c.end(); err != nil {
		t.Fatal(err)
	}
}

// namePM fails the test if its name is read before Initialize returned,
// and counts the reads.
type namePM struct {
	testPM
	t      *testing.T
	mu     sync.Mutex
	inited bool
	reads  int
}

func (p *namePM) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inited {
		p.t.Errorf("Name read before Initialize returned")
	}
	p.reads++
	return "test"
}

func (p *namePM) Initialize(ctx context.Context, s *pmserver.Session) error {
	err := p.testPM.Initialize(ctx, s)
	p.mu.Lock()
	p.inited = true
	p.mu.Unlock()
	return err
}

// TestNameReadAfterInitialize holds the harness to the PM contract: on a
// connection, Name is read once, after Initialize has returned, and that
// value serves every later id check.
func TestNameReadAfterInitialize(t *testing.T) {
	in := req(1, "list_deps", "") + "\n" + req(2, "initialize", `{"protocol_version":"one"}`) + "\n" +
		initReq + "\n" + req(3, "load_plugin", `{"id":{"pm":"test","name":"boom","version":"*"}}`) + "\n" +
		req(4, "load_plugin", `{"id":{"pm":"other","name":"boom","version":"*"}}`) + "\n" +
		req(5, "active_plugins", `{"deps":[{"pm":"test","name":"a","version":"1.0.0"}]}`) + "\n"
	p := &namePM{t: t}
	lines := rawServe(t, p, in)
	if len(lines) != 6 {
		t.Errorf("got %d answers, want 6: %q", len(lines), lines)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reads != 1 {
		t.Errorf("Name read %d times on one connection, want once", p.reads)
	}
}

// TestNoBannerWithoutTerminal: the interactive banner is for a terminal on
// stdin, not for any character device (before, /dev/null got it).
func TestNoBannerWithoutTerminal(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer devnull.Close()
	cmd := mainCmd(t)
	cmd.Stdin = devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("PM with stdin %s: %v\n%s", os.DevNull, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "is a package manager") {
		t.Errorf("stdin %s printed the interactive banner:\n%s", os.DevNull, stderr.String())
	}
	if len(out) != 0 {
		t.Errorf("stdout: %q, want nothing", out)
	}
}
