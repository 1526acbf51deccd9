package testscript

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-fixture/fixture"
	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// fixtureData gives the fixture something in every answer: dependencies
// (one exact, one unresolved), two offers and a search hit.
const fixtureData = `-- fixture.toml --
version = "1.2.0"

[[deps]]
name = "rust-skills"
version = "1.2.0"

[[deps]]
name = "undeclared"

[[search]]
name = "tools/lint"
description = "a linter"
-- plugins/rust-skills/SYMPOSIUM.toml --
name = "rust-skills"
-- plugins/rust-skills/skills/ownership/SKILL.md --
---
name: ownership
description: Borrowing rules
---
-- plugins/tools/lint/SKILL.md --
---
name: lint
description: Lint before committing
---
`

var (
	fixtureOnce sync.Once
	fixtureDir  string
)

// fixtureCommand builds symposium-pm-fixture once and returns the command
// serving fixtureData.
func fixtureCommand(t *testing.T) []string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pmtest-fixture-")
		if err != nil {
			t.Fatal(err)
		}
		benchkit.Build(t, "github.com/symposium-dev/symposium-pm/pm-fixture/cmd/symposium-pm-fixture", dir)
		if err := os.WriteFile(filepath.Join(dir, "data.txtar"), []byte(fixtureData), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtureDir = dir
	})
	if fixtureDir == "" {
		t.Fatal("building the fixture failed")
	}
	return []string{filepath.Join(fixtureDir, "symposium-pm-fixture"), "--data", filepath.Join(fixtureDir, "data.txtar"),
		"--max-message-size", strconv.Itoa(testLineLimit)}
}

// testLineLimit is the request-line limit the fixture is started with here,
// and the one the suite's oversize-line check exceeds: 1 MiB on both sides
// instead of the protocol's 64 MiB, which each of the two dozen runs below
// would otherwise pipe through the fixture (the PMs' own conformance tests
// check the default). The check's verdict does not depend on the size.
const testLineLimit = 1 << 20

// TestConformanceFixture runs the suite against the healthy fixture: every
// check passes, none is skipped for lack of data.
func TestConformanceFixture(t *testing.T) {
	cmd := fixtureCommand(t)
	pmtest.Run(t, cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithLineLimit(testLineLimit))

	rep, err := pmtest.Check(t.Context(), cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithLineLimit(testLineLimit))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Status != pmtest.Pass {
			t.Errorf("%s: %s: %s", r.Name, r.Status, r.Message)
		}
	}
}

