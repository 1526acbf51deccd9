package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// registry is a directory laid out like Symposium's recommendations
// registry, with valid plugins, bare skills, nested groups and manifests
// still using retired keys.
const registry = "../../manifest/testdata/registry"

type cmdFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

func runCmd(t *testing.T, cmd cmdFunc, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cmd(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The whole registry: every problem with its file, line, field and the
// precise migration hint, and exit status 1.
func TestValidateRegistry(t *testing.T) {
	code, out, errOut := runCmd(t, cmdValidate, registry)
	r := registry + "/"
	want := strings.Join([]string{
		registry + ": checked as a registry (origin registry)",
		r + "bad-skill-in-group/skills/broken/SKILL.md:1: description: SKILL.md needs a non-empty description",
		r + "bad-yaml/SKILL.md:3: front matter is not valid YAML: did not find expected key",
		r + `empty-group/SYMPOSIUM.toml:4: skills[0]: warning: skill group "missing-dir" contains no SKILL.md`,
		r + `installation-typo/SYMPOSIUM.toml:6: installations[0].source: installation "tool" has unknown source "binary"; expected "cargo" or "github", or no source for a program already on disk (Symposium would silently drop the source)`,
		r + `legacy-crates/SYMPOSIUM.toml:2: crates: crates was renamed: write depends-on = ["dial9-tokio-telemetry", "dial9"]`,
		r + `legacy-crates/SYMPOSIUM.toml:5: skills[0].crates: crates was renamed: write depends-on = ["dial9-viewer"]`,
		r + `legacy-plugins-crate/SYMPOSIUM.toml:5: plugins[0].source.crate: source.crate was renamed: write source.cargo = "error-battery-pack"`,
		r + `legacy-predicate/SYMPOSIUM.toml:2: predicates[0]: "crate(serde)": crate(...) was renamed; write depends-on(serde)`,
		r + "legacy-skill-crates/SKILL.md:4: crates: crates was renamed: write depends-on: serde",
		r + `legacy-string-source/SYMPOSIUM.toml:5: skills[0].source: source = "crate": string sources are no longer supported; reference a crate's plugin with [[plugins]] source.cargo = "<crate>" instead, or set source.path for a directory`,
		r + `legacy-where/SYMPOSIUM.toml:1: where: where.crates was retired: write depends-on = ["rtk"]`,
		r + "misnamed/Symposium.toml: the file must be named exactly SYMPOSIUM.toml; Symposium does not read this directory as a plugin",
		r + `standalone/notes/SKILL.md: warning: plugin "team-notes" is dormant: nothing in it mentions a dependency (depends-on) or calls a custom predicate, so it stays inactive until a [plugins] use entry names it`,
		"checked 17 plugins: 7 valid, 10 invalid, 2 warnings",
		"",
	}, "\n")
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
}

func TestValidateRegistryJSON(t *testing.T) {
	code, out, _ := runCmd(t, cmdValidate, "--json", registry)
	if code != ExitFailure {
		t.Errorf("exit %d", code)
	}
	var res struct {
		Valid   bool `json:"valid"`
		Plugins []struct {
			File        string `json:"file"`
			Entry       string `json:"entry"`
			Kind        string `json:"kind"`
			Name        string `json:"name"`
			Valid       bool   `json:"valid"`
			RequiresUse bool   `json:"requires_use"`
			Skills      []struct {
				File, Name string
			} `json:"skills"`
			Problems []struct {
				Line    int    `json:"line"`
				Field   string `json:"field"`
				Message string `json:"message"`
				Warning bool   `json:"warning"`
			} `json:"problems"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Valid || len(res.Plugins) != 17 {
		t.Fatalf("valid=%v plugins=%d", res.Valid, len(res.Plugins))
	}
	byEntry := map[string]int{}
	for i, p := range res.Plugins {
		byEntry[p.Entry] = i
	}
	gizmo := res.Plugins[byEntry["gizmo"]]
	if !gizmo.Valid || gizmo.Name != "gizmo-tools" || gizmo.Kind != "plugin" || len(gizmo.Skills) != 1 || gizmo.Skills[0].Name != "gizmo-wiring" {
		t.Errorf("gizmo: %+v", gizmo)
	}
	if p := res.Plugins[byEntry["nested/group/widget"]]; !p.Valid || p.Name != "widget" || len(p.Skills) != 1 {
		t.Errorf("nested entry: %+v", p)
	}
	if p := res.Plugins[byEntry["standalone/notes"]]; !p.Valid || !p.RequiresUse || p.Kind != "skill" {
		t.Errorf("dormant bare skill: %+v", p)
	}
	if p := res.Plugins[byEntry["standalone/deeper/still"]]; !p.Valid || p.RequiresUse || p.Name != "deep-skill" {
		t.Errorf("deep bare skill: %+v", p)
	}
	if p := res.Plugins[byEntry["legacy-where"]]; p.Valid || p.Problems[0].Line != 1 || p.Problems[0].Field != "where" {
		t.Errorf("legacy-where: %+v", p)
	}
}

func TestValidate(t *testing.T) {
	good := `name = "good"
depends-on = "serde"

[[skills]]
source.path = "skills"
`
	tests := []struct {
		name  string
		files map[string]string
		args  []string // paths relative to the temp dir, and flags
		code  int
		out   string // expected stdout, with $DIR for the temp dir
		err   string // substring of stderr
		as    string // the "checked as" line, with $DIR (others are not compared)
	}{
		{
			name:  "valid plugin directory",
			files: map[string]string{"p/SYMPOSIUM.toml": good, "p/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n"},
			args:  []string{"p"},
			code:  ExitOK,
			out:   "checked 1 plugin: 1 valid, 0 invalid, 0 warnings\n",
		},
		{
			name:  "manifest file",
			files: map[string]string{"SYMPOSIUM.toml": "version = \"1\"\n" + good + "path = \".\"\n"},
			args:  []string{"SYMPOSIUM.toml"},
			code:  ExitFailure,
			out:   "$DIR/SYMPOSIUM.toml:1: version: unknown key \"version\" in a manifest\n$DIR/SYMPOSIUM.toml:7: skills[0].path: unknown key \"path\" in a skills group; write source.path\nchecked 1 plugin: 0 valid, 1 invalid, 0 warnings\n",
		},
		{
			name:  "registry file rejects defaults",
			files: map[string]string{"m.toml": "name = \"m\"\ndepends-on = \"x\"\n[defaults]\nskills = false\n"},
			args:  []string{"m.toml"},
			code:  ExitFailure,
			out:   "$DIR/m.toml:3: defaults: [defaults] is not allowed in a registry plugin manifest; registry plugins get no default skill groups, declare [[skills]] instead\nchecked 1 plugin: 0 valid, 1 invalid, 0 warnings\n",
		},
		{
			name:  "package origin accepts defaults and names the plugin",
			files: map[string]string{"m.toml": "[defaults]\nskills = false\n"},
			args:  []string{"--origin", "package", "--name", "crate-x", "m.toml"},
			code:  ExitOK,
			out:   "checked 1 plugin: 1 valid, 0 invalid, 0 warnings\n",
		},
		{
			name:  "workspace origin appends skills/ and warns when empty",
			files: map[string]string{"member/SYMPOSIUM.toml": "name = \"member\"\n"},
			args:  []string{"--origin", "workspace", "member"},
			code:  ExitOK,
			as:    "$DIR/member: checked as a registry entry (origin workspace)",
			out:   "$DIR/member/SYMPOSIUM.toml: skills[0]: warning: skill group \"skills\" contains no SKILL.md\nchecked 1 plugin: 1 valid, 0 invalid, 1 warning\n",
		},
		{
			name:  "JSON wire manifest",
			files: map[string]string{"wire.json": `{"name":"w","depends-on":"serde","hooks":[{"name":"h","event":"Stop","command":"missing"}]}`},
			args:  []string{"wire.json"},
			code:  ExitFailure,
			out:   "$DIR/wire.json: hooks[0].command: references unknown installation \"missing\"\nchecked 1 plugin: 0 valid, 1 invalid, 0 warnings\n",
		},
		{
			name:  "JSON syntax error with line and column",
			files: map[string]string{"wire.json": "{\n  \"name\": \"w\",\n}\n"},
			args:  []string{"wire.json"},
			code:  ExitFailure,
			out:   "$DIR/wire.json:3: column 1: invalid JSON: invalid character '}' looking for beginning of object key string\nchecked 1 plugin: 0 valid, 1 invalid, 0 warnings\n",
		},
		{
			name:  "bare SKILL.md file",
			files: map[string]string{"tokio-tips/SKILL.md": "---\nname: tokio-tips\ndescription: d\ndepends-on: tokio\n---\n"},
			args:  []string{"tokio-tips/SKILL.md"},
			code:  ExitOK,
			as:    "$DIR/tokio-tips/SKILL.md: checked as a manifest file (origin registry)",
			out:   "checked 1 plugin: 1 valid, 0 invalid, 0 warnings\n",
		},
		{
			name:  "TOML syntax error",
			files: map[string]string{"bad.toml": "name = \"x\"\n[[hooks]\n"},
			args:  []string{"bad.toml"},
			code:  ExitFailure,
			out:   "$DIR/bad.toml:2: invalid TOML: expected ']]' to close array table name\nchecked 1 plugin: 0 valid, 1 invalid, 0 warnings\n",
		},
		{
			name:  "root is an entry is fine for a plugin dir, an empty registry is not",
			files: map[string]string{"empty/README.md": "nothing"},
			args:  []string{"empty"},
			code:  ExitFailure,
			out:   "$DIR/empty: no plugins found: a registry holds directories with SYMPOSIUM.toml or SKILL.md\nchecked 0 plugins: 0 valid, 0 invalid, 0 warnings, 1 path not checked\n",
		},
		{
			name: "missing path",
			args: []string{"nope"},
			code: ExitFailure,
			out:  "$DIR/nope: no such file or directory\nchecked 0 plugins: 0 valid, 0 invalid, 0 warnings, 1 path not checked\n",
		},
		{
			name:  "several paths",
			files: map[string]string{"a/SYMPOSIUM.toml": good, "a/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n", "b/SKILL.md": "---\nname: b\ndescription: d\ndepends-on: b\n---\n"},
			args:  []string{"a", "b"},
			code:  ExitOK,
			out:   "checked 2 plugins: 2 valid, 0 invalid, 0 warnings\n",
		},
		{name: "no path", args: nil, code: ExitUsage, err: "missing PATH..."},
		{name: "bad origin", args: []string{"--origin", "moon", "x"}, code: ExitUsage, err: `unknown origin "moon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			var args []string
			flagValue := false
			for _, a := range tt.args {
				if strings.HasPrefix(a, "-") || flagValue {
					args = append(args, a)
					flagValue = a == "--origin" || a == "--name"
					continue
				}
				args = append(args, filepath.Join(dir, a))
			}
			code, out, errOut := runCmd(t, cmdValidate, args...)
			var kept, as []string
			for _, l := range strings.SplitAfter(out, "\n") {
				if strings.Contains(l, ": checked as ") {
					as = append(as, strings.TrimSuffix(l, "\n"))
				} else {
					kept = append(kept, l)
				}
			}
			if want := strings.ReplaceAll(tt.as, "$DIR", dir); tt.as != "" && !slices.Contains(as, want) {
				t.Errorf("no line %q in\n%s", want, out)
			}
			out = strings.Join(kept, "")
			if code != tt.code {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, tt.code, out, errOut)
			}
			if want := strings.ReplaceAll(tt.out, "$DIR", dir); tt.out != "" && out != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
			}
			if !strings.Contains(errOut, tt.err) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.err)
			}
		})
	}
}

