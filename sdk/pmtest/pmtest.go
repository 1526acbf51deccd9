// Package pmtest is the conformance kit for package managers (PMs) speaking
// Symposium's PM protocol: a suite of checks run against a PM binary, written
// in any language, over its stdin and stdout, in the spirit of
// testing/fstest.TestFS.
//
// Go PM authors call Run from a test:
//
//	func TestConformance(t *testing.T) {
//		pmtest.Run(t, []string{bin}, pmtest.WithWorkspace("testdata/ws"))
//	}
//
// and anyone else runs the same suite with `symposium-pm check -- COMMAND`.
// Both share Check, which returns a structured Report: one Result per named
// check, each passed, failed or skipped with a precise message.
//
// The checks (see Checks for their names): the handshake and version
// negotiation; a second initialize refused with -32600; every method before
// initialize refused with -32002; announced capabilities really implemented
// and the empty result for the optional methods not announced; -32602 for
// bad params of every method that takes params; -32601 for an unknown method;
// -32700 for a malformed line, after which the PM keeps serving; ids minted
// only under the PM's own name, with exact versions; -32015 for an id of
// another pm; fetch idempotent with a stable, existing, absolute root;
// update "none" making no network connection (verified with proxy variables
// pointing at a loopback listener that records connections); every request
// answered and exit status 0 when input ends; concurrent requests all
// answered under their own ids; and a bounded stderr. Then the protocol's
// edges: a PM asked for an unknown protocol version answers with its own and
// serves exactly as after it; every request read, invalid ones included,
// gets exactly one answer before the PM exits at end of input; invalid
// requests get -32600 under their id (null when the id itself is invalid);
// a line that is not valid UTF-8 gets -32700 with a null id and nothing of it
// is echoed; a batch is refused with one array of -32600 answers and nothing
// in it runs; two requests with one id get two answers. Then the framing
// and the rules a line reader gets wrong: CR LF and blank lines, a last line
// without a line feed, a line one byte over the limit answered -32600;
// notifications never answered; credentials planted in the environment
// appearing in no message and no stderr line; and, over the whole suite,
// nothing written in cache_dir outside <cache_dir>/<name>/ nor anywhere in
// the workspace. Last, the schema check:
// every message the PM sent during all the others matching the protocol's
// JSON Schema (protocol.SchemaJSON, docs/protocol.schema.json), so that a
// key the protocol does not define or a value of the wrong type fails even
// where a lenient decoder would let it pass.
//
// Each check starts the PM afresh (a few share one run), so that one failure
// does not hide the others. Each names the sections of the protocol document
// (docs/protocol.md) it enforces (Sections, Result.Sections).
//
// For a PM's own tests beyond the suite, StartProc starts its binary and
// returns a Proc that sends requests and reads the response lines back one
// by one:
//
//	p := pmtest.StartProc(t, bin, nil, workspace, cacheDir, nil, pmtest.ProcEnv("HOME="+home))
//	if r := p.Call(protocol.MethodFetch, params); r.Code() != protocol.CodeOffline {
//		t.Errorf("fetch: %s", r.Raw)
//	}
package pmtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Status is the outcome of one check.
type Status string

// The outcomes.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Result is the outcome of one named check.
type Result struct {
	// Name is the check's name, one of Checks().
	Name string `json:"name"`
	// Sections are the sections of the protocol document (docs/protocol.md)
	// the check enforces, such as "§2.1".
	Sections []string `json:"sections,omitempty"`
	// Status says whether it passed, failed or was skipped.
	Status Status `json:"status"`
	// Message says what was seen: for a failure, what the PM did and what
	// the protocol requires; for a skip, why.
	Message string `json:"message"`
}

// Report is the outcome of the whole suite against one PM.
type Report struct {
	// Command is the PM command line checked.
	Command []string `json:"command"`
	// PM is the name the PM announced, if the handshake got that far.
	PM string `json:"pm,omitempty"`
	// Capabilities are the capabilities it announced.
	Capabilities []string `json:"capabilities,omitempty"`
	// Results holds one entry per check run, in the order of Checks.
	Results []Result `json:"checks"`
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return len(r.Failures()) > 0 }

// Failures returns the failed checks.
func (r *Report) Failures() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status == Fail {
			out = append(out, res)
		}
	}
	return out
}

// Result returns the result of the check called name.
func (r *Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Name == name {
			return res, true
		}
	}
	return Result{}, false
}

// Count returns how many checks ended with status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == s {
			n++
		}
	}
	return n
}

// Option adjusts how the suite runs.
type Option func(*config)

// config is the resolved settings of one suite run.
type config struct {
	command     []string
	workspace   string
	cacheDir    string
	env         map[string]string
	processEnv  []string
	fetchIDs    []protocol.PackageID
	fetchUpdate protocol.UpdateLevel
	initTimeout time.Duration
	timeout     time.Duration
	slowTimeout time.Duration
	grace       time.Duration
	maxMessage  int
	lineLimit   int
	concurrency int
	maxStderr   int64
	run         *regexp.Regexp
	schema      *schemaLog
}

// WithWorkspace sets the workspace: the PM's working directory and the
// initialize workspace (default: the current directory).
func WithWorkspace(dir string) Option { return func(c *config) { c.workspace = dir } }

// WithCacheDir sets the cache directory handed to the PM (default: a fresh
// temporary directory, removed afterwards).
func WithCacheDir(dir string) Option { return func(c *config) { c.cacheDir = dir } }

// WithEnv adds KEY=VALUE to the initialize env, the PM's authoritative
// environment for ecosystem lookups.
func WithEnv(key, value string) Option {
	return func(c *config) {
		if c.env == nil {
			c.env = map[string]string{}
		}
		c.env[key] = value
	}
}

