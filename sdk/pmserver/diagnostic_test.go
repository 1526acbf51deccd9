package pmserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// chattyPM warns n times in list_deps, keeps the handler's context, and
// warns once more with it after the handler returned.
type chattyPM struct {
	shelfPM
	n       int
	kept    context.Context
	after   bool
	counted int
}

func (p *chattyPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	if p.kept != nil {
		p.after = pmserver.Warn(p.kept, pmserver.Diagnostic{Message: "late"})
	}
	p.kept = ctx
	for range p.n {
		pmserver.Warn(ctx, pmserver.Diagnostic{Message: strings.Repeat("é", 20000), File: "/ws/f", Line: -3})
	}
	p.counted = pmserver.DiagnosticsSent(ctx)
	return nil, nil
}

func TestWarnBoundsAndOrder(t *testing.T) {
	pm := &chattyPM{n: 150}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":"/ws","cache_dir":"/cache","env":{}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"list_deps"}`,
	}, "\n")
	var out bytes.Buffer
	if err := pmserver.Serve(context.Background(), pm, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// initialize, 100 diagnostics, the list_deps answer.
	if len(lines) != 102 {
		t.Fatalf("got %d lines, want 102", len(lines))
	}
	for i, l := range lines[1:101] {
		if len(l) > protocol.MaxDiagnosticSize {
			t.Errorf("diagnostic %d is %d bytes, over %d", i, len(l), protocol.MaxDiagnosticSize)
		}
		var n struct {
			Method string              `json:"method"`
			ID     json.RawMessage     `json:"id"`
			Params protocol.Diagnostic `json:"params"`
		}
		if err := json.Unmarshal([]byte(l), &n); err != nil || n.Method != protocol.MethodDiagnostic || n.ID != nil {
			t.Fatalf("line %d is not a diagnostic notification: %.200s", i+2, l)
		}
		if string(n.Params.Request) != `"a"` || n.Params.Line != 0 {
			t.Errorf("diagnostic %d: request %s line %d, want \"a\" and no line", i, n.Params.Request, n.Params.Line)
		}
		if i == 99 && !strings.Contains(n.Params.Message, "51 more diagnostics of this request were not sent") {
			t.Errorf("the last diagnostic does not count the dropped ones: %.200s", n.Params.Message)
		}
	}
	if pm.counted != 150 {
		t.Errorf("DiagnosticsSent = %d, want 150 (sent and left out)", pm.counted)
	}
	if !strings.Contains(lines[101], `"id":"a","result"`) {
		t.Errorf("the answer is not last: %.200s", lines[101])
	}

	// A context kept past its handler sends nothing; nor does a context
	// that never was a handler's. Requests are handled concurrently, so
	// the second list_deps is sent only once the first is answered: its
	// handler then warns with a context whose handler has surely returned.
	pm2 := &chattyPM{}
	c := pipeServe(pm2)
	var got strings.Builder
	// send writes one request and reads up to the line answering id.
	send := func(req, id string) {
		t.Helper()
		c.write(req)
		for c.out.Scan() {
			got.WriteString(c.out.Text() + "\n")
			if strings.Contains(c.out.Text(), `"id":`+id+`,"result"`) {
				return
			}
		}
		t.Fatalf("no answer to id %s: %v\n%s", id, c.out.Err(), got.String())
	}
	send(strings.Split(in, "\n")[0], "1")
	send(strings.Split(in, "\n")[1], `"a"`)
	send(`{"jsonrpc":"2.0","id":3,"method":"list_deps"}`, "3")
	if err := c.end(); err != nil {
		t.Fatal(err)
	}
	if pm2.after || strings.Contains(got.String(), "late") {
		t.Errorf("a diagnostic was sent for a request already answered: %s", got.String())
	}
	if pmserver.Warn(context.Background(), pmserver.Diagnostic{Message: "x"}) {
		t.Error("Warn outside a handler reported a diagnostic sent")
	}
}

func TestWarnRedactsURLCredentials(t *testing.T) {
	for in, want := range map[string]string{
		`remote include "https://user:s3cret@reqs.example/more.txt" is not read`: `remote include "https://***@reqs.example/more.txt" is not read`,
		`-e git+https://tok3n@github.com/org/repo.git`:                           `-e git+https://***@github.com/org/repo.git`,
		`mail me at a@b.example, see https://example.com/x@y`:                    `mail me at a@b.example, see https://example.com/x@y`,
		`.npmrc:3: //registry.example/:_authToken=s3cr3t is ignored`:             `.npmrc:3: //registry.example/:_authToken=*** is ignored`,
	} {
		pm := &redactPM{msg: in}
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":"/ws","cache_dir":"/c","env":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"list_deps"}`
		var out bytes.Buffer
		if err := pmserver.Serve(context.Background(), pm, strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		var n struct {
			Params protocol.Diagnostic `json:"params"`
		}
		line := strings.Split(out.String(), "\n")[1]
		if err := json.Unmarshal([]byte(line), &n); err != nil || n.Params.Message != want {
			t.Errorf("sent %q, want %q (%v)", n.Params.Message, want, err)
		}
	}
}

type redactPM struct {
	shelfPM
	msg string
}

func (p *redactPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	pmserver.Warn(ctx, pmserver.Diagnostic{Message: p.msg})
	return nil, nil
}
