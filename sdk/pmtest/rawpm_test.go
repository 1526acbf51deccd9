package pmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// rawPM is a PM written without the SDK's server harness, the way an author
// in another language would, so that each of its modes can break exactly
// one rule of the protocol. Mode "" follows every rule.
//
// It offers one plugin, raw:alpha@1.0.0, rooted at <workspace>/plugins/alpha,
// and lists alpha and beta@* as dependencies.
func rawPM(mode string) int {
	pm := &raw{mode: mode, out: bufio.NewWriter(os.Stdout)}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	limit := 64 << 20
	if v, err := strconv.Atoi(os.Getenv("PMTEST_RAW_LIMIT")); err == nil {
		limit = v
	}
	var wg sync.WaitGroup
	eof := make(chan struct{}) // closed when the input has ended
	for {
		line, long, err := readLine(in, limit)
		if long {
			if mode == "dies-on-long-line" {
				return 2
			}
			if mode == "slow-long-line" {
				// A loaded machine reading a long line: longer than the
				// timeout and its grace, well within the slow timeout.
				time.Sleep(7 * time.Second)
			}
			pm.reply(json.RawMessage("null"), nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "line too long"))
			continue
		}
		if err != nil && len(line) == 0 {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 && mode != "answer-blank" {
			continue
		}
		if mode == "leak-secret" {
			fmt.Fprintf(os.Stderr, "read a line; proxy is %s\n", os.Getenv("HTTPS_PROXY"))
		}
		if !utf8.Valid(line) && mode != "echo-utf8" {
			pm.reply(json.RawMessage("null"), nil, protocol.NewError(protocol.CodeParseError, nil, "not valid UTF-8"))
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '[' && json.Valid(t) {
			pm.batch(t)
			continue
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if !json.Valid(line) {
			if mode == "die-on-garbage" {
				return 2
			}
			pm.reply(json.RawMessage("null"), nil, protocol.NewError(protocol.CodeParseError, nil, "not a JSON-RPC message"))
			continue
		}
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" || m.Method == "" || !idOK(m.ID) ||
			(len(m.Params) > 0 && m.Params[0] != '{' && m.Params[0] != '[' && string(m.Params) != "null") {
			if mode == "lenient-requests" {
				continue // silently dropped
			}
			id := m.ID
			if len(id) == 0 || !idOK(id) {
				id = json.RawMessage("null")
			}
			pm.reply(id, nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "not a valid request"))
			continue
		}
		if len(m.ID) == 0 {
			if mode == "answer-notifications" {
				pm.reply(json.RawMessage("null"), nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "no id"))
			}
			continue // a notification: ignored
		}
		if k := string(m.ID); pm.seen(k) && mode == "dup-drop" {
			continue // the second request with an id is dropped
		}
		if mode == "dup-refuse-both" && string(m.ID) == `"dup"` {
			// Both requests with the id "dup" refused, where the earlier
			// one is owed its normal answer.
			pm.reply(m.ID, nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "id %s is in use", m.ID))
			continue
		}
		if mode == "early-refuse" && pm.earlyRefuse(m.ID, m.Method, m.Params, &wg) {
			continue
		}
		if mode == "no-drain" && m.Method != protocol.MethodInitialize {
			// Answered a moment later unless the input ends first: a PM
			// that drops what it has read when it exits. (A race-built
			// binary lingers a second in os.Exit, so the answer must not
			// be written once the input has ended.)
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-time.After(200 * time.Millisecond):
					pm.handle(m.ID, m.Method, m.Params)
				case <-eof:
				}
			}()
			continue
		}
		pm.handle(m.ID, m.Method, m.Params)
	}
	close(eof)
	switch mode {
	case "no-drain":
		return 0 // without waiting for the requests in flight
	case "exit-1-at-eof":
		return 1
	}
	wg.Wait()
	return 0
}

// readLine reads one line without its terminator (a CR before the LF
// included), holding at most limit bytes: a longer line is read to its end
// and discarded, and reported long.
func readLine(r *bufio.Reader, limit int) (line []byte, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit+2 {
			long = true
			line = line[:0]
		} else if !long {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			return nil, true, nil
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > limit {
			return nil, true, nil
		}
		return line, false, err
	}
}

type raw struct {
	mode string

	mu          sync.Mutex
	out         *bufio.Writer
	initialized bool
	initRunning bool // early-refuse: an initialize is being answered
	workspace   string
	env         map[string]string
	fetches     int
	ids         map[string]bool
}