// TestConformanceFixtureModes runs the suite against every misbehaviour of
// the fixture: each fails the checks it breaks, with a message naming what
// the PM did.
func TestConformanceFixtureModes(t *testing.T) {
	tests := []struct {
		mode string
		opts []pmtest.Option
		fail map[string]string // check → regexp its message must match
		only bool              // no other check fails
	}{
		{mode: "exit", only: true, fail: map[string]string{
			"handshake": `^initialize with protocol version 1: the PM exited \(exit status 3\) without answering initialize \(last stderr: fixture: mode exit: exiting before reading anything\)$`}},
		{mode: "exit-after-init", fail: map[string]string{
			"initialize-twice": `^a second initialize: the PM exited \(exit status 4\) without answering initialize`,
			"method/list_deps": `^the PM exited \(exit status 4\) without answering list_deps`,
			"eof-drain":        `the PM exited \(exit status 4\) without answering active_plugins.*a PM answers every request it has read before exiting$`}},
		{mode: "malformed", fail: map[string]string{
			"method/list_deps": `^the PM wrote a line that is not a JSON-RPC message on stdout: "\{\\"jsonrpc\\":\\"2.0\\",\\"id\\":2,\\"result\\":\[`,
			"malformed-line":   `^the PM wrote a line that is not a JSON-RPC message on stdout: .*; a malformed line must get error -32700`}},
		{mode: "hang", opts: []pmtest.Option{pmtest.WithInitializeTimeout(time.Second)}, only: true, fail: map[string]string{
			"handshake": `^initialize with protocol version 1: no answer to initialize within 1s \(last stderr: fixture: mode hang: reading requests and never answering\)$`}},
		{mode: "slow=3s", opts: []pmtest.Option{pmtest.WithTimeout(500 * time.Millisecond), pmtest.WithRun(regexp.MustCompile(`^(method/list_deps|concurrency)$`))},
			only: true, fail: map[string]string{
				"method/list_deps": `^no answer to list_deps within 500ms$`,
				"concurrency":      `^32 requests in flight: list_deps with id 1000: no answer to list_deps within 500ms$`}},
		{mode: "crash-mid-request", fail: map[string]string{
			"method/list_deps": `^the PM's output ended in the middle of a message: "\{.*"; the PM exited \(exit status 2\) \(last stderr: .*simulated crash in the middle of a response\)$`}},
		{mode: "bad-version", only: true, fail: map[string]string{
			"handshake": `^answered protocol_version 99 to a host asking for version 1, which it must speak$`}},
		{mode: "stdout-garbage", fail: map[string]string{
			"method/list_deps": `^the PM wrote a line that is not a JSON-RPC message on stdout: "   Compiling fixture v0.1.0 \(/tmp/fixture\)"$`,
			"eof-drain":        `Compiling fixture`}},
		{mode: "stderr-flood", opts: []pmtest.Option{pmtest.WithRun(regexp.MustCompile(`^(stderr-volume|method/.*)$`))}, only: true, fail: map[string]string{
			"stderr-volume": `^the PM wrote [0-9.]+ MiB to stderr during an ordinary session; at the default log level a PM should write at most 1.0 MiB`}},
		{mode: "oversize=200000", opts: []pmtest.Option{pmtest.WithMaxMessageSize(100000)}, fail: map[string]string{
			"method/list_deps": `^the PM wrote a line of 200000 bytes on stdout, over the limit of 100000 bytes$`,
			"concurrency":      `over the limit of 100000 bytes$`}},
		{mode: "wrong-id", fail: map[string]string{
			"method/list_deps": `^the PM answered id "wrong-2", which is not a request in flight \(a duplicate answer, or an id the host never sent\)`,
			"unknown-method":   `answered id "wrong-2"`}},
		{mode: "echo-version", only: true, fail: map[string]string{
			"version-negotiation":         `^asked for the unknown protocol version 1000, the PM answered version 1000; it must answer with its own version \(1\)$`,
			"unknown-version-initialized": `^asked for the unknown protocol version 2, the PM answered version 2; it must answer with its own version \(1\)$`}},
		{mode: "half-init", only: true, fail: map[string]string{
			"unknown-version-initialized": `^after initialize with the unknown protocol version 2 \(answered with version 1\), list_deps answered result "\[\]", but after version 1 it answered result "\[\{.*rust-skills.*; a PM asked for a version it does not speak must initialize exactly as for its own$`}},
		{mode: "exit-at-eof", opts: []pmtest.Option{pmtest.WithRun(regexp.MustCompile(`^(eof-drain|eof-answers)$`))}, only: true, fail: map[string]string{
			"eof-drain":   `the PM exited \(exit status 0\) without answering .*a PM answers every request it has read before exiting$`,
			"eof-answers": `^piped initialize, 6 requests and 3 invalid ones, then closed stdin \(run 1 of 3\): .* got no answer; .*every request read gets exactly one answer before the PM exits \(last stderr: fixture: mode exit-at-eof: input ended; exiting without waiting for answers\)$`}},
		{mode: "foreign-id", only: true, fail: map[string]string{
			"own-ids": `^ids minted under another pm than "fixture", the name the PM announced: list_deps answered cargo:rust-skills@1.2.0; list_deps answered cargo:undeclared@\*; active_plugins answered cargo:rust-skills@1.2.0; and \d+ more$`,
			"schema":  `response to list_deps \(id \d+\) .*violates #/\$defs/ListDepsResponse: at /result/0: additional properties 'was' not allowed`}},
		{mode: "extra-field", only: true, fail: map[string]string{
			"schema": `^\d+ messages of \d+ the PM sent do not match the protocol's JSON Schema \(docs/protocol.schema.json\): response to list_deps \(id \d+\) \(and \d+ more like it\) violates #/\$defs/ListDepsResponse: at /result/0: additional properties 'channel' not allowed; .* \| response to active_plugins \(id \d+\) .*violates #/\$defs/ActivePluginsResponse: at /result/0/id: additional properties 'channel' not allowed`}},
		{mode: "diagnostic", only: true, fail: map[string]string{}},
		{mode: "bad-diagnostic", only: true, fail: map[string]string{
			"schema": `^\d+ messages of \d+ the PM sent do not match the protocol's JSON Schema \(docs/protocol.schema.json\): notification "diagnostic" \(and \d+ more like it\) violates #/\$defs/DiagnosticNotification: at /params/message: got number, want string; the message: `}},
		{mode: "stray-diagnostic", only: true, fail: map[string]string{
			"schema": `notification "diagnostic" \(and \d+ more like it\) violates #/\$defs/DiagnosticNotification: at /params/request: "no-such-request" names no request in flight`}},
		{mode: "mistyped-field", only: true, fail: map[string]string{
			"schema": `^\d+ messages of \d+ the PM sent do not match the protocol's JSON Schema \(docs/protocol.schema.json\): response to initialize \(id 1\) \(and \d+ more like it\) violates #/\$defs/InitializeResponse: at /result/version: got null, want string; the message: `}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		name, _, _ := cut(tt.mode)
		covered[name] = true
	}
	for _, m := range fixture.Modes {
		if name, _, _ := cut(m); !covered[name] {
			t.Errorf("fixture mode %s has no case here", m)
		}
	}
	cmd := fixtureCommand(t)
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			opts := append([]pmtest.Option{pmtest.WithWorkspace(t.TempDir()), pmtest.WithLineLimit(testLineLimit),
				pmtest.WithProcessEnv("SYMPOSIUM_FIXTURE_MODE=" + tt.mode)}, tt.opts...)
			rep, err := pmtest.Check(t.Context(), cmd, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for check, want := range tt.fail {
				r, ok := rep.Result(check)
				switch {
				case !ok:
					t.Errorf("%s: not in the report", check)
				case r.Status != pmtest.Fail:
					t.Errorf("%s: %s (%s), want FAIL", check, r.Status, r.Message)
				case !regexp.MustCompile(want).MatchString(r.Message):
					t.Errorf("%s: message\n  %s\ndoes not match\n  %s", check, r.Message, want)
				}
			}
			if tt.only {
				for _, r := range rep.Failures() {
					if _, ok := tt.fail[r.Name]; !ok {
						t.Errorf("%s failed too: %s", r.Name, r.Message)
					}
				}
			}
		})
	}
}

// cut splits MODE[=VALUE] (and the doc form MODE[=BYTES]).
func cut(mode string) (string, string, bool) {
	for i, c := range mode {
		if c == '=' || c == '[' {
			return mode[:i], mode[i:], true
		}
	}
	return mode, "", false
}
