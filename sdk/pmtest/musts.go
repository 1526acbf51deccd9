package pmtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/internal/oneline"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The checks of the protocol's remaining MUSTs: framing details a line
// reader gets wrong easily, notifications, secrets and where a PM writes.
const (
	// checkLineEndings: a carriage return before the line feed is accepted,
	// empty and blank lines are ignored (not answered), and a last line
	// without a line feed is processed (§2.1).
	checkLineEndings = "line-endings"
	// checkOversize: a line over the PM's size limit gets -32600, under the
	// request's id or null, and the PM goes on reading (§2.2).
	checkOversize = "oversize-line"
	// checkNotification: a request without an id is never answered, whatever
	// its method or params (§4.2, §4.3).
	checkNotification = "notification-unanswered"
	// checkSecrets: credentials in the environment (proxy URLs, index URLs,
	// registry tokens) appear in no message and no stderr line (§11).
	checkSecrets = "no-secrets"
	// checkWrites: across the whole suite, the PM created nothing in
	// cache_dir but its own <cache_dir>/<name>/, and changed nothing in the
	// workspace (§9.1, §11).
	checkWrites = "writes-confined"
)

// mustChecks are the checks of this file run as groups, in report order.
var mustChecks = []string{checkLineEndings, checkOversize, checkNotification, checkSecrets}

// checkSections maps each check to the sections of docs/protocol.md it
// enforces. Every check has an entry (a test keeps it so, and keeps the
// table of §12 identical to it).
var checkSections = map[string][]string{
	"handshake":                 {"§3.2", "§3.3", "§6.1"},
	"version-negotiation":       {"§3.3"},
	"initialize-twice":          {"§3.4"},
	"before-initialize":         {"§3.4"},
	"method/list_deps":          {"§6.5", "§6.9"},
	"method/active_plugins":     {"§5.2", "§6.2"},
	"method/search":             {"§6.6", "§6.9"},
	"method/refresh":            {"§6.7", "§6.9"},
	"method/workspace":          {"§6.8", "§6.9"},
	"method/load_plugin":        {"§6.3"},
	"own-ids":                   {"§5.1"},
	"exact-versions":            {"§5.1"},
	"fetch-idempotent":          {"§5.4", "§6.4"},
	"stderr-volume":             {"§8.2"},
	"bad-params/initialize":     {"§6"},
	"bad-params/active_plugins": {"§6"},
	"bad-params/load_plugin":    {"§6"},
	"bad-params/search":         {"§6"},
	"bad-params/fetch":          {"§6"},
	"bad-params/refresh":        {"§6"},
	"unknown-method":            {"§6", "§7.1"},
	"malformed-line":            {"§2.3"},
	"foreign-id":                {"§5.1", "§6.3", "§6.4"},
	"unknown-package":           {"§6.3", "§7.1"},
	"no-network":                {"§9.2", "§9.3"},
	"eof-drain":                 {"§3.5", "§3.6", "§4.3"},
	"concurrency":               {"§4.1", "§4.4"},
	checkUnknownVersion:         {"§3.3"},
	checkEOFAnswers:             {"§3.5", "§4.3"},
	checkInvalidRequest:         {"§2.3"},
	checkInvalidUTF8:            {"§2.1", "§2.3"},
	checkBatch:                  {"§4.5"},
	checkDuplicateID:            {"§4.6"},
	checkLineEndings:            {"§2.1"},
	checkOversize:               {"§2.2"},
	checkNotification:           {"§4.2"},
	checkSecrets:                {"§11"},
	checkWrites:                 {"§9.1", "§11"},
	"schema":                    {"§4.7", "§5", "§7", "§8.1"},
}

// Sections returns the sections of the protocol document (docs/protocol.md)
// that the check called name enforces, such as "§2.1".
func Sections(name string) []string { return slices.Clone(checkSections[name]) }

// mustGroups returns the checks of this file that run as groups.
func (s *suite) mustGroups() []checkGroup {
	return []checkGroup{
		{[]string{checkLineEndings}, s.lineEndings},
		{[]string{checkOversize}, s.oversizeLine},
		{[]string{checkNotification}, s.notificationUnanswered},
		{[]string{checkSecrets}, s.noSecrets},
	}
}