func (r *raw) reply(id json.RawMessage, result any, e *protocol.Error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	b, _ := json.Marshal(msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == "unknown-notification" {
		// A notification of a method the host does not know before each
		// answer: a host ignores it (docs/protocol.md §4.2).
		r.out.WriteString(`{"jsonrpc":"2.0","method":"raw/progress","params":{"message":"working"}}` + "\n")
	}
	r.out.Write(append(b, '\n'))
	r.out.Flush()
}

// earlyRefuse is mode early-refuse, a PM taking the freedom §3.2 gives it:
// initialize takes 300 ms, answered in the background, and a request read
// meanwhile is refused with -32002 (not initialized) rather than held. It
// reports whether it took the request.
func (r *raw) earlyRefuse(id json.RawMessage, method string, params json.RawMessage, wg *sync.WaitGroup) bool {
	r.mu.Lock()
	running, initialized := r.initRunning, r.initialized
	if method == protocol.MethodInitialize && !running && !initialized {
		r.initRunning = true
	}
	r.mu.Unlock()
	switch {
	case running:
		r.reply(id, nil, protocol.NewError(protocol.CodeNotInitialized, nil, "%s: initialize is still running", method))
		return true
	case method != protocol.MethodInitialize || initialized:
		return false
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond)
		res, e := r.dispatch(method, params)
		// Not running once dispatch is done: a request read after the
		// answer below (as a host sends them) is never refused.
		r.mu.Lock()
		r.initRunning = false
		r.mu.Unlock()
		r.reply(id, res, e)
	}()
	return true
}

// idOK reports whether a request's id is absent, a string or a number.
func idOK(id json.RawMessage) bool {
	return len(id) == 0 || id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')
}

// batch refuses a batch, or runs it in mode run-batch.
func (r *raw) batch(msg []byte) {
	var elems []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(msg, &elems)
	var out []map[string]any
	for _, e := range elems {
		if r.mode == "run-batch" {
			r.handle(e.ID, e.Method, e.Params)
			continue
		}
		out = append(out, map[string]any{"jsonrpc": "2.0", "id": e.ID, "error": protocol.NewError(protocol.CodeInvalidRequest, nil, "batches are not supported")})
	}
	if len(out) == 0 {
		return
	}
	b, _ := json.Marshal(out)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Write(append(b, '\n'))
	r.out.Flush()
}

// seen records an id and reports whether it was seen before.
func (r *raw) seen(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string]bool{}
	}
	old := r.ids[id]
	r.ids[id] = true
	return old
}

func (r *raw) handle(id json.RawMessage, method string, params json.RawMessage) {
	res, err := r.dispatch(method, params)
	r.reply(id, res, err)
}

func badParams(method string, err error) *protocol.Error {
	return protocol.NewError(protocol.CodeInvalidParams, nil, "%s: %v", method, err)
}

// decode unmarshals params strictly by type; lenient mode ignores errors.
func (r *raw) decode(method string, params json.RawMessage, v any) *protocol.Error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil && r.mode != "lenient-params" {
		return badParams(method, err)
	}
	return nil
}

func (r *raw) id(name, version string) protocol.PackageID {
	pm := "raw"
	if r.mode == "foreign-mint" && name == "alpha" {
		pm = "cargo"
	}
	if r.mode == "range-versions" && version == "1.0.0" {
		version = "^1.0"
	}
	return protocol.PackageID{PM: pm, Name: name, Version: version}
}

func (r *raw) offer() protocol.Offer {
	root := filepath.Join(r.workspace, "plugins", "alpha")
	if r.mode == "bad-root" {
		root = "plugins/alpha"
	}
	return protocol.Offer{ID: r.id("alpha", "1.0.0"), Root: root, Manifest: json.RawMessage(`{"name":"alpha"}`)}
}

func (r *raw) checkID(id protocol.PackageID) *protocol.Error {
	if r.mode == "foreign-accepted" {
		return nil
	}
	if id.PM != "raw" || id.Name == "" {
		return protocol.ErrForeignID(id, "id %s is not one of raw's", id)
	}
	return nil
}

