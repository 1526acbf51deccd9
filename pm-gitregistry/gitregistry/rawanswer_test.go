package gitregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// serveOnce runs one process's worth of the protocol in process: a fresh
// PM served by the SDK's harness, initialize, then one request of method
// with params, to the end of input. It returns what the PM wrote after the
// initialize response, and its log.
func serveOnce(t *testing.T, url, cache, method, params string) (string, string) {
	t.Helper()
	init, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
		"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: t.TempDir(), CacheDir: cache, Env: map[string]string{}},
	})
	in := string(init) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + params + "}\n"
	var out bytes.Buffer
	logs := &pmtest.LogBuffer{}
	p := New(Config{Name: "recs", URL: url})
	err := pmserver.Serve(context.Background(), p, strings.NewReader(in), &out,
		pmserver.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	p.Close()
	if err != nil {
		t.Fatalf("serve %s: %v", method, err)
	}
	lines := strings.SplitAfter(out.String(), "\n")
	var rest []string
	for _, l := range lines {
		if !strings.Contains(l, `"id":1,`) {
			rest = append(rest, l)
		}
	}
	return strings.Join(rest, ""), logs.String()
}

// TestKeptAnswer: after a refresh, a hook's active_plugins is served from
// the answer kept in the persisted index (no entry decoded, no offer
// encoded), and what it sends — the diagnostics of the entries not offered,
// then the result — is byte for byte what the usual path sends. An index
// whose kept answer is damaged or cut short, or whose directory's stamps
// moved, is never served (the answer's checksum, which the head gives and
// the harness checks as it streams the answer, refuses it, since the
// harness does not scan a vetted answer for JSON validity): the usual path
// answers, the same, with its diagnostics once, and keeps the answer again.
func TestKeptAnswer(t *testing.T) {
	f := newFixture(t)
	cache := t.TempDir()
	const hookParams = `{"deps":[]}`
	if out, _ := serveOnce(t, f.url, cache, protocol.MethodRefresh, `{"update":"check","force":false}`); !strings.Contains(out, `"refreshed":true`) {
		t.Fatalf("refresh: %s", out)
	}
	kept, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams)
	if !strings.Contains(logs, "served the kept active_plugins answer") {
		t.Fatalf("the first hook after the refresh did not serve the kept answer:\n%s", logs)
	}
	if !strings.Contains(kept, `"result":[{`) || !strings.Contains(kept, "entry broken is not offered") {
		t.Fatalf("hook answered %s", kept)
	}

	idxPath := indexPaths(t, cache)[0]
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T)
	}{
		{"no index", func(t *testing.T) { os.Remove(idxPath) }},
		{"kept answer damaged", func(t *testing.T) {
			b, _ := os.ReadFile(idxPath)
			i := bytes.Index(b, []byte(`"root":`))
			if i < 0 {
				t.Fatal("no answer in the index")
			}
			b[i+10] ^= 1
			os.WriteFile(idxPath, b, 0o644)
		}},
		{"kept answer made invalid JSON", func(t *testing.T) {
			// The answer is served as vetted (the harness does not check
			// it is JSON): only the head's checksum keeps this one out.
			b, _ := os.ReadFile(idxPath)
			i := bytes.Index(b, []byte(`"root":`))
			if i < 0 {
				t.Fatal("no answer in the index")
			}
			b[i+6] = ';'
			os.WriteFile(idxPath, b, 0o644)
		}},
		{"index truncated inside the kept answer", func(t *testing.T) {
			b, _ := os.ReadFile(idxPath)
			i := bytes.Index(b, []byte(`"root":`))
			if i < 0 {
				t.Fatal("no answer in the index")
			}
			os.WriteFile(idxPath, b[:i], 0o644)
		}},
		{"stamps moved", func(t *testing.T) {
			dir := strings.TrimSuffix(idxPath, "."+indexSuffix)
			os.WriteFile(dir+"/new-file", []byte("x"), 0o644)
			os.Remove(dir + "/new-file")
		}},
		{"params the usual path refuses", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := hookParams
			if tc.damage != nil {
				tc.damage(t)
			} else {
				params = `{"deps":7}`
			}
			usual, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, params)
			if strings.Contains(logs, "served the kept active_plugins answer") {
				t.Fatalf("served the kept answer:\n%s", logs)
			}
			if tc.damage == nil {
				if !strings.Contains(usual, `"code":-32602`) {
					t.Errorf("params %s answered %s, want invalid params", params, usual)
				}
				return
			}
			if usual != kept {
				t.Errorf("the usual path sent\n%s\nthe kept answer\n%s", usual, kept)
			}
			again, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams)
			if !strings.Contains(logs, "served the kept active_plugins answer") || again != kept {
				t.Errorf("the next hook did not serve the answer kept again:\n%s\n%s", again, logs)
			}
		})
	}
}