func (s *suite) lineEndings(ctx context.Context) {
	const name = checkLineEndings
	var in bytes.Buffer
	in.Write(s.initLine())
	in.WriteString("\r\n\n   \t\n\r\n")
	in.Write(request("crlf", protocol.MethodListDeps, struct{}{}))
	in.WriteString("\r\n\n")
	in.Write(request("unterminated", protocol.MethodWorkspace, struct{}{}))
	t, err := s.pipeFrom(ctx, &in, pipeOpts{})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	a, problem := t.decode()
	if problem != "" {
		s.fail(name, "%s", t.withStderr(problem))
		return
	}
	problems := expectAll(a, []owed{
		{what: "initialize ended by CR LF", id: "0", ok: true},
		{what: "list_deps ended by CR LF, after empty and blank lines", id: `"crlf"`, ok: true, behind: true},
		{what: "workspace on a last line without a line feed", id: `"unterminated"`, ok: true, behind: true},
	})
	if len(problems) > 0 {
		s.fail(name, "%s", t.withStderr("piped initialize and list_deps ended by CR LF with empty and blank lines around them, then workspace without a final line feed: "+
			firstFew(problems)+"; a reader accepts CR LF, ignores empty and blank lines (they get no answer) and processes a last line without a line feed"))
		return
	}
	if m := t.exitProblem(s.cfg.grace); m != "" {
		s.fail(name, "%s", t.withStderr("answered every request, then "+m))
		return
	}
	s.pass(name, "CR LF accepted, empty and blank lines ignored, and a last line without a line feed answered")
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.b
	}
	r.n -= int64(len(p))
	return len(p), nil
}

func (s *suite) oversizeLine(ctx context.Context) {
	const name = checkOversize
	limit := s.cfg.lineLimit
	head := `{"jsonrpc":"2.0","id":"oversize","method":"search","params":{"query":"`
	tail := `"}}` + "\n"
	fill := int64(limit) + 1 - int64(len(head)+len(tail)-1)
	in := io.MultiReader(
		bytes.NewReader(append(s.initLine(), '\n')),
		strings.NewReader(head),
		&repeatReader{b: 'a', n: fill},
		strings.NewReader(tail),
		bytes.NewReader(append(request("after", protocol.MethodListDeps, struct{}{}), '\n')),
	)
	// Reading and discarding the long line (64 MiB by default) is slow work
	// on a loaded machine: the PM gets the slow methods' timeout for it.
	t, err := s.pipeFrom(ctx, in, pipeOpts{wait: s.cfg.slowTimeout})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	a, problem := t.decode()
	if problem != "" {
		s.fail(name, "%s", t.withStderr(problem))
		return
	}
	intro := fmt.Sprintf("piped initialize, a search request of %d bytes (one over the limit of %d), then list_deps", fill+int64(len(head)+len(tail)-1), limit)
	// The answer to the long line carries its id, or null when the PM
	// looks for it nowhere.
	var big []pipedAnswer
	for _, key := range []string{`"oversize"`, ""} {
		big = append(big, a.byID[key]...)
		delete(a.byID, key)
	}
	var problems []string
	switch {
	case len(big) == 0:
		problems = append(problems, "the long line got no answer")
	case len(big) > 1:
		problems = append(problems, fmt.Sprintf("the long line got %d answers", len(big)))
	case big[0].Error == nil || big[0].Error.Code != protocol.CodeInvalidRequest:
		problems = append(problems, fmt.Sprintf("the long line answered %s; want error %d (%s)", big[0], protocol.CodeInvalidRequest, protocol.CodeInvalidRequest))
	}
	problems = append(problems, expectAll(a, []owed{
		{what: "initialize", id: "0", ok: true},
		{what: "list_deps after the long line", id: `"after"`, ok: true, behind: true},
	})...)
	if len(problems) > 0 {
		s.fail(name, "%s", t.withStderr(fmt.Sprintf("%s: %s; a line over the limit gets -32600 and the PM goes on reading (set the limit with --line-limit if the PM's differs)", intro, firstFew(problems))))
		return
	}
	s.pass(name, "a line of %d bytes got %d (%s), and list_deps after it was answered", limit+1, protocol.CodeInvalidRequest, big[0].String())
}