func TestManifest(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"SYMPOSIUM.toml":    "name = \"gizmo\"\ndepends-on = \"gizmo>=0.4\"\nfuture = 1\n\n[[skills]]\nsource.path = \"guidance\"\n",
		"bad.toml":          "name = 3\n",
		"wire.json":         `{"predicates":["env(X)"],"name":"w"}`,
		"my-skill/SKILL.md": "---\nname: serde-guidance\ndescription: d\ndepends-on: serde\n---\n",
		"broken/SKILL.md":   "---\nname: x\n---\n",
		"crate/Cargo.toml": `[package]
name = "gizmo"
version = "0.4.0"

[package.metadata.symposium]
depends-on = "gizmo-core"

[[package.metadata.symposium.skills]]
source.path = "agent-notes"
`,
		"crate/SYMPOSIUM.toml":   "[[plugins]]\nsource.cargo = \"gizmo-extras\"\n",
		"badcrate/Cargo.toml":    "[package]\nname = \"bad\"\n[package.metadata.symposium]\nskills = \"not-an-array\"\n",
		"optout/Cargo.toml":      "[package]\nname = \"optout\"\n[package.metadata.symposium.defaults]\nskills = false\n",
		"npm/package.json":       `{"name":"@acme/widget","version":"1.0.0","symposium":{"depends-on":["react"]}}`,
		"py/pyproject.toml":      "[project]\nname = \"Zope.Interface\"\n[tool.symposium]\npredicates = [\"env(X)\"]\n",
		"py/SYMPOSIUM.toml":      "name = 3\n",
		"pkgfile/SYMPOSIUM.toml": "[[skills]]\nsource.path = \"docs\"\n",
		"noname/package.json":    `{"version":"1.0.0"}`,
		"syntax/Cargo.toml":      "[package]\nname = \"syntax\"\nversion = \n",
		"layer/Cargo.toml":       "[package]\nname = \"layer\"\n",
		"layer/SYMPOSIUM.toml":   "name = \"x\"\n[[skills]\n",
	})
	p := func(rel string) string { return filepath.Join(dir, rel) }
	tests := []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{"toml", []string{p("SYMPOSIUM.toml")}, ExitOK,
			`{"depends-on":"gizmo>=0.4","future":1,"name":"gizmo","skills":[{"source":{"path":"guidance"}}]}` + "\n", ""},
		{"pretty", []string{"--pretty", p("wire.json")}, ExitOK,
			"{\n  \"name\": \"w\",\n  \"predicates\": [\n    \"env(X)\"\n  ]\n}\n", ""},
		{"bare skill", []string{p("my-skill/SKILL.md")}, ExitOK,
			`{"depends-on":["serde"],"name":"serde-guidance","skills":[{"source":{"path":"."}}]}` + "\n", ""},
		{"type error", []string{p("bad.toml")}, ExitFailure, "", p("bad.toml") + ":1: name: expected a string, found an integer"},
		{"bad skill", []string{p("broken/SKILL.md")}, ExitFailure, "", "line 1: description: SKILL.md needs a non-empty description"},
		{"missing", []string{p("nope.toml")}, ExitFailure, "", "symposium-pm manifest: " + p("nope.toml") + ": file does not exist\n"},
		{"usage", nil, ExitUsage, "", "Usage: symposium-pm manifest"},
		{"cargo crate", []string{p("crate/Cargo.toml")}, ExitOK,
			`{"depends-on":"gizmo-core","name":"gizmo","plugins":[{"source":{"cargo":"gizmo-extras"}}],"skills":[{"source":{"path":"agent-notes"}},{"source":{"path":"skills"}}]}` + "\n", ""},
		{"cargo bad metadata layer dropped", []string{p("badcrate/Cargo.toml")}, ExitOK,
			`{"name":"bad","skills":[{"source":{"path":"skills"}}]}` + "\n",
			"warning: Cargo.toml [package.metadata.symposium]: layer ignored: skills: expected an array of tables, found a string"},
		{"cargo opt-out", []string{p("optout/Cargo.toml")}, ExitOK,
			`{"defaults":{"skills":false},"name":"optout"}` + "\n", ""},
		{"npm package", []string{p("npm/package.json")}, ExitOK,
			`{"depends-on":["react"],"name":"@acme/widget","skills":[{"source":{"path":"skills"}}]}` + "\n", ""},
		{"pypi project, bad SYMPOSIUM.toml dropped", []string{p("py/pyproject.toml")}, ExitOK,
			`{"name":"zope-interface","predicates":["env(X)"],"skills":[{"source":{"path":"skills"}}]}` + "\n",
			"py/SYMPOSIUM.toml: layer ignored: name: expected a string, found an integer"},
		{"--package", []string{"--package", "docs-pkg", p("pkgfile/SYMPOSIUM.toml")}, ExitOK,
			`{"name":"docs-pkg","skills":[{"source":{"path":"docs"}},{"source":{"path":"skills"}}]}` + "\n", ""},
		{"Cargo.toml syntax error names file and line", []string{p("syntax/Cargo.toml")}, ExitFailure, "",
			p("syntax/Cargo.toml") + ":3: invalid TOML: "},
		{"SYMPOSIUM.toml syntax error drops the layer, naming its line", []string{p("layer/Cargo.toml")}, ExitOK,
			`{"name":"layer","skills":[{"source":{"path":"skills"}}]}` + "\n",
			p("layer/SYMPOSIUM.toml") + ": layer ignored: line 2: invalid TOML: "},
		{"package without a name", []string{p("noname/package.json")}, ExitFailure, "", "package.json names no package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, cmdManifest, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if out != tt.out {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tt.out)
			}
			if !strings.Contains(errOut, tt.err) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.err)
			}
		})
	}
}
