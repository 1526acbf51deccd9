//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/regcache"
)

// scriptPMCommand is a PM in a few lines of shell that answers each method
// with the JSON in a file of its directory, sending the diagnostics of
// METHOD.diag first (see the script).
const scriptPMCommand = "../discovery/testdata/script-pm"

// scriptPM writes the answers of one script PM named name announcing caps:
// answers maps a method to its result (encoded as JSON), "METHOD.error" to
// an error object, and "METHOD.diag" to the diagnostics ([]map[string]any,
// their params without the request) sent before the answer. It returns
// the directory, for SCRIPT_PM_DIR.
func scriptPM(t *testing.T, name string, caps []string, answers map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	if caps == nil {
		caps = []string{}
	}
	files := map[string]any{protocol.MethodInitialize: map[string]any{
		"protocol_version": protocol.Version, "name": name, "version": "0.1.0", "capabilities": caps}}
	for k, v := range answers {
		files[k] = v
	}
	for k, v := range files {
		var data []byte
		name := k + ".json"
		if strings.HasSuffix(k, ".diag") {
			name = k
			for _, d := range v.([]map[string]any) {
				b, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				data = append(append(data, b...), '\n')
			}
		} else {
			var err error
			if data, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scriptCommand is the script PM's absolute path.
func scriptCommand(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(scriptPMCommand)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pmEntry is a [[package-manager]] entry running the script PM answering
// from dir.
func pmEntry(t *testing.T, name, kind, dir string) string {
	t.Helper()
	e := fmt.Sprintf("[[package-manager]]\nname = %q\ncommand = %q\nenv = { SCRIPT_PM_DIR = %q }\n", name, scriptCommand(t), dir)
	if kind != "" {
		e += fmt.Sprintf("kind = %q\n", kind)
	}
	return e + "\n"
}

// cliEnv isolates the configuration, writes config (after the [defaults]
// that turn the built-in registries off) and keeps the built-in PMs out of
// reach. It returns the workspace and the flags naming it and a cache.
func cliEnv(t *testing.T, config string) (ws string, common []string) {
	t.Helper()
	symHome := isolate(t, "")
	t.Setenv("PATH", "/usr/bin:/bin") // no symposium-pm-cargo & co.
	writeConfig(t, symHome, config)
	ws = t.TempDir()
	return ws, []string{"--workspace", ws, "--cache-dir", filepath.Join(symHome, "cache")}
}

// runMain runs symposium-pm with args.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// decode decodes a --json document, failing the test when it is not one.
func decode[T any](t *testing.T, what, out string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: not the documented JSON: %v\n%s", what, err, out)
	}
	return v
}

// offerIn makes an offer of pm's package name rooted in a new directory
// holding files.
func offerIn(t *testing.T, pm, name string, manifest string, files map[string]string) protocol.Offer {
	t.Helper()
	root := writeFiles(t, files)
	return protocol.Offer{ID: protocol.PackageID{PM: pm, Name: name, Version: "1.0.0"}, Root: root, Manifest: json.RawMessage(manifest)}
}

func TestMainDispatch(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{nil, ExitUsage, "", "symposium-pm: missing COMMAND\n\nUsage: symposium-pm COMMAND"},
		{[]string{"frobnicate"}, ExitUsage, "", "symposium-pm: unknown command \"frobnicate\"\n\nUsage:"},
		{[]string{"--frobnicate"}, ExitUsage, "", "symposium-pm: unknown command \"--frobnicate\"\n\nUsage:"},
		// Help asked for goes to stdout, to be paged or searched.
		{[]string{"--help"}, ExitOK, "Usage: symposium-pm COMMAND [ARGS]", ""},
		{[]string{"-h"}, ExitOK, "Usage: symposium-pm COMMAND [ARGS]", ""},
		{[]string{"help"}, ExitOK, "Usage: symposium-pm COMMAND [ARGS]", ""},
		// help COMMAND is the command's own help, not the general usage.
		{[]string{"help", "discover"}, ExitOK, "Usage: symposium-pm discover [flags]", ""},
		{[]string{"help", "validate"}, ExitOK, "Usage: symposium-pm validate ", ""},
		{[]string{"help", "version"}, ExitOK, "Usage: symposium-pm version", ""},
		{[]string{"help", "frobnicate"}, ExitUsage, "", "symposium-pm help: want one command name, got \"frobnicate\"\n\nUsage: symposium-pm COMMAND"},
		{[]string{"help", "discover", "load"}, ExitUsage, "", "symposium-pm help: want one command name, got \"discover load\""},
		{[]string{"--version"}, ExitOK, "symposium-pm ", ""},
		{[]string{"version"}, ExitOK, "symposium-pm ", ""},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != tc.code || !strings.HasPrefix(out, tc.stdout) || !strings.HasPrefix(errOut, tc.stderr) || (tc.stdout == "" && out != "") || (tc.stderr == "" && errOut != "") {
			t.Errorf("symposium-pm %q: exit %d\nstdout %q\nstderr %q", tc.args, code, out, errOut)
		}
	}
	// The usage lists every command with its summary, sorted.
	_, usage, _ := runMain(t, "--help")
	var listed []string
	for name, c := range commands() {
		if !strings.Contains(usage, fmt.Sprintf("  %-10s %s\n", name, c.summary)) {
			t.Errorf("--help does not list %s", name)
		}
		listed = append(listed, name)
	}
	slices.Sort(listed)
	if i, j := strings.Index(usage, "  "+listed[0]+" "), strings.Index(usage, "  "+listed[len(listed)-1]+" "); i < 0 || j < i {
		t.Errorf("--help does not list the commands in order:\n%s", usage)
	}
}

// diagLines are the diagnostics the script PMs send: a warning with a place
// and an informational one.
func diagLines(method string) []map[string]any {
	return []map[string]any{
		{"level": "warning", "message": method + ": [dependncies] is not a table Cargo knows; ignored", "file": "/w/Cargo.toml", "line": 3},
		{"level": "info", "message": method + ": served from an editable project"},
	}
}

func TestCall(t *testing.T) {
	deps := []protocol.PackageID{{PM: "eco", Name: "left-pad", Version: "1.3.0"}}
	dir := scriptPM(t, "eco", []string{protocol.CapListDeps}, map[string]any{
		protocol.MethodListDeps:           deps,
		protocol.MethodListDeps + ".diag": diagLines(protocol.MethodListDeps),
		protocol.MethodFetch + ".error":   map[string]any{"code": -32010, "message": "no such package"},
	})
	ws, common := cliEnv(t, "")
	t.Setenv("SCRIPT_PM_DIR", dir)
	pm := scriptCommand(t)
	file := filepath.Join(ws, "file")
	os.WriteFile(file, nil, 0o644)

	// The result as the PM sent it, its diagnostics on stderr.
	code, out, errOut := runMain(t, append(append([]string{"call", "list_deps"}, common...), "--", pm)...)
	if code != ExitOK {
		t.Fatalf("call list_deps: exit %d\n%s", code, errOut)
	}
	if got := decode[[]protocol.PackageID](t, "call list_deps", out); !slices.Equal(got, deps) {
		t.Errorf("call list_deps printed %v, want %v", got, deps)
	}
	for _, want := range []string{
		"warning: eco: /w/Cargo.toml:3: list_deps: [dependncies] is not a table Cargo knows; ignored\n",
		"note: eco: list_deps: served from an editable project\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("call list_deps: stderr lacks %q:\n%s", want, errOut)
		}
	}

	// --json: the versioned document, flags after the method too.
	code, out, _ = runMain(t, append(append([]string{"call", "list_deps", "{}", "--json"}, common...), "--", pm)...)
	doc := decode[callDoc](t, "call --json", out)
	if code != ExitOK || doc.Version != 1 || doc.Method != "list_deps" || len(doc.Warnings) != 1 || len(doc.Notes) != 1 {
		t.Fatalf("call --json: exit %d: %+v", code, doc)
	}
	if w := doc.Warnings[0]; w.PM != "eco" || w.File != "/w/Cargo.toml" || w.Line != 3 || !strings.HasPrefix(w.Message, "pm eco: list_deps: [dependncies]") {
		t.Errorf("call --json warning: %+v", w)
	}
	if got := decode[[]protocol.PackageID](t, "result", string(doc.Result)); !slices.Equal(got, deps) {
		t.Errorf("call --json result %s", doc.Result)
	}

	// initialize prints the PM's handshake answer.
	code, out, _ = runMain(t, append(append([]string{"call", "initialize"}, common...), "--", pm)...)
	if info := decode[protocol.InitializeResult](t, "call initialize", out); code != ExitOK || info.Name != "eco" || info.Version != "0.1.0" {
		t.Errorf("call initialize: exit %d: %+v", code, info)
	}

	// A relative command is the current directory's, though the PM runs in
	// the workspace.
	t.Chdir(filepath.Dir(pm))
	if code, out, errOut := runMain(t, append(append([]string{"call", "list_deps"}, common...), "--", "./"+filepath.Base(pm))...); code != ExitOK || !strings.Contains(out, "left-pad") {
		t.Errorf("call with a relative command: exit %d\n%s%s", code, out, errOut)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
		json   bool // stdout is the error document
	}{
		{"PM error", []string{"fetch", `{"id":{"pm":"eco","name":"x","version":"1"},"update":"none"}`, "--", pm}, ExitFailure, "symposium-pm call: pm eco: fetch: no such package", false},
		{"PM error --json", []string{"fetch", "--json", "--", pm}, ExitFailure, "symposium-pm call: ", true},
		{"PM not found", []string{"list_deps", "--json", "--", "/no/such/pm"}, ExitFailure, "symposium-pm call: ", true},
		{"workspace missing", []string{"list_deps", "--workspace", filepath.Join(ws, "nope"), "--", pm}, ExitFailure, "symposium-pm call: workspace " + filepath.Join(ws, "nope") + " does not exist", false},
		{"workspace a file", []string{"list_deps", "--json", "--workspace", file, "--", pm}, ExitFailure, "symposium-pm call: workspace " + file + " is not a directory", true},
		{"bad --env", []string{"list_deps", "--env", "NOVALUE", "--", pm}, ExitUsage, "symposium-pm call: --env \"NOVALUE\": want KEY=VALUE\n", false},
		{"no --", []string{"list_deps", pm}, ExitUsage, "symposium-pm call: missing '-- COMMAND' naming the PM to run\n", false},
		{"no command", []string{"list_deps", "--"}, ExitUsage, "symposium-pm call: missing the PM COMMAND after --\n", false},
		{"no method", []string{"--", pm}, ExitUsage, "symposium-pm call: missing METHOD\n", false},
		{"params not JSON", []string{"list_deps", "{", "--", pm}, ExitUsage, "symposium-pm call: PARAMS-JSON \"{\": line 1, column 2: invalid JSON: unexpected end of file\n", false},
		{"params not JSON, where", []string{"list_deps", `{"a":}`, "--", pm}, ExitUsage, "symposium-pm call: PARAMS-JSON \"{\\\"a\\\":}\": line 1, column 6: invalid JSON: invalid character '}' looking for beginning of value\n", false},
		{"help", []string{"--help"}, ExitOK, "", false},
	} {
		args := tc.args
		if tc.name != "workspace missing" && tc.name != "workspace a file" {
			args = append(slices.Clone(common[2:]), args...) // --cache-dir
			args = append([]string{"--workspace", ws}, args...)
		}
		code, out, errOut := runMain(t, append([]string{"call"}, args...)...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("%s: exit %d, want %d; stderr %q, want it to start with %q", tc.name, code, tc.code, errOut, tc.stderr)
		}
		if tc.json {
			if d := decode[errorDoc](t, tc.name, out); d.Version != 1 || d.Error == "" || len(d.Problems) == 0 {
				t.Errorf("%s: error document %+v", tc.name, d)
			}
		} else if tc.code != ExitOK && out != "" {
			t.Errorf("%s: stdout %q, want nothing", tc.name, out)
		}
	}
}

// A skill, for registries and plugin roots.
const skillMD = "---\nname: %s\ndescription: a skill\n---\n"

func TestSearch(t *testing.T) {
	hits := []protocol.SearchHit{
		{ID: protocol.PackageID{PM: "eco", Name: "needle-b", Version: strings.Repeat("ab", 20)}, Description: "B needle"},
		{ID: protocol.PackageID{PM: "eco", Name: "needle-a", Version: "1.0.0"}, Description: "A needle"},
	}
	eco := scriptPM(t, "eco", []string{protocol.CapSearch}, map[string]any{
		protocol.MethodSearch:           hits,
		protocol.MethodSearch + ".diag": diagLines(protocol.MethodSearch),
	})
	mute := scriptPM(t, "mute", []string{protocol.CapSearch}, map[string]any{
		protocol.MethodSearch + ".error": map[string]any{"code": -32000, "message": "index unreachable"},
	})
	reg := writeFiles(t, map[string]string{
		"needle-tips/SKILL.md": fmt.Sprintf(skillMD, "needle-tips"),
		"other/SKILL.md":       fmt.Sprintf(skillMD, "other"),
	})
	regEntry := fmt.Sprintf("[[registry]]\nname = \"reg\"\npath = %q\n\n", reg)
	ecoEntry, muteEntry := pmEntry(t, "eco", "", eco), pmEntry(t, "mute", "", mute)
	ecoDiag := "warning: eco: /w/Cargo.toml:3: search: [dependncies] is not a table Cargo knows; ignored\n"
	ecoNote := "note: eco: search: served from an editable project\n"

	for _, tc := range []struct {
		name, config string
		args         []string
		code         int
		stdout       []string // lines, spaces squeezed
		stderr       []string
		hits, warns  int // with --json
	}{
		{"every source", ecoEntry + muteEntry + regEntry, []string{"needle"}, ExitOK,
			[]string{"PM NAME VERSION DESCRIPTION", "eco needle-a 1.0.0 A needle", "eco needle-b abababababab B needle", "reg needle-tips *"},
			[]string{"warning: pm mute: search: index unreachable\n", ecoDiag, ecoNote}, 3, 2},
		// A PM that sent diagnostics searched: it is not a failed source.
		{"diagnostics alone", ecoEntry, []string{"--json", "needle"}, ExitOK, nil, []string{ecoDiag, ecoNote}, 2, 1},
		{"no hit", regEntry, []string{"zzz"}, ExitOK, []string{`No package matches "zzz".`}, nil, 0, 0},
		{"every source failed", muteEntry, []string{"needle", "--json"}, ExitFailure, nil,
			[]string{"warning: pm mute: search: index unreachable\n", "symposium-pm search: every source's search failed (1)\n"}, 0, 1},
		{"every source failed, text", muteEntry, []string{"needle"}, ExitFailure, []string{""}, []string{"every source's search failed (1)"}, 0, 0},
		{"bad configuration", "[registy]\nname = \"reg\"\n", []string{"needle", "--json"}, ExitFailure, nil, []string{"symposium-pm search: configuration errors:\n"}, 0, 0},
		{"no QUERY", "", nil, ExitUsage, []string{""}, []string{"symposium-pm search: missing QUERY\n"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, common := cliEnv(t, tc.config)
			code, out, errOut := runMain(t, append(append([]string{"search"}, tc.args...), common...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			switch {
			case tc.name == "bad configuration":
				d := decode[errorDoc](t, tc.name, out)
				if d.Version != 1 || len(d.Problems) != 1 || d.Problems[0].File == "" || d.Problems[0].Line != 5 || !strings.Contains(d.Problems[0].Message, "registy") {
					t.Errorf("error document %+v", d)
				}
			case slices.Contains(tc.args, "--json"):
				d := decode[searchDoc](t, tc.name, out)
				if d.Version != 1 || len(d.Hits) != tc.hits || len(d.Warnings) != tc.warns || d.Hits == nil || d.Notes == nil {
					t.Fatalf("document %+v", d)
				}
				if tc.name == "diagnostics alone" {
					w := d.Warnings[0]
					if w.PM != "eco" || w.File != "/w/Cargo.toml" || w.Line != 3 || !strings.HasPrefix(w.Message, "pm eco: search: [dependncies]") ||
						!slices.Equal(d.Notes, []string{"pm eco: search: served from an editable project"}) {
						t.Errorf("diagnostics: %+v, notes %q", w, d.Notes)
					}
				}
			default:
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				for i := range lines {
					lines[i] = regexpSpaces(lines[i])
				}
				if !slices.Equal(lines, tc.stdout) {
					t.Errorf("stdout:\n%s\nwant the lines %q", out, tc.stdout)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	valid := offerIn(t, "eco", "used", `{"name":"used"}`, map[string]string{"SYMPOSIUM.toml": "name = \"used\"\n"})
	hollow := offerIn(t, "eco", "hollow", `{"name":"hollow","skills":[{"source":{"path":"skills"}}]}`, map[string]string{"README": "no plugin\n"})
	broken := offerIn(t, "eco", "broken", `{"name":5}`, nil)
	for _, tc := range []struct {
		name    string
		answers map[string]any
		args    []string
		code    int
		stdout  string
		stderr  string
	}{
		{"valid", map[string]any{protocol.MethodLoadPlugin: []protocol.Offer{valid}, protocol.MethodLoadPlugin + ".diag": diagLines(protocol.MethodLoadPlugin)},
			[]string{"eco:used"}, ExitOK,
			fmt.Sprintf("eco:used@1.0.0\n  root:     %s\n  manifest: {\"name\":\"used\"}\n  valid\n", valid.Root),
			"warning: eco: /w/Cargo.toml:3: load_plugin: [dependncies] is not a table Cargo knows; ignored\nnote: eco: load_plugin: served from an editable project\n"},
		{"valid, --json", map[string]any{protocol.MethodLoadPlugin: []protocol.Offer{valid}, protocol.MethodLoadPlugin + ".diag": diagLines(protocol.MethodLoadPlugin)},
			[]string{"eco:used@^1", "--json"}, ExitOK, "", ""},
		{"invalid offer", map[string]any{protocol.MethodLoadPlugin: []protocol.Offer{broken}}, []string{"eco:broken"}, ExitFailure, "  invalid: manifest does not decode", ""},
		{"no offer", map[string]any{protocol.MethodLoadPlugin: []protocol.Offer{}}, []string{"eco:x"}, ExitFailure,
			"eco offers no plugin for eco:x@*.\n", "symposium-pm load: eco:x@* offers no plugin\n"},
		{"an offer with nothing in it", map[string]any{protocol.MethodLoadPlugin: []protocol.Offer{hollow}}, []string{"eco:hollow"}, ExitFailure,
			"  invalid: eco:hollow@1.0.0 offers no plugin: its manifest declares no hooks, MCP servers, subcommands or chained plugins, and no skill directory it names (skills) exists under " + hollow.Root + "\n", ""},
		{"PM error", map[string]any{protocol.MethodLoadPlugin + ".error": map[string]any{"code": -32010, "message": "no such package"}},
			[]string{"eco:absent"}, ExitFailure, "", "symposium-pm load: pm eco: load_plugin: no such package"},
		{"no such PM", nil, []string{"--json", "nope:x"}, ExitFailure, "", `symposium-pm load: no package manager "nope" (configured: eco)` + "\n"},
		{"not PM:NAME", nil, []string{"just-a-name"}, ExitUsage, "", `symposium-pm load: "just-a-name": want PM:NAME[@REQUIREMENT]` + "\n"},
		{"empty requirement", nil, []string{"eco:x@"}, ExitUsage, "", `symposium-pm load: "eco:x@": empty requirement after @` + "\n"},
		{"no PM:NAME", nil, nil, ExitUsage, "", "symposium-pm load: missing PM:NAME[@REQUIREMENT]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, common := cliEnv(t, pmEntry(t, "eco", "", scriptPM(t, "eco", nil, tc.answers)))
			code, out, errOut := runMain(t, append(append([]string{"load"}, tc.args...), common...)...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.HasPrefix(errOut, tc.stderr) {
				t.Errorf("exit %d, want %d\nstdout %q, want %q in it\nstderr %q, want it to start with %q", code, tc.code, out, tc.stdout, errOut, tc.stderr)
			}
			if !slices.Contains(tc.args, "--json") {
				return
			}
			if tc.code != ExitOK {
				if d := decode[errorDoc](t, tc.name, out); d.Version != 1 || len(d.Problems) != 1 {
					t.Errorf("error document %+v", d)
				}
				return
			}
			type offer struct {
				protocol.Offer
				Valid  bool   `json:"valid"`
				Reason string `json:"reason"`
			}
			d := decode[struct {
				Version  int       `json:"version"`
				Offers   []offer   `json:"offers"`
				Warnings []Warning `json:"warnings"`
				Notes    []string  `json:"notes"`
			}](t, tc.name, out)
			if d.Version != 1 || len(d.Offers) != 1 || !d.Offers[0].Valid || d.Offers[0].Root != valid.Root ||
				len(d.Warnings) != 1 || d.Warnings[0].File != "/w/Cargo.toml" || d.Warnings[0].Line != 3 || d.Warnings[0].PM != "eco" ||
				!slices.Equal(d.Notes, []string{"pm eco: load_plugin: served from an editable project"}) {
				t.Errorf("document %+v", d)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	chain := offerIn(t, "cargo", "chain", `{"name":"chain"}`, map[string]string{"SYMPOSIUM.toml": "name = \"chain\"\n"})
	dep := offerIn(t, "cargo", "dep", `{"name":"dep","plugins":[{"source":{"cargo":"chain"}}],"skills":[{"source":{"path":"skills"}}]}`, map[string]string{
		"SYMPOSIUM.toml":    "name = \"dep\"\n",
		"skills/s/SKILL.md": fmt.Sprintf(skillMD, "s"),
		"skills/t/SKILL.md": fmt.Sprintf(skillMD, "t"),
	})
	cargo := pmEntry(t, "cargo", "", scriptPM(t, "cargo", []string{protocol.CapListDeps}, map[string]any{
		protocol.MethodListDeps:             []protocol.PackageID{{PM: "cargo", Name: "dep", Version: "1.0.0"}},
		protocol.MethodActivePlugins:        []protocol.Offer{dep},
		protocol.MethodLoadPlugin:           []protocol.Offer{chain},
		protocol.MethodLoadPlugin + ".diag": diagLines(protocol.MethodLoadPlugin),
	}))

	// Without consent: the dependency's plugin waits for it, and a note
	// holds the snippet that gives it.
	ws, common := cliEnv(t, cargo)
	code, out, errOut := runMain(t, append([]string{"discover", "--json"}, common...)...)
	doc := decode[discoverDoc](t, "discover --json", out)
	if code != ExitOK || doc.Version != 1 || len(doc.Plugins) != 1 || len(doc.Warnings) != 0 {
		t.Fatalf("discover --json: exit %d\n%s%s", code, out, errOut)
	}
	if p := doc.Plugins[0]; p.ID != dep.ID || p.State != "needs-consent" || p.Source != "dependency" || p.Root != dep.Root || p.Skills != 0 {
		t.Errorf("plugin %+v", p)
	}
	var snippet string
	for _, n := range doc.Notes {
		if _, s, ok := strings.Cut(n, "/config.toml:\n"); ok {
			snippet = s
		}
	}
	if want := "[plugins]\nauto-enable = [\n  { pm = \"cargo\", name = \"dep\" },\n]"; snippet != want {
		t.Fatalf("consent note %q, want the snippet %q", doc.Notes, want)
	}
	code, out, _ = runMain(t, append([]string{"discover"}, common...)...)
	for _, want := range []string{"PM NAME VERSION SOURCE STATE SKILLS REASON cargo dep 1.0.0 dependency needs-consent - embedded in a dependency", "\nNotes:\n", "\n  - to consent to the plugins that need it, add to ", "\n      [plugins]\n      auto-enable = [\n        { pm = \"cargo\", name = \"dep\" },\n      ]\n"} {
		if !strings.Contains(out, want) && !strings.Contains(regexpSpaces(out), want) {
			t.Errorf("discover: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}

	// The snippet pasted into the configuration consents: the plugin is
	// enabled, its chained reference loaded, and what the PM said while
	// loading it is a warning (and a note), with its place.
	_, common = cliEnv(t, cargo+snippet+"\n")
	code, out, errOut = runMain(t, append([]string{"discover", "--json", "--workspace", ws}, common[2:]...)...)
	doc = decode[discoverDoc](t, "discover --json with consent", out)
	states := map[string]string{}
	for _, p := range doc.Plugins {
		states[p.Name+" "+string(p.Source)] = p.State
		if p.Name == "dep" && p.Skills != 2 {
			t.Errorf("dep counts %d skills, want 2", p.Skills)
		}
	}
	if code != ExitOK || states["dep dependency"] != "enabled" || states["chain chained"] != "enabled" || len(states) != 2 {
		t.Fatalf("discover with consent: exit %d, states %v\n%s%s", code, states, out, errOut)
	}
	if len(doc.Warnings) != 1 || doc.Warnings[0].PM != "cargo" || doc.Warnings[0].File != "/w/Cargo.toml" || doc.Warnings[0].Line != 3 ||
		!strings.Contains(doc.Warnings[0].Message, "load_plugin: [dependncies]") || !slices.Contains(doc.Notes, "pm cargo: load_plugin: served from an editable project") {
		t.Errorf("the chained load's diagnostics: warnings %+v, notes %q", doc.Warnings, doc.Notes)
	}
	code, out, errOut = runMain(t, append([]string{"discover", "--strict"}, common...)...)
	if code != ExitFailure || !strings.Contains(errOut, "symposium-pm discover: 1 warning(s) and --strict\n") ||
		!strings.Contains(out, "\nWarnings (1):\n  - pm cargo: load_plugin: [dependncies]") {
		t.Errorf("discover --strict: exit %d\n%s%s", code, out, errOut)
	}

	for _, tc := range []struct {
		name, config string
		args         []string
		code         int
		stderr       string
	}{
		{"bad configuration", "[plugins]\nauto-enabel = []\n", []string{"--json"}, ExitFailure, "symposium-pm discover: configuration errors:\n  "},
		{"workspace missing", "", []string{"--json", "--workspace", filepath.Join(ws, "nope")}, ExitFailure, "symposium-pm discover: workspace " + filepath.Join(ws, "nope") + " does not exist\n"},
		{"bad --env", "", []string{"--env", "X"}, ExitUsage, "symposium-pm discover: --env \"X\": want KEY=VALUE\n"},
		{"an argument", "", []string{"extra"}, ExitUsage, "symposium-pm discover: unexpected argument \"extra\": this command takes no arguments, only flags\n"},
	} {
		_, common := cliEnv(t, tc.config)
		code, out, errOut := runMain(t, append(append([]string{"discover"}, common...), tc.args...)...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("%s: exit %d, want %d; stderr %q, want it to start with %q", tc.name, code, tc.code, errOut, tc.stderr)
		}
		if tc.code == ExitFailure {
			if d := decode[errorDoc](t, tc.name, out); d.Version != 1 || len(d.Problems) != 1 {
				t.Errorf("%s: error document %+v", tc.name, d)
			}
		}
	}
}

// fakeGitRegistry puts a symposium-pm-gitregistry on PATH that is the
// script PM answering from dir, for the git registries of the
// configuration (the process environment carries its SCRIPT_PM_DIR).
func fakeGitRegistry(t *testing.T, dir string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(scriptCommand(t), filepath.Join(bin, "symposium-pm-gitregistry")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("SCRIPT_PM_DIR", dir)
}

// A git registry never fetched is named in a note saying how to fetch it;
// discover --refresh asks it to refresh instead, and its failure is a
// warning; a [[registry]] path that is no directory and a [plugins]
// selector naming no pm are warnings.
func TestDiscoverRegistries(t *testing.T) {
	config := "[[registry]]\nname = \"team\"\ngit = \"https://example.invalid/team.git\"\n\n" +
		"[[registry]]\nname = \"gone\"\npath = \"/no/such/dir\"\n\n" +
		"[plugins]\nuse = [{ pm = \"crago\", name = \"x\" }]\n"
	_, common := cliEnv(t, config)
	fakeGitRegistry(t, scriptPM(t, "team", []string{protocol.CapRefresh}, map[string]any{
		protocol.MethodActivePlugins:      []protocol.Offer{},
		protocol.MethodRefresh + ".error": map[string]any{"code": -32000, "message": "network unreachable"},
	}))
	for _, tc := range []struct {
		args  []string
		warns []string
		notes []string
	}{
		{nil, []string{`names pm "crago"`, `registry "gone": /no/such/dir is not a directory`},
			[]string{"registry team (https://example.invalid/team.git) has never been fetched, so it offers nothing yet; run `symposium-pm discover --refresh` to fetch it"}},
		{[]string{"--refresh"}, []string{`names pm "crago"`, `registry "gone": /no/such/dir is not a directory`, "pm team: refresh: network unreachable"}, nil},
	} {
		code, out, errOut := runMain(t, append(append([]string{"discover", "--json"}, common...), tc.args...)...)
		doc := decode[discoverDoc](t, "discover", out)
		doc.Notes = slices.DeleteFunc(doc.Notes, func(n string) bool { return strings.HasSuffix(n, "dependencies are not examined") })
		if code != ExitOK || len(doc.Warnings) != len(tc.warns) || len(doc.Notes) != len(tc.notes) {
			t.Errorf("discover %q: exit %d, warnings %+v, notes %q\n%s", tc.args, code, doc.Warnings, doc.Notes, errOut)
			continue
		}
		for i, w := range tc.warns {
			if !strings.Contains(doc.Warnings[i].Message, w) {
				t.Errorf("discover %q: warning %d is %q, want %q in it", tc.args, i, doc.Warnings[i].Message, w)
			}
		}
		for i, n := range tc.notes {
			if doc.Notes[i] != n {
				t.Errorf("discover %q: note %d is %q, want %q", tc.args, i, doc.Notes[i], n)
			}
		}
	}
}

// writeRegistryState records in cache that registry name was fetched at
// commit from url, at at, as symposium-pm-gitregistry does.
func writeRegistryState(t *testing.T, cache, name, url, commit string, at time.Time) {
	t.Helper()
	dir := filepath.Join(cache, regcache.NamePart(name), regcache.NamePart(name)+"-0123abcd")
	b, _ := json.Marshal(registryState{Name: name, URL: url, Commit: commit, FetchedAt: at})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, regcache.StateFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryCacheNameCollision: registries whose names render alike as
// a directory ("corp plugins" and "corp/plugins" are both corp_plugins)
// never report each other's cache, even through the one-cache fallback.
func TestRegistryCacheNameCollision(t *testing.T) {
	cache := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	commit := strings.Repeat("1", 40)
	writeRegistryState(t, cache, "corp plugins", "https://git.example/corp/plugins", commit, at)
	if got := registryCache(cache, config.Registry{Name: "corp/plugins", Git: "https://other.example/evil/registry"}); got.Fetched {
		t.Errorf("never-fetched registry corp/plugins reported as %+v, the cache of \"corp plugins\"", got)
	}
	// The registry itself is found, by URL or as the one cache of its name.
	for _, git := range []string{"https://git.example/corp/plugins", "https://git.example/corp/plugins/tree/main"} {
		if got := registryCache(cache, config.Registry{Name: "corp plugins", Git: git}); !got.Fetched || got.Commit != commit {
			t.Errorf("corp plugins at %s: %+v", git, got)
		}
	}
}

func TestStatus(t *testing.T) {
	eco := pmEntry(t, "eco", "", scriptPM(t, "eco", []string{protocol.CapListDeps, protocol.CapSearch}, nil))
	reg := t.TempDir()
	commit := strings.Repeat("c0ffee12", 5)
	config := eco + "[[package-manager]]\nname = \"ghost\"\ncommand = \"no-such-pm\"\n\n" +
		fmt.Sprintf("[[registry]]\nname = \"reg\"\npath = %q\n\n", reg) +
		"[[registry]]\nname = \"gone\"\npath = \"/no/such/dir\"\n\n" +
		"[[registry]]\nname = \"team\"\ngit = \"https://example.invalid/team.git\"\nref = \"main\"\n\n" +
		"[[registry]]\nname = \"fresh\"\ngit = \"https://example.invalid/fresh.git\"\n\n" +
		"[plugins]\nuse = [{ pm = \"crago\", name = \"x\" }]\n"
	_, common := cliEnv(t, config)
	writeRegistryState(t, common[3], "team", "https://example.invalid/team.git", commit, time.Now().Add(-3*time.Hour))

	code, out, errOut := runMain(t, append([]string{"status", "--json"}, common...)...)
	doc := decode[statusDoc](t, "status --json", out)
	if code != ExitFailure || doc.Version != 1 {
		t.Fatalf("status --json: exit %d, want 1 (ghost does not answer, gone does not exist)\n%s%s", code, out, errOut)
	}
	pms := map[string]pmStatus{}
	for _, r := range doc.PackageManagers {
		pms[r.Name] = r
	}
	if e := pms["eco"]; !e.Answers || e.PMName != "eco" || e.PMVersion != "0.1.0" || e.ProtocolVersion != protocol.Version ||
		!slices.Equal(e.Capabilities, []string{"list_deps", "search"}) || e.Origin != "command script-pm" || !strings.HasSuffix(e.ConfiguredAt, "config.toml:5") {
		t.Errorf("eco: %+v", e)
	}
	if g := pms["ghost"]; g.Answers || g.Error != `command "no-such-pm" not found` || g.Capabilities == nil {
		t.Errorf("ghost: %+v", g)
	}
	if c := pms["cargo"]; c.Origin != "built in" || c.Answers || c.Error != "symposium-pm-cargo is not installed" {
		t.Errorf("cargo: %+v", c)
	}
	regs := map[string]registryStatus{}
	for _, r := range doc.Registries {
		regs[r.Name] = r
	}
	if r := regs["reg"]; r.Kind != "path" || r.Location != reg || r.Error != "" {
		t.Errorf("reg: %+v", r)
	}
	if r := regs["gone"]; r.Error != "/no/such/dir is not a directory" {
		t.Errorf("gone: %+v", r)
	}
	if r := regs["team"]; r.Kind != "git" || r.Location != "https://example.invalid/team.git@main" || r.Commit != commit || r.FetchedAt == nil || r.Error != "" {
		t.Errorf("team: %+v", r)
	}
	if r := regs["fresh"]; r.Commit != "" || r.Error != "never fetched; run `symposium-pm discover --refresh` to fetch it" {
		t.Errorf("fresh: %+v", r)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0].Message, `names pm "crago"`) || doc.Warnings[0].Line != 32 {
		t.Errorf("warnings: %+v", doc.Warnings)
	}

	// The tables, without starting the PMs.
	code, out, _ = runMain(t, append([]string{"status", "--no-start"}, common...)...)
	if code != ExitFailure {
		t.Errorf("status --no-start: exit %d, want 1 (gone does not exist)", code)
	}
	for _, want := range []string{
		"NAME ORIGIN ACQUIRED ANSWERS VERSION CAPABILITIES",
		"cargo built in - - - -",
		"eco command script-pm - not started - -",
		"ghost command no-such-pm - no - -",
		"Problems: - cargo: symposium-pm-cargo is not installed",
		`- ghost: command "no-such-pm" not found`,
		"REGISTRY KIND LOCATION COMMIT FETCHED",
		"reg path " + reg + " - -",
		"team git https://example.invalid/team.git@main c0ffee12c0ff 3 hours ago",
		"fresh git https://example.invalid/fresh.git - -",
		"Registry problems: - registry gone: /no/such/dir is not a directory - registry fresh: never fetched",
		`Warnings (1): - ` + common[3][:len(common[3])-len("cache")] + `config.toml:32: [plugins] use names pm "crago"`,
	} {
		if !strings.Contains(regexpSpaces(out), want) {
			t.Errorf("status --no-start lacks %q:\n%s", want, out)
		}
	}

	// Only what works: exit 0.
	_, common = cliEnv(t, eco+fmt.Sprintf("[[registry]]\nname = \"reg\"\npath = %q\n", reg))
	code, out, _ = runMain(t, append([]string{"status"}, common...)...)
	if code != ExitOK || !strings.Contains(regexpSpaces(out), "eco command script-pm - yes 0.1.0 list_deps,search") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	_, common = cliEnv(t, "[defaults]\n")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"extra"}, ExitUsage, "symposium-pm status: unexpected argument \"extra\""},
		{[]string{"--json"}, ExitFailure, "symposium-pm status: configuration errors:"},
	} {
		if code, _, errOut := runMain(t, append(append([]string{"status"}, tc.args...), common...)...); code != tc.code || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("status %q: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
}

// The built-in user-plugins registry is ignored while its directory does
// not exist (docs/configuration.md §2.1): status notes it, not as a
// problem, and exits 0; --json keeps the reason in the row's error.
func TestStatusUserPluginsNotMade(t *testing.T) {
	symHome := isolate(t, "")
	t.Setenv("PATH", "/usr/bin:/bin")
	if err := os.WriteFile(filepath.Join(symHome, "config.toml"), []byte("[defaults]\nsymposium-recommendations = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--workspace", t.TempDir(), "--cache-dir", filepath.Join(symHome, "cache")}
	code, out, _ := runMain(t, append([]string{"status", "--no-start"}, common...)...)
	want := "Registry notes: - registry user-plugins: no directory yet (put plugins there to use it)"
	if code != ExitOK || !strings.Contains(regexpSpaces(out), want) || strings.Contains(out, "Registry problems") {
		t.Errorf("status --no-start: exit %d, want 0 and %q, no problems:\n%s", code, want, out)
	}
	code, out, _ = runMain(t, append([]string{"status", "--no-start", "--json"}, common...)...)
	doc := decode[statusDoc](t, "status --json", out)
	if code != ExitOK || len(doc.Registries) != 1 || doc.Registries[0].Name != "user-plugins" ||
		doc.Registries[0].Error != "no directory yet (put plugins there to use it)" {
		t.Errorf("status --json: exit %d\n%s", code, out)
	}
}

// A registry's cache is found under its name; one cached under another
// URL (as the registry PM may record it) is it when it is the only one.
func TestRegistryCache(t *testing.T) {
	cache := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	writeRegistryState(t, cache, "one", "https://x/one", c1, at)
	writeRegistryState(t, cache, "moved", "/abs/moved", c2, at)
	os.MkdirAll(filepath.Join(cache, "two", "two-a"), 0o755)
	os.MkdirAll(filepath.Join(cache, "two", "two-b"), 0o755)
	os.WriteFile(filepath.Join(cache, "two", "two-a", regcache.StateFile), []byte(`{"name":"two","url":"u1","commit":"`+c1+`"}`), 0o644)
	os.WriteFile(filepath.Join(cache, "two", "two-b", regcache.StateFile), []byte(`{"name":"two","url":"u2","commit":"`+c2+`"}`), 0o644)
	writeRegistryState(t, cache, "short", "https://x/short", "abc", at)
	for _, tc := range []struct {
		name, url string
		want      cachedRegistry
	}{
		{"one", "https://x/one", cachedRegistry{true, c1, at}},
		{"moved", "moved", cachedRegistry{true, c2, at}},
		{"two", "u3", cachedRegistry{}},
		{"two", "u2", cachedRegistry{Fetched: true, Commit: c2}},
		{"short", "https://x/short", cachedRegistry{}},
		{"never", "https://x/never", cachedRegistry{}},
	} {
		if got := registryCache(cache, config.Registry{Name: tc.name, Git: tc.url}); got != tc.want {
			t.Errorf("registryCache(%s, %s) = %+v, want %+v", tc.name, tc.url, got, tc.want)
		}
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{30 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{time.Hour, "1 hour ago"},
		{47 * time.Hour, "47 hours ago"},
		{48 * time.Hour, "2 days ago"},
		{400 * 24 * time.Hour, "400 days ago"},
	} {
		if got := age(now, now.Add(-tc.ago)); got != tc.want {
			t.Errorf("age of %v = %q, want %q", tc.ago, got, tc.want)
		}
	}
}

func TestMigrate(t *testing.T) {
	const legacy = "name = \"legacy\"\ncrates = [\"serde\"]\n"
	dir := writeFiles(t, map[string]string{
		"reg/legacy/SYMPOSIUM.toml": legacy,
		"reg/good/SYMPOSIUM.toml":   "name = \"good\"\n",
		"reg/broken/SYMPOSIUM.toml": "name = \n",
		"odd/custom/SYMPOSIUM.toml": "name = \"custom\"\ncrates = [\"gizmo\"]\n\n[[skills]]\nsource.crate_path = \"docs/skills\"\n",
	})
	reg, odd := filepath.Join(dir, "reg"), filepath.Join(dir, "odd")
	legacyPath, broken, custom := filepath.Join(reg, "legacy", "SYMPOSIUM.toml"), filepath.Join(reg, "broken", "SYMPOSIUM.toml"), filepath.Join(odd, "custom", "SYMPOSIUM.toml")
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(legacyPath); string(b) != legacy {
			t.Errorf("%s changed %s:\n%s", what, legacyPath, b)
		}
	}

	// --check --json: what would change, and the file skipped.
	code, out, errOut := runMain(t, "migrate", "--check", reg, "--json")
	doc := decode[migrateDoc](t, "migrate --check --json", out)
	if code != ExitFailure || doc.Version != 1 || doc.Mode != "check" || doc.Checked != 3 || doc.Migrated != 1 || doc.Changes != 1 || len(doc.Files) != 1 {
		t.Fatalf("migrate --check --json: exit %d\n%s%s", code, out, errOut)
	}
	if f := doc.Files[0]; f.Path != legacyPath || len(f.Changes) != 1 || f.Changes[0].Line != 2 || f.Changes[0].Old != `crates = ["serde"]` ||
		!strings.Contains(f.Changes[0].New, "serde") || f.Diff != "" {
		t.Errorf("file %+v", f)
	}
	if len(doc.Warnings) != 1 || doc.Warnings[0].File != broken || !strings.HasPrefix(doc.Warnings[0].Message, "skipped: ") {
		t.Errorf("warnings %+v", doc.Warnings)
	}
	if !strings.Contains(errOut, broken) || !strings.HasSuffix(errOut, "symposium-pm migrate: would migrate 1 of 3 files (1 change)\n") {
		t.Errorf("stderr:\n%s", errOut)
	}
	unchanged("--check")

	// --diff --json: the diff in the document, nothing written.
	code, out, _ = runMain(t, "migrate", "--diff", "--json", reg)
	doc = decode[migrateDoc](t, "migrate --diff --json", out)
	if code != ExitOK || doc.Mode != "diff" || len(doc.Files) != 1 || !strings.HasPrefix(doc.Files[0].Diff, "--- "+legacyPath+"\n") ||
		!strings.Contains(doc.Files[0].Diff, "\n-crates = [\"serde\"]\n") {
		t.Errorf("migrate --diff --json: exit %d\n%s", code, out)
	}
	unchanged("--diff --json")
	code, out, _ = runMain(t, "migrate", "--diff", reg)
	if code != ExitOK || out != doc.Files[0].Diff {
		t.Errorf("migrate --diff: exit %d, printed\n%s\nwant the diff of --json\n%s", code, out, doc.Files[0].Diff)
	}
	unchanged("--diff")

	// A refusal: the file, its line and the reason; nothing written there.
	code, out, errOut = runMain(t, "migrate", "--json", odd)
	doc = decode[migrateDoc](t, "migrate --json of a refusal", out)
	if code != ExitFailure || doc.Mode != "write" || len(doc.Files) != 0 || len(doc.Warnings) != 1 ||
		doc.Warnings[0].File != custom || doc.Warnings[0].Line != 4 || !strings.HasPrefix(doc.Warnings[0].Message, "cannot migrate: ") ||
		!strings.Contains(errOut, custom+":4: cannot migrate: ") {
		t.Errorf("migrate --json %s: exit %d\n%s%s", odd, code, out, errOut)
	}

	// Writing: each change on stdout, then nothing is left to do.
	code, out, errOut = runMain(t, "migrate", reg)
	if code != ExitOK || !strings.HasPrefix(out, legacyPath+`:2: crates = ["serde"] → `) || strings.Count(out, "\n") != 1 ||
		!strings.HasSuffix(errOut, "symposium-pm migrate: migrated 1 of 3 files (1 change)\n") {
		t.Errorf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(legacyPath); string(b) == legacy {
		t.Errorf("migrate left %s as it was", legacyPath)
	}
	if code, out, _ := runMain(t, "migrate", "--check", reg); code != ExitOK || out != "" {
		t.Errorf("migrate --check after migrate: exit %d\n%s", code, out)
	}

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{filepath.Join(dir, "nope")}, ExitFailure, filepath.Join(dir, "nope") + ": cannot migrate: no such file or directory\n"},
		{nil, ExitUsage, "symposium-pm migrate: no PATH given\n"},
		{[]string{"--check", "--diff", reg}, ExitUsage, "symposium-pm migrate: --check and --diff cannot be used together\n"},
		{[]string{"--nope", reg}, ExitUsage, "flag provided but not defined: -nope\n"},
	} {
		if code, _, errOut := runMain(t, append([]string{"migrate"}, tc.args...)...); code != tc.code || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("migrate %q: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
}

// Every command that prints results takes --json (issue 16, item 4), but
// manifest, whose output is a manifest's wire JSON already.
func TestEveryCommandHasJSON(t *testing.T) {
	for name := range commands() {
		code, usage, _ := runMain(t, name, "--help")
		has := strings.Contains(usage, "\n  -json\n")
		if code != ExitOK || has != (name != "manifest") {
			t.Errorf("%s --help: exit %d, lists -json: %v\n%s", name, code, has, usage)
		}
	}
}

// validate reads a plugin the way it ships and says how it read it: npm
// packages (the "symposium" field, then SYMPOSIUM.toml), crates, Python
// source trees and workspaces (their own plugin, workspace rules).
func TestValidateShips(t *testing.T) {
	skill := fmt.Sprintf(skillMD, "s")
	dir := writeFiles(t, map[string]string{
		"npm-good/package.json":        `{"name": "npm-good", "version": "1.0.0", "symposium": {"depends-on": "react"}}`,
		"npm-good/skills/s/SKILL.md":   skill,
		"npm-layer/package.json":       `{"name": "npm-layer", "version": "1.0.0"}`,
		"npm-layer/SYMPOSIUM.toml":     "name = \"layered\"\n",
		"npm-skills/package.json":      `{"name": "npm-skills", "version": "1.0.0"}`,
		"npm-skills/skills/s/SKILL.md": skill,
		"npm-broken/package.json":      `{"name": "npm-broken", "version": "1.0.0", "symposium": {"skills": "skills", "hooks": 5}}`,
		"npm-none/package.json":        `{"name": "left-pad", "version": "1.3.0"}`,
		"npm-bad-json/package.json":    `{"name": "x",}`,
		"crate-none/Cargo.toml":        "[package]\nname = \"plain\"\nversion = \"0.1.0\"\n",
		"py-none/pyproject.toml":       "[project]\nname = \"plain\"\nversion = \"1\"\n",
		// The guide's source tree: its plugin is declared by an entry
		// point, which counts only in the installed distribution.
		"py-entry-point/pyproject.toml":                      "[project]\nname = \"pytest-skills\"\nversion = \"1.4.0\"\n\n[project.entry-points.symposium]\npytest-skills = \"pytest_skills_plugin\"\n",
		"py-entry-point/pytest_skills_plugin/SYMPOSIUM.toml": "depends-on = \"pytest>=8\"\n",
		"ws/.symposium/config.toml":                          "",
		"ws/SYMPOSIUM.toml":                                  "name = \"house-style\"\n",
		"ws-skills/.symposium/config.toml":                   "",
		"ws-skills/skills/s/SKILL.md":                        skill,
		"ws-empty/.symposium/config.toml":                    "",
	})
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"npm-good", ExitOK, []string{"npm-good: checked as an npm package (origin package)", "checked 1 plugin: 1 valid"}},
		{"npm-layer", ExitOK, []string{"checked as an npm package", "checked 1 plugin: 1 valid"}},
		{"npm-skills", ExitOK, []string{"checked as an npm package", "checked 1 plugin: 1 valid"}},
		{"npm-broken", ExitFailure, []string{"checked as an npm package", "hooks"}},
		{"npm-none", ExitFailure, []string{`this npm package embeds no plugin: it has no "symposium" field in package.json, no SYMPOSIUM.toml and no skills/ directory`}},
		{"npm-bad-json", ExitFailure, []string{"package.json:1"}},
		{"crate-none", ExitFailure, []string{"this crate embeds no plugin: it has no [package.metadata.symposium] in Cargo.toml, no SYMPOSIUM.toml"}},
		{"py-none", ExitFailure, []string{"embeds no plugin: it has no [tool.symposium] in pyproject.toml, no SYMPOSIUM.toml"}},
		{"py-entry-point", ExitFailure, []string{"pyproject.toml: this source tree declares [project.entry-points.symposium], which the pypi PM reads only from an installed distribution",
			"validate the wheel built from it (a .whl file)"}},
		{"ws", ExitOK, []string{"ws: checked as a workspace (origin workspace)", "checked 1 plugin: 1 valid"}},
		{"ws-skills", ExitOK, []string{"ws-skills: checked as a workspace (origin workspace)", "checked 1 plugin: 1 valid"}},
		{"ws-empty", ExitFailure, []string{"the workspace has no plugin of its own: no SYMPOSIUM.toml and no skills/ directory"}},
	} {
		code, out, errOut := runMain(t, "validate", filepath.Join(dir, tc.path))
		all := out + errOut
		if code != tc.code {
			t.Errorf("validate %s: exit %d, want %d\n%s", tc.path, code, tc.code, all)
		}
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("validate %s: output lacks %q:\n%s", tc.path, w, all)
			}
		}
		if strings.Contains(all, `unknown key "version"`) || strings.Contains(all, "dormant") {
			t.Errorf("validate %s: read with the wrong rules:\n%s", tc.path, all)
		}
	}
}

// check's own flags written after COMMAND (without --) go to the PM, and a
// note says so and where to put them; the PM's own flags do not get one.
func TestNoteCheckFlagsAfter(t *testing.T) {
	var out bytes.Buffer
	fs := flagSet("check", "", &out)
	fs.Bool("json", false, "")
	fs.String("run", "", "")
	for _, tc := range []struct {
		command []string
		want    string
	}{
		{[]string{"pm"}, ""},
		{[]string{"pm", "--json"}, "symposium-pm check: note: --json comes after the PM COMMAND pm, so it is passed to the PM; for check, put it before COMMAND\n"},
		{[]string{"pm", "-run=x", "data"}, "symposium-pm check: note: -run=x comes after the PM COMMAND pm, so it is passed to the PM; for check, put it before COMMAND\n"},
		{[]string{"pm", "--max-message-size", "9", "-h", "--name", "-", "x"}, ""},
		{[]string{"pm", "--", "--json"}, ""},
	} {
		out.Reset()
		noteCheckFlagsAfter(fs, tc.command, &out)
		if out.String() != tc.want {
			t.Errorf("%q: %q, want %q", tc.command, out.String(), tc.want)
		}
	}
}

// userEnv makes Symposium's own directories absolute from the current
// directory, and drops a relative XDG directory (not valid).
func TestUserEnv(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"SYMPOSIUM_HOME", "rel/home", filepath.Join(cwd, "rel/home")},
		{"HOME", "/abs/home", "/abs/home"},
		{"HOME", "h", filepath.Join(cwd, "h")},
		{"XDG_CONFIG_HOME", "rel", ""},
		{"XDG_CACHE_HOME", "/abs/cache", "/abs/cache"},
		{"XDG_CACHE_HOME", "", ""},
		{"OTHER", "rel", "rel"},
	} {
		t.Setenv(tc.key, tc.value)
		if got := userEnv(tc.key); got != tc.want {
			t.Errorf("userEnv(%s) with %q = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}

// The --cache-dir help says where the cache is without the flag: where
// config.CacheDir puts it, which under XDG_CONFIG_HOME alone is
// $XDG_CONFIG_HOME/symposium/cache (the help said ~/.symposium/cache);
// check's own default is a temporary directory (the help said the same
// as the others').
func TestCacheDirHelp(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"}
	if got := config.CacheDir(func(k string) string { return env[k] }); got != "/xdg/symposium/cache" {
		t.Fatalf("config.CacheDir under XDG_CONFIG_HOME=/xdg = %s; this test's premise is stale", got)
	}
	n := 0
	for name := range commands() {
		_, usage, _ := runMain(t, name, "--help")
		if !strings.Contains(usage, "\n  -cache-dir string\n") {
			continue
		}
		n++
		want := "$XDG_CONFIG_HOME/symposium/cache, else ~/.symposium/cache)"
		if name == "check" {
			want = "(default: a fresh temporary directory, removed afterwards)"
		}
		if !strings.Contains(usage, want) {
			t.Errorf("%s --help: -cache-dir does not say %q:\n%s", name, want, usage)
		}
	}
	if n < 7 {
		t.Errorf("%d commands list -cache-dir, want the 7 that start PMs", n)
	}
}