// WithProcessEnv adds KEY=VALUE entries to the PM's process environment.
func WithProcessEnv(kv ...string) Option {
	return func(c *config) { c.processEnv = append(c.processEnv, kv...) }
}

// WithFetchIDs names ids to probe with fetch and load_plugin, before those
// taken from the PM's own offers, dependencies and search hits.
func WithFetchIDs(ids ...protocol.PackageID) Option {
	return func(c *config) { c.fetchIDs = append(c.fetchIDs, ids...) }
}

// WithFetchUpdate sets the update level of the idempotence probes (default
// "none", so that the suite runs offline).
func WithFetchUpdate(u protocol.UpdateLevel) Option {
	return func(c *config) { c.fetchUpdate = u }
}

// WithInitializeTimeout bounds each initialize request (default 10s).
func WithInitializeTimeout(d time.Duration) Option { return func(c *config) { c.initTimeout = d } }

// WithTimeout bounds each quick request: list_deps, active_plugins,
// workspace and the error cases (default 10s).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithSlowTimeout bounds each request that may reach a registry: fetch,
// load_plugin, search and refresh, and the oversize-line check's reading of
// its long line (default 60s).
func WithSlowTimeout(d time.Duration) Option { return func(c *config) { c.slowTimeout = d } }

// WithMaxMessageSize bounds one response line (default 64 MiB, the
// protocol's default).
func WithMaxMessageSize(n int) Option { return func(c *config) { c.maxMessage = n } }

// WithLineLimit sets the PM's own limit on one request line, which the
// oversize-line check exceeds by one byte (default 64 MiB, the protocol's
// default).
func WithLineLimit(n int) Option { return func(c *config) { c.lineLimit = n } }

// WithRun selects the checks whose names match the regular expression re,
// like go test -run; the handshake always runs. Checks not selected are
// left out of the report.
func WithRun(re *regexp.Regexp) Option { return func(c *config) { c.run = re } }

func (c *config) timeoutFor(method string) time.Duration {
	switch method {
	case protocol.MethodInitialize:
		return c.initTimeout
	case protocol.MethodFetch, protocol.MethodLoadPlugin, protocol.MethodSearch, protocol.MethodRefresh:
		return c.slowTimeout
	}
	return c.timeout
}

func newConfig(command []string, opts []Option) (*config, func(), error) {
	c := &config{
		command:     command,
		fetchUpdate: protocol.UpdateNone,
		initTimeout: 10 * time.Second,
		timeout:     10 * time.Second,
		slowTimeout: 60 * time.Second,
		grace:       5 * time.Second,
		maxMessage:  framing.DefaultMaxMessage,
		lineLimit:   framing.DefaultMaxMessage,
		concurrency: 32,
		maxStderr:   1 << 20,
		schema:      newSchemaLog(),
	}
	for _, o := range opts {
		o(c)
	}
	cleanup := func() {}
	if len(command) == 0 || command[0] == "" {
		return nil, cleanup, fmt.Errorf("no PM command to check")
	}
	if strings.ContainsRune(command[0], filepath.Separator) || strings.ContainsRune(command[0], '/') {
		// A relative command path names a file from here, not from the
		// workspace the PM runs in.
		abs, err := filepath.Abs(command[0])
		if err != nil {
			return nil, cleanup, err
		}
		c.command = append([]string{abs}, command[1:]...)
	}
	if c.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, cleanup, err
		}
		c.workspace = wd
	}
	ws, err := filepath.Abs(c.workspace)
	if err != nil {
		return nil, cleanup, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, cleanup, fmt.Errorf("workspace %s is not a directory", ws)
	}
	c.workspace = ws
	if c.cacheDir == "" {
		dir, err := os.MkdirTemp("", "pmtest-cache-")
		if err != nil {
			return nil, cleanup, err
		}
		c.cacheDir = dir
		cleanup = func() { os.RemoveAll(dir) }
	} else if c.cacheDir, err = filepath.Abs(c.cacheDir); err != nil {
		return nil, cleanup, err
	}
	if c.env == nil {
		c.env = map[string]string{}
	}
	if c.fetchUpdate != "" && !c.fetchUpdate.Valid() {
		return nil, cleanup, fmt.Errorf("fetch update level %q is not none, check or fetch", c.fetchUpdate)
	}
	return c, cleanup, nil
}

// Check runs the conformance suite against the PM started by cmd (a command
// and its arguments) and returns the report. It returns an error only when
// the suite cannot run at all (no command, no workspace); a PM that cannot
// even be started fails the handshake check.
func Check(ctx context.Context, cmd []string, opts ...Option) (*Report, error) {
	cfg, cleanup, err := newConfig(cmd, opts)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	s := &suite{cfg: cfg, report: &Report{Command: slices.Clone(cmd)}}
	s.run(ctx)
	return s.report, nil
}

// Run runs the conformance suite against the PM started by cmd as subtests
// of t, one per check: a failed check fails its subtest with the check's
// message, a skipped one is skipped with its reason.
func Run(t *testing.T, cmd []string, opts ...Option) {
	t.Helper()
	rep, err := Check(t.Context(), cmd, opts...)
	if err != nil {
		t.Fatalf("pmtest: %v", err)
	}
	for _, res := range rep.Results {
		t.Run(res.Name, func(t *testing.T) {
			switch res.Status {
			case Fail:
				t.Errorf("%s: %s", strings.Join(cmd, " "), res.Message)
			case Skip:
				t.Skip(res.Message)
			default:
				if res.Message != "" {
					t.Log(res.Message)
				}
			}
		})
	}
}
