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

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
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
		{[]string{"--help"}, ExitOK, "", "Usage: symposium-pm COMMAND [ARGS]"},
		{[]string{"help"}, ExitOK, "", "Usage: symposium-pm COMMAND [ARGS]"},
		{[]string{"--version"}, ExitOK, "symposium-pm ", ""},
		{[]string{"version"}, ExitOK, "symposium-pm ", ""},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != tc.code || !strings.HasPrefix(out, tc.stdout) || !strings.HasPrefix(errOut, tc.stderr) || (tc.stdout == "" && out != "") {
			t.Errorf("symposium-pm %q: exit %d\nstdout %q\nstderr %q", tc.args, code, out, errOut)
		}
	}
	// The usage lists every command with its summary, sorted.
	_, _, usage := runMain(t, "--help")
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
		{"params not JSON", []string{"list_deps", "{", "--", pm}, ExitUsage, "symposium-pm call: PARAMS-JSON \"{\" is not valid JSON\n", false},
		{"help", []string{"--help"}, ExitOK, "Usage: symposium-pm call", false},
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