func (s *suite) notificationUnanswered(ctx context.Context) {
	const name = checkNotification
	lines := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"list_deps"}`),
		[]byte(`{"jsonrpc":"2.0","method":"pmtest/no_such_method","params":{}}`),
		[]byte(`{"jsonrpc":"2.0","method":"active_plugins","params":{"deps":"not a list"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1}}`),
	}
	if _, ok := s.pipeCheck(ctx, name, lines, nil, "piped four notifications (requests without an id: list_deps, an unknown method, active_plugins with bad params, a second initialize); a PM never answers a notification"); ok {
		s.pass(name, "%d notifications got no answer, and the PM kept serving", len(lines))
	}
}

// secretValue is the credential planted by no-secrets: distinctive, so
// that finding it anywhere means it leaked.
const secretValue = "pmtest-Secret-7f3a91c2"

// scanner watches a stream for a string, across write boundaries.
type scanner struct {
	mu    sync.Mutex
	needs [][]byte
	keep  []byte
	found string
}

func (w *scanner) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found != "" {
		return len(b), nil
	}
	buf := append(w.keep, b...)
	for _, n := range w.needs {
		if i := bytes.Index(buf, n); i >= 0 {
			// Up to 40 bytes either side, within the line holding the
			// secret (its line feed kept): the excerpt does not depend on
			// how the PM's output was split into writes.
			start, end := max(0, i-40), min(len(buf), i+len(n)+40)
			if nl := bytes.LastIndexByte(buf[start:i], '\n'); nl >= 0 {
				start += nl + 1
			}
			if nl := bytes.IndexByte(buf[i+len(n):end], '\n'); nl >= 0 {
				end = i + len(n) + nl + 1
			}
			w.found = oneline.Flatten(string(bytes.ToValidUTF8(buf[start:end], []byte("?"))))
			return len(b), nil
		}
	}
	const overlap = 64
	if len(buf) > overlap {
		buf = buf[len(buf)-overlap:]
	}
	w.keep = append(w.keep[:0], buf...)
	return len(b), nil
}

func (s *suite) noSecrets(ctx context.Context) {
	const name = checkSecrets
	userinfo := url.UserPassword("pmtest", secretValue)
	closed := "127.0.0.1:9" // discard port: nothing listens there
	proxy := (&url.URL{Scheme: "http", User: userinfo, Host: closed}).String()
	index := (&url.URL{Scheme: "http", User: userinfo, Host: closed, Path: "/simple/"}).String()
	env := map[string]string{
		"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "ALL_PROXY": proxy,
		"http_proxy": proxy, "https_proxy": proxy, "all_proxy": proxy,
		"NO_PROXY": "", "no_proxy": "",
		"npm_config_proxy": proxy, "npm_config_https_proxy": proxy,
		"npm_config_registry":   (&url.URL{Scheme: "http", User: userinfo, Host: closed, Path: "/"}).String(),
		"npm_config__authToken": secretValue, "NPM_TOKEN": secretValue, "NODE_AUTH_TOKEN": secretValue,
		"CARGO_REGISTRY_TOKEN": secretValue, "CARGO_HTTP_PROXY": proxy,
		"PIP_INDEX_URL": index, "PIP_EXTRA_INDEX_URL": index, "UV_INDEX_URL": index,
		"GIT_ASKPASS": "true",
	}
	merged := map[string]string{}
	for k, v := range s.cfg.env {
		merged[k] = v
	}
	for k, v := range env {
		merged[k] = v
	}
	var procEnv []string
	for k, v := range env {
		procEnv = append(procEnv, k+"="+v)
	}
	slices.Sort(procEnv)
	lines := [][]byte{
		request(0, protocol.MethodInitialize, protocol.InitializeParams{
			ProtocolVersion: protocol.Version, Workspace: s.cfg.workspace, CacheDir: s.cfg.cacheDir, Env: merged}),
		request(1, protocol.MethodListDeps, struct{}{}),
		request(2, protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{}}),
		request(3, protocol.MethodWorkspace, struct{}{}),
		request(4, protocol.MethodSearch, protocol.SearchParams{Query: "pmtest"}),
		request(5, protocol.MethodRefresh, protocol.RefreshParams{Update: protocol.UpdateCheck}),
		request(6, protocol.MethodFetch, protocol.FetchParams{ID: s.probeID(), Update: protocol.UpdateCheck}),
		request(7, protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: s.probeID()}),
	}
	var in bytes.Buffer
	for _, l := range lines {
		in.Write(l)
		in.WriteByte('\n')
	}
	needs := [][]byte{[]byte(secretValue), []byte(url.QueryEscape(secretValue)), []byte(url.PathEscape(secretValue))}
	errScan := &scanner{needs: needs}
	t, err := s.pipeFrom(ctx, &in, pipeOpts{env: procEnv, stderr: errScan})
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	outScan := &scanner{needs: needs}
	for _, l := range t.lines {
		outScan.Write(l)
		outScan.Write([]byte{'\n'})
	}
	const intro = "with credentials in proxy, index and registry URLs and in token variables (process environment and initialize env), ran every method against unreachable registries"
	switch {
	case outScan.found != "":
		s.fail(name, "%s: a message on stdout holds the secret: …%s…; a PM never puts a credential in a message", intro, outScan.found)
	case errScan.found != "":
		s.fail(name, "%s: stderr holds the secret: …%s…; a PM never puts a credential in a log line", intro, errScan.found)
	default:
		s.pass(name, "%s: no credential in %s or on stderr", intro, plural(len(t.lines), "message", "messages"))
	}
}

// writeSnapshot is what the PM may not change: the entries at the top of
// cache_dir and the whole workspace tree.
type writeSnapshot struct {
	cacheTop  map[string]bool
	workspace map[string]string // path → type, size and modification time
	skipped   string            // why the workspace is not compared, or ""
}

// maxSnapshot bounds the workspace entries writes-confined compares.
const maxSnapshot = 20000

func snapshotTree(root string) (map[string]string, string) {
	m := map[string]string{}
	errTooMany := fmt.Errorf("more than %d entries", maxSnapshot)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			m[p] = "unreadable"
			return nil
		}
		if len(m) >= maxSnapshot {
			return errTooMany
		}
		info, err := d.Info()
		if err != nil {
			m[p] = "gone"
			return nil
		}
		if d.IsDir() {
			// A directory's time changes with what is in it; its entries
			// say that already.
			m[p] = "dir"
			return nil
		}
		m[p] = fmt.Sprintf("%s %d %d", info.Mode().Type(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return nil, fmt.Sprintf("the workspace has %v; not compared", err)
	}
	return m, ""
}

func (s *suite) snapshotWrites() *writeSnapshot {
	snap := &writeSnapshot{cacheTop: map[string]bool{}}
	if entries, err := os.ReadDir(s.cfg.cacheDir); err == nil {
		for _, e := range entries {
			snap.cacheTop[e.Name()] = true
		}
	}
	snap.workspace, snap.skipped = snapshotTree(s.cfg.workspace)
	return snap
}

func (s *suite) writesConfined(before *writeSnapshot) {
	const name = checkWrites
	var problems []string
	own := s.info.Name
	if entries, err := os.ReadDir(s.cfg.cacheDir); err == nil {
		for _, e := range entries {
			if !before.cacheTop[e.Name()] && e.Name() != own {
				problems = append(problems, fmt.Sprintf("created %s in cache_dir, outside its own %s", filepath.Join(s.cfg.cacheDir, e.Name()), filepath.Join(s.cfg.cacheDir, own)))
			}
		}
	}
	if before.workspace != nil {
		after, skipped := snapshotTree(s.cfg.workspace)
		if skipped != "" {
			before.skipped = skipped
		} else {
			for p, v := range after {
				switch w, ok := before.workspace[p]; {
				case !ok:
					problems = append(problems, "created "+p+" in the workspace")
				case w != v:
					problems = append(problems, "changed "+p+" in the workspace")
				}
			}
			for p := range before.workspace {
				if _, ok := after[p]; !ok {
					problems = append(problems, "removed "+p+" from the workspace")
				}
			}
		}
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		s.fail(name, "during the suite the PM %s; a PM writes only under <cache_dir>/<name>/ and never into the workspace", firstFew(problems))
		return
	}
	if before.skipped != "" {
		s.pass(name, "nothing created in cache_dir outside %s (%s)", filepath.Join(s.cfg.cacheDir, own), before.skipped)
		return
	}
	s.pass(name, "during the whole suite nothing was created in cache_dir outside %s, and nothing in the workspace changed (%d entries compared)",
		filepath.Join(s.cfg.cacheDir, own), len(before.workspace))
}
