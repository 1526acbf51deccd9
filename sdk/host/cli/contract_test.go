package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func TestWarningOf(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want Warning
	}{
		{"pm eco: list_deps: the PM exited", Warning{PM: "eco"}},
		{`registry "team" needs symposium-pm-gitregistry, which is not installed`, Warning{PM: "team"}},
		{`/h/config.toml:12: package manager "fix" from go x@v1 is not available`, Warning{File: "/h/config.toml", Line: 12}},
		{"pm npm: active_plugins: /w/node_modules/a/package.json:3: hooks must be an array", Warning{PM: "npm", File: "/w/node_modules/a/package.json", Line: 3}},
		{"workspace plugin /w/SYMPOSIUM.toml: invalid", Warning{}},
		{"registry reg (/r): entry x: SYMPOSIUM.toml:4: bad", Warning{PM: "reg", File: "SYMPOSIUM.toml", Line: 4}},
	} {
		got := warningOf(tc.msg)
		tc.want.Message = tc.msg
		if got != tc.want {
			t.Errorf("warningOf(%q) = %+v, want %+v", tc.msg, got, tc.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want arity
		code int
		ok   bool
		pos  string
		json bool
		err  string
	}{
		{[]string{"q", "--json"}, arity{1, 1, "QUERY"}, ExitOK, true, "q", true, ""},
		{[]string{"--json", "q"}, arity{1, 1, "QUERY"}, ExitOK, true, "q", true, ""},
		{[]string{"--", "--json"}, arity{1, 1, "QUERY"}, ExitOK, true, "--json", false, ""},
		{[]string{"a", "--json", "b"}, arity{0, -1, "[NAME...]"}, ExitOK, true, "a b", true, ""},
		{nil, arity{1, 1, "QUERY"}, ExitUsage, false, "", false, "symposium-pm t: missing QUERY\n"},
		{[]string{"m"}, arity{2, 2, "METHOD PARAMS"}, ExitUsage, false, "", false, "symposium-pm t: missing PARAMS\n"},
		{[]string{"a", "b"}, arity{1, 1, "QUERY"}, ExitUsage, false, "", false, `symposium-pm t: unexpected argument "b": this command takes QUERY` + "\n"},
		{[]string{"x"}, noArgs(), ExitUsage, false, "", false, `symposium-pm t: unexpected argument "x": this command takes no arguments, only flags` + "\n"},
		{[]string{"--nope"}, noArgs(), ExitUsage, false, "", false, "flag provided but not defined: -nope\n"},
		{[]string{"a", "--nope"}, arity{1, 1, "QUERY"}, ExitUsage, false, "", false, "flag provided but not defined: -nope\nUsage\n"},
		{[]string{"--json=maybe"}, noArgs(), ExitUsage, false, "", false, `invalid boolean value "maybe" for -json: parse error` + "\nUsage\n"},
	} {
		var out, errOut bytes.Buffer
		fs := flagSet("t", "Usage\n", &errOut)
		asJSON := fs.Bool("json", false, "")
		code, ok := parseArgs(fs, tc.args, tc.want, &out)
		if code != tc.code || ok != tc.ok || (ok && strings.Join(fs.Args(), " ") != tc.pos) || *asJSON != tc.json {
			t.Errorf("%q: code %d ok %v args %q json %v", tc.args, code, ok, fs.Args(), *asJSON)
		}
		if first, _, _ := strings.Cut(errOut.String(), "\n"); tc.err != "" && first+"\n" != tc.err && !strings.HasPrefix(errOut.String(), tc.err) {
			t.Errorf("%q: stderr %q, want it to start with %q", tc.args, errOut.String(), tc.err)
		}
		if out.Len() > 0 {
			t.Errorf("%q: stdout %q, want nothing", tc.args, out.String())
		}
	}
	// Help asked for, wherever it is among the arguments, is the usage on
	// stdout, and nothing on stderr.
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"q", "--help"}, {"--json", "-h", "q"}} {
		var out, errOut bytes.Buffer
		fs := flagSet("t", "Usage\n", &errOut)
		fs.Bool("json", false, "print JSON")
		code, ok := parseArgs(fs, args, arity{1, 1, "QUERY"}, &out)
		if code != ExitOK || ok || out.String() != "Usage\n  -json\n    \tprint JSON\n" || errOut.Len() > 0 {
			t.Errorf("%q: code %d ok %v\nstdout %q\nstderr %q", args, code, ok, out.String(), errOut.String())
		}
	}
}

// TestDiscoverWriteJSONIsMarshalIndent holds discover's streamed --json
// document to what printJSON writes (MarshalIndent and a newline), for
// empty, nil and full lists in every member.
func TestDiscoverWriteJSONIsMarshalIndent(t *testing.T) {
	plugins := []pluginJSON{
		{ID: protocol.PackageID{PM: "npm", Name: "a<b>&c", Version: "1.0.0"}, Name: "x", Root: "/w/node_modules/a", Source: "dependency", State: "enabled", Skills: 2},
		{ID: protocol.PackageID{PM: "cargo", Name: "d", Version: "0.1.0"}, Name: "d", Reason: "line\nbreak \u2028 \"quoted\""},
		{ID: protocol.PackageID{PM: "pypi", Name: "e"}, Name: "e", State: "needs-consent"},
	}
	warnings := []Warning{{PM: "npm", Message: "m <1>", File: "/w/package.json", Line: 3}, {Message: "plain"}}
	for name, doc := range map[string]discoverDoc{
		"empty":          {Version: JSONVersion, Plugins: []pluginJSON{}, Notes: []string{}},
		"nil lists":      {Version: JSONVersion},
		"one plugin":     {Version: JSONVersion, Plugins: plugins[:1], Warnings: []Warning{}, Notes: []string{"n"}},
		"full":           {Version: JSONVersion, Plugins: plugins, Warnings: warnings, Notes: []string{"a\tb", "<b> & \u2028", "to consent, add:\nauto-enable = [\n  {pm = \"npm\"}\n]"}},
		"warnings only":  {Version: 7, Plugins: []pluginJSON{}, Warnings: warnings},
		"consent hidden": {Version: JSONVersion, Plugins: plugins[2:], Consent: []consentChoice{{"pypi", "e"}}},
	} {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := printJSON(&want, doc); err != nil {
				t.Fatal(err)
			}
			if err := doc.writeJSON(&got); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("writeJSON wrote\n%s\nprintJSON\n%s", got.String(), want.String())
			}
		})
	}
}

// TestPrintJSONIsMarshalIndent holds printJSON to what every --json
// document has always been: json.MarshalIndent with two spaces, then a
// newline, HTML characters escaped as MarshalIndent escapes them.
func TestPrintJSONIsMarshalIndent(t *testing.T) {
	doc := discoverDoc{Version: JSONVersion, Plugins: []pluginJSON{
		{ID: protocol.PackageID{PM: "npm", Name: "a<b>&c", Version: "1.0.0"}, Name: "x", Root: "/w/node_modules/a", Source: "dependency", State: "enabled", Skills: 2},
		{ID: protocol.PackageID{PM: "cargo", Name: "d", Version: "0.1.0"}, Name: "d", Reason: "line\nbreak \u2028 \"quoted\""},
	}, Notes: []string{}}
	want, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := printJSON(&got, doc); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want)+"\n" {
		t.Errorf("printJSON wrote\n%s\nwant\n%s", got.String(), want)
	}
}