func (r *raw) dispatch(method string, params json.RawMessage) (any, *protocol.Error) {
	r.mu.Lock()
	initialized := r.initialized
	r.mu.Unlock()
	if method == protocol.MethodInitialize {
		var p protocol.InitializeParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		if initialized && r.mode != "reinit" {
			return nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "already initialized")
		}
		if r.mode == "cache-litter" {
			os.WriteFile(filepath.Join(p.CacheDir, "litter"), []byte("x"), 0o644)
		}
		if r.mode == "workspace-write" {
			os.WriteFile(filepath.Join(p.Workspace, "written-by-pm"), []byte("x"), 0o644)
		}
		r.mu.Lock()
		r.initialized = true
		if r.mode != "half-init" || p.ProtocolVersion == protocol.Version {
			r.workspace, r.env = p.Workspace, p.Env
		}
		r.mu.Unlock()
		caps := []string{"list_deps", "search", "refresh", "workspace"}
		if r.mode == "unannounced-deps" {
			caps = caps[1:]
		}
		version := protocol.Version
		if r.mode == "echo-version" {
			version = p.ProtocolVersion
		}
		name := "raw"
		if r.mode == "bad-name" {
			name = "raw:x"
		}
		return protocol.InitializeResult{ProtocolVersion: version, Name: name, Capabilities: caps}, nil
	}
	if !initialized && r.mode != "early-answers" {
		return nil, protocol.NewError(protocol.CodeNotInitialized, nil, "%s before initialize", method)
	}
	switch method {
	case protocol.MethodListDeps:
		if r.mode == "network" {
			r.dial()
		}
		if r.mode == "null-deps" {
			return nil, nil
		}
		return []protocol.PackageID{r.id("alpha", "1.0.0"), r.id("beta", "*")}, nil
	case protocol.MethodActivePlugins:
		var p protocol.ActivePluginsParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		return []protocol.Offer{r.offer()}, nil
	case protocol.MethodLoadPlugin:
		var p protocol.LoadPluginParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		if e := r.checkID(p.ID); e != nil {
			return nil, e
		}
		if p.ID.Name != "alpha" {
			return []protocol.Offer{}, nil
		}
		return []protocol.Offer{r.offer()}, nil
	case protocol.MethodFetch:
		var p protocol.FetchParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		if !p.Update.Valid() && r.mode != "lenient-params" {
			return nil, badParams(method, fmt.Errorf("update %q", p.Update))
		}
		if e := r.checkID(p.ID); e != nil {
			return nil, e
		}
		if p.ID.Name != "alpha" {
			if r.mode == "internal-unknown" && p.ID.Name != "beta" {
				return nil, protocol.NewError(protocol.CodeInternalError, nil, "lookup of %s exploded", p.ID)
			}
			return nil, protocol.ErrOffline(p.ID)
		}
		root := r.offer().Root
		r.mu.Lock()
		r.fetches++
		if r.mode == "flaky-fetch" && r.fetches%2 == 0 {
			root = r.workspace
		}
		r.mu.Unlock()
		return protocol.FetchResult{ID: r.id("alpha", "1.0.0"), Root: root}, nil
	case protocol.MethodSearch:
		var p protocol.SearchParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		hits := []protocol.SearchHit{}
		if strings.Contains("alpha", p.Query) {
			hits = append(hits, protocol.SearchHit{ID: r.id("alpha", "1.0.0"), Description: "the first"})
		}
		return hits, nil
	case protocol.MethodRefresh:
		var p protocol.RefreshParams
		if e := r.decode(method, params, &p); e != nil {
			return nil, e
		}
		if !p.Update.Valid() && r.mode != "lenient-params" {
			return nil, badParams(method, fmt.Errorf("update %q", p.Update))
		}
		return protocol.RefreshResult{}, nil
	case protocol.MethodWorkspace:
		return protocol.WorkspaceResult{Root: r.workspace, Members: []protocol.WorkspaceMember{}}, nil
	}
	if r.mode == "no-method-error" {
		return nil, nil
	}
	return nil, protocol.NewError(protocol.CodeMethodNotFound, nil, "no method %q", method)
}

// dial connects through the proxy of the initialize env, as a PM that
// checks its registry on the hook path would.
func (r *raw) dial() {
	u, err := url.Parse(r.env["HTTPS_PROXY"])
	if err != nil || u.Host == "" {
		return
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return
	}
	fmt.Fprint(c, "CONNECT registry.example:443 HTTP/1.1\r\nHost: registry.example:443\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(time.Second))
	c.Read(make([]byte, 64))
	c.Close()
}
