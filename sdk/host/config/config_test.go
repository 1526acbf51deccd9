package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/disktree"
)

func TestParse(t *testing.T) {
	c, err := Parse("c.toml", []byte(`
auto-sync = true
hook-scope = "project"
[telemetry]
enabled = false
[[agent]]
name = "claude"
[logging]
level = "debug"

[defaults]
user-plugins = false

[[package-manager]]
name = "go"
command = "symposium-pm-go"
args = ["--fast"]
env = { GOFLAGS = "-mod=mod" }

[[registry]]
name = "team"
git = "https://example.com/team/plugins"
ref = "stable"
auto-update = false

[[registry]]
name = "local"
path = "mine"

[[registry]]
name = "checkout"
git = "../repos/plugins"

[plugins]
disable = ["chatty", { pm = "cargo", name = "noisy" }]
auto-enable = [{ pm = "npm", name = "*" }]
use = [{ name = "x", workspace = "/w" }]
`), "/home/u/.symposium")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Recommendations || c.UserPlugins {
		t.Errorf("defaults: recommendations %v, user-plugins %v", c.Recommendations, c.UserPlugins)
	}
	if len(c.PackageManagers) != 1 || c.PackageManagers[0].Env["GOFLAGS"] != "-mod=mod" || c.PackageManagers[0].Args[0] != "--fast" {
		t.Errorf("package managers: %+v", c.PackageManagers)
	}
	var names []string
	for _, r := range c.Registries {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ","); got != "symposium-recommendations,team,local,checkout" {
		t.Errorf("registries %s", got)
	}
	if r := c.Registries[1]; r.AutoUpdates() || r.Ref != "stable" || r.Pos.Line != 20 {
		t.Errorf("team registry: %+v", r)
	}
	if p := c.Registries[2].Path; p != "/home/u/.symposium/mine" {
		t.Errorf("relative path resolved to %s", p)
	}
	if g := c.Registries[3].Git; g != "/home/u/repos/plugins" {
		t.Errorf("relative git path resolved to %s", g)
	}
	if len(c.Plugins.Disable) != 2 || c.Plugins.Disable[1].PM != "cargo" || c.Plugins.Use[0].Workspace != "/w" {
		t.Errorf("plugins: %+v", c.Plugins)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"syntax", "a = 1\n[plugins\n", "c.toml:2: expected ']' to close table name"},
		{"registry without source", "\n[[registry]]\nname = \"r\"\n", `c.toml:2: [[registry]] "r" needs git or path`},
		{"registry both", "[[registry]]\nname = \"r\"\ngit = \"x\"\npath = \"y\"\n", "has both git and path"},
		{"registry typo", "[[registry]]\nname = \"r\"\ngti = \"x\"\n", `c.toml:3: [[registry]] has no key "gti"; did you mean "git"?`},
		{"pm without command", "[[package-manager]]\nname = \"p\"\n", `c.toml:1: [[package-manager]] "p" needs a command`},
		{"pm typo", "[[package-manager]]\nname = \"p\"\ncommand = \"x\"\nargz = []\n", `c.toml:4: [[package-manager]] has no key "argz"; did you mean "args"?`},
		{"plugins typo", "\n\n[plugins]\nenable = []\n", `c.toml:4: [plugins] has no key "enable"`},
		{"selector type", "[plugins]\ndisable = [1]\n", "plugins.disable[0]: must be a name or a {pm, name} table"},
		{"selector key", "[plugins]\ndisable = [{ pm = \"a\", nam = \"b\" }]\n", `unknown key "nam"`},
		{"workspace outside use", "[plugins]\ndisable = [{ name = \"b\", workspace = \"/w\" }]\n", "workspace is only allowed in use entries"},
		{"relative workspace", "[plugins]\nuse = [{ name = \"b\", workspace = \"rel/w\" }]\n", `workspace must be an absolute path, not "rel/w"`},
		{"pm kind", "[[package-manager]]\nname = \"p\"\ncommand = \"x\"\nkind = \"trusted\"\n", `kind must be "ecosystem" or "registry"`},
		{"invalid value in a key Symposium reads", "[hooks]\ntimeout = 99999999999999999999\n", "c.toml:2: decimal number is too large"},
		{"registry not an array of tables", "a = 1\nregistry = \"x\"\n", "c.toml:2: registry must be an array of tables ([[registry]])"},
		{"registry array with a string", "registry = [{ name = \"r\", git = \"g\" }, \"x\"]\n", "c.toml:1: registry must be an array of tables ([[registry]])"},
		{"plugins written as an array of tables", "\n[[plugins]]\n", "c.toml:2: plugins must be a table ([plugins])"},
		{"defaults not a table", "a = 1\ndefaults = false\n", "c.toml:2: defaults must be a table ([defaults])"},
		{"package-manager as a dotted key", "\npackage-manager.name = \"p\"\n", "c.toml:2: package-manager must be an array of tables ([[package-manager]])"},
		{"defaults type", "[defaults]\nuser-plugins = \"no\"\n", "c.toml:2: [defaults] user-plugins must be true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tc.toml), "/d")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestSelectorMatches: a name with '*' in it is a glob in which '*' is the
// only special character and runs across '/' (configuration.md §2.5).
func TestSelectorMatches(t *testing.T) {
	for _, tc := range []struct {
		sel          Selector
		pm, name, ws string
		want         bool
	}{
		{Selector{Name: "serde"}, "cargo", "serde", "/w", true},
		{Selector{Name: "serde"}, "npm", "serde", "/w", true},
		{Selector{PM: "cargo", Name: "serde"}, "npm", "serde", "/w", false},
		{Selector{Name: "foo_bar"}, "cargo", "foo-bar", "/w", true},
		{Selector{Name: "*"}, "x", "anything", "/w", true},
		{Selector{Name: "rust-*"}, "reg", "rust-errors", "/w", true},
		{Selector{Name: "rust-*"}, "reg", "python-x", "/w", false},
		// '*' runs across an npm scope's '/'; nothing else is special.
		{Selector{Name: "*-skills"}, "npm", "@acme/gizmo-skills", "/w", true},
		{Selector{PM: "npm", Name: "@acme/*"}, "npm", "@acme/gizmo", "/w", true},
		{Selector{Name: "*-skills"}, "npm", "@acme/gizmo-tools", "/w", false},
		{Selector{Name: "a*b*c"}, "reg", "a-x-b-y-c", "/w", true},
		{Selector{Name: "a*b*c"}, "reg", "a-c-b", "/w", false},
		{Selector{Name: "ab*ba"}, "reg", "aba", "/w", false},
		{Selector{Name: "f?o*"}, "reg", "foo-x", "/w", false},
		{Selector{Name: "f?o*"}, "reg", "f?o-x", "/w", true},
		{Selector{Name: "[a]*"}, "reg", "[a]-x", "/w", true},
		{Selector{Name: "x", Workspace: "/w/"}, "reg", "x", "/w", true},
		{Selector{Name: "x", Workspace: "/other"}, "reg", "x", "/w", false},
	} {
		if got := tc.sel.Matches(tc.pm, tc.name, tc.ws); got != tc.want {
			t.Errorf("%v matches (%s, %s, %s) = %v, want %v", tc.sel, tc.pm, tc.name, tc.ws, got, tc.want)
		}
	}
}

func TestLoadLocations(t *testing.T) {
	home := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if d := UserDir(env(map[string]string{"SYMPOSIUM_HOME": "/s", "XDG_CONFIG_HOME": "/x"})); d != "/s" {
		t.Errorf("SYMPOSIUM_HOME: %s", d)
	}
	if d := UserDir(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": home})); d != "/x/symposium" {
		t.Errorf("XDG_CONFIG_HOME: %s", d)
	}
	if d := UserDir(env(map[string]string{"HOME": home})); d != filepath.Join(home, ".symposium") {
		t.Errorf("HOME: %s", d)
	}
	if d := CacheDir(env(map[string]string{"XDG_CACHE_HOME": "/c", "HOME": home})); d != "/c/symposium" {
		t.Errorf("cache: %s", d)
	}

	// The workspace file's entries are appended to the user's.
	os.MkdirAll(filepath.Join(home, ".symposium"), 0o755)
	os.WriteFile(filepath.Join(home, ".symposium", FileName), []byte("[plugins]\ndisable = [\"a\"]\n"), 0o644)
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".symposium"), 0o755)
	os.WriteFile(filepath.Join(ws, WorkspaceFile), []byte("[plugins]\ndisable = [\"b\"]\n"), 0o644)
	c, err := Load(env(map[string]string{"HOME": home}), ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plugins.Disable) != 2 || c.Plugins.Disable[1].Name != "b" || len(c.Files) != 2 {
		t.Errorf("merged: %+v from %v", c.Plugins.Disable, c.Files)
	}
	if c.Plugins.Disable[1].Pos.File != filepath.Join(ws, WorkspaceFile) {
		t.Errorf("position %v", c.Plugins.Disable[1].Pos)
	}
}

// TestStrict: every unknown table or key in a config file is an error with
// its line and a did-you-mean; [plugins] keys at the top level say where
// they belong.
func TestStrict(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"registry typo", "[defaults]\nuser-plugins = false\n\n[registy]\nname = \"r\"\n", `c.toml:4: unknown table [registy]; did you mean [[registry]]?`},
		{"registry typo as array", "[[registy]]\nname = \"r\"\n", `c.toml:1: unknown table [[registy]]; did you mean [[registry]]?`},
		{"plugin for plugins", "\n[plugin]\nuse = [\"x\"]\n", `c.toml:2: unknown table [plugin]; did you mean [plugins]?`},
		{"defaults key", "[defaults]\nfoo = 1\n", `c.toml:2: [defaults] has no key "foo" (keys: symposium-recommendations, user-plugins)`},
		{"defaults typo", "[defaults]\nuser-plugin = false\n", `c.toml:2: [defaults] has no key "user-plugin"; did you mean "user-plugins"?`},
		{"unknown top-level key", "\nwhatever = 1\n", `c.toml:2: unknown key "whatever" (known: auto-sync,`},
		{"auto-enable at the top", "# consent\nauto-enable = [{pm = \"cargo\", name = \"my-skills\"}]\n", `c.toml:2: auto-enable belongs in the [plugins] table: write it under a [plugins] header`},
		{"auto-enable after defaults", "[defaults]\nuser-plugins = false\nauto-enable = [\"x\"]\n", `c.toml:3: auto-enable belongs in the [plugins] table, not [defaults]: put a [plugins] header on a line of its own before it`},
		{"use at the top", "use = [\"x\"]\n", `c.toml:1: use belongs in the [plugins] table`},
		{"disable at the top", "disable = [\"x\"]\n", `c.toml:1: disable belongs in the [plugins] table`},
		{"plugins typo", "[plugins]\nauto-enabel = []\n", `c.toml:2: [plugins] has no key "auto-enabel"; did you mean "auto-enable"?`},
		{"hook-scope value", "hook-scope = \"local\"\n", `c.toml:1: hook-scope must be one of "global", "project", not "local"`},
		{"telemetry key", "[telemetry]\nenable = true\n", `c.toml:2: [telemetry] has no key "enable"; did you mean "enabled"?`},
		{"agent key", "[[agent]]\nname = \"claude\"\n[[agent]]\nnmae = \"codex\"\n", `c.toml:4: [[agent]] has no key "nmae"; did you mean "name"?`},
		{"pm source key", "[[package-manager]]\nname = \"p\"\nsource = \"go\"\nmodul = \"x\"\n", `c.toml:4: [[package-manager]] has no key "modul"; did you mean "module"?`},
		{"selector key line", "[plugins]\nuse = [\n  \"a\",\n  { nam = \"b\" },\n]\n", `c.toml:4: plugins.use[1]: unknown key "nam"; did you mean "name"?`},
		{"registry key in an inline array", "registry = [{ name = \"r\", gti = \"x\" }]\n", `c.toml:1: [[registry]] has no key "gti"`},
		{"pm env table", "[[package-manager]]\nname = \"a\"\ncommand = \"x\"\n[[package-manager]]\nname = \"p\"\ncommand = \"x\"\n[package-manager.env]\nA = 1\n", `c.toml:7: [[package-manager]] env.A must be a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tc.toml), "/d")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestStrictLineOrder: every problem of a file is reported, in line order.
func TestStrictLineOrder(t *testing.T) {
	_, err := Parse("c.toml", []byte("[registy]\n[defaults]\nfoo = 1\nbar = 2\n[plugin]\n"), "/d")
	if err == nil {
		t.Fatal("no error")
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		lines = append(lines, strings.SplitN(l, ":", 3)[1])
	}
	if got := strings.Join(lines, ","); got != "1,3,4,5" {
		t.Errorf("lines %s in\n%v", got, err)
	}
}

// TestStrictReportsEveryTable: a key refused by the first check does not
// hide the problems of the tables that passed it; those are decoded and
// their problems reported in the same error, each once, in line order.
func TestStrictReportsEveryTable(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       []string // each problem's text, in line order
	}{
		{"unknown key, then a registry and a pm", "bogus = 1\n\n[[package-manager]]\nname = \"p\"\ncargo = 1\n\n[[registry]]\nname = \"team\"\n",
			[]string{`c.toml:1: unknown key "bogus"`, `c.toml:5: [[package-manager]] has no key "cargo"`, `c.toml:7: [[registry]] "team" needs git or path`}},
		{"defaults key, then plugins", "[defaults]\nuser-plugin = false\n\n[plugins]\nuse = [{ nam = \"b\" }]\n",
			[]string{`c.toml:2: [defaults] has no key "user-plugin"`, `c.toml:5: plugins.use[0]: unknown key "nam"`}},
		{"a refused table is not decoded again", "registry = 1\nplugin-source = [{ name = \"s\" }]\n",
			[]string{`c.toml:1: registry must be an array of tables`, `c.toml:2: [[plugin-source]] "s" needs git or path`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tc.toml), "/d")
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d is %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestUnknownPMs(t *testing.T) {
	c, err := Parse("c.toml", []byte("[[registry]]\nname = \"team\"\npath = \"p\"\n[plugins]\nauto-enable = [{pm = \"crago\", name = \"x\"}, {pm = \"cargo\", name = \"y\"}]\nuse = [{pm = \"team\", name = \"z\"}, {pm = \"zzz\", name = \"w\"}]\n"), "/d")
	if err != nil {
		t.Fatal(err)
	}
	ws := c.UnknownPMs("cargo", "npm", "pypi", "local")
	var got []string
	for _, w := range ws {
		got = append(got, w.Error())
	}
	want := []string{
		`c.toml:5: [plugins] auto-enable names pm "crago", which is no package manager or registry, so it matches nothing; did you mean "cargo"?`,
		`c.toml:6: [plugins] use names pm "zzz", which is no package manager or registry, so it matches nothing (known: cargo, npm, pypi, local, symposium-recommendations, user-plugins, team)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPositions(t *testing.T) {
	doc := "a = 1\n[t]\nb.c = 2\n[[arr]]\nx = 1\n[[arr]]\n\ny = [\n 1,\n { z = 3 },\n]\n"
	p := newPositions("f", []byte(doc))
	for _, tc := range []struct {
		path []string
		line int
	}{
		{[]string{"a"}, 1}, {[]string{"t"}, 2}, {[]string{"t", "b", "c"}, 3},
		{[]string{"arr", "0"}, 4}, {[]string{"arr", "0", "x"}, 5}, {[]string{"arr", "1"}, 6},
		{[]string{"arr", "1", "y"}, 8}, {[]string{"arr", "1", "y", "0"}, 9}, {[]string{"arr", "1", "y", "1", "z"}, 10},
		{[]string{"nope"}, 0}, {[]string{"t", "nope"}, 2},
	} {
		if got := p.at(tc.path...).Line; got != tc.line {
			t.Errorf("%v: line %d, want %d", tc.path, got, tc.line)
		}
	}
}

// TestLoadBounded: a configuration file is read with bounds, as the
// workspace's comes with a repository: a FIFO without a writer is an error
// at once (os.ReadFile waited for a writer forever), so is a device or a
// file over MaxFileSize (which os.ReadFile read whole), each naming the
// file and the cause. Links are followed wherever they lead, as a user's
// file is often a link into a dotfiles repository.
func TestLoadBounded(t *testing.T) {
	env := func(home string) func(string) string {
		return func(k string) string { return map[string]string{"SYMPOSIUM_HOME": home}[k] }
	}
	big := "[plugins]\n" + strings.Repeat("#"+strings.Repeat(" ", 78)+"\n", MaxFileSize/80+1)
	dotfiles := disktree.Write(t, map[string]string{"symposium.toml": "[plugins]\ndisable = [\"a\"]\n"})
	for _, tc := range []struct {
		name        string
		home, ws    map[string]string
		file, cause string // the file named (under home or ws) and why, or "" when Load succeeds
		disabled    int
	}{
		{"workspace FIFO", nil, map[string]string{".symposium/config.toml": "fifo"},
			"ws/.symposium/config.toml", "not a regular file (a FIFO)", 0},
		{"user FIFO", map[string]string{"config.toml": "fifo"}, nil,
			"home/config.toml", "not a regular file (a FIFO)", 0},
		{"workspace over the cap", nil, map[string]string{".symposium/config.toml": big},
			"ws/.symposium/config.toml", fmt.Sprintf("%d bytes, over the size cap of %d bytes", len(big), MaxFileSize), 0},
		{"workspace a directory", nil, map[string]string{".symposium/config.toml": "dir"},
			"ws/.symposium/config.toml", "not a regular file (a directory)", 0},
		{"workspace link to a device", nil, map[string]string{".symposium/config.toml": "->/dev/zero"},
			"ws/.symposium/config.toml", "a link to /dev/zero: not a regular file (a character device)", 0},
		{"user link out of its directory", map[string]string{"config.toml": "->" + filepath.Join(dotfiles, "symposium.toml")}, nil,
			"", "", 1},
		{"absent", nil, nil, "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasSuffix(tc.name, "device") {
				if _, err := os.Stat("/dev/zero"); err != nil {
					t.Skip("no /dev/zero here")
				}
			}
			base := t.TempDir()
			home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
			for dir, files := range map[string]map[string]string{home: tc.home, ws: tc.ws} {
				if err := os.Rename(disktree.Write(t, files), dir); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Load(env(home), ws)
			if tc.cause == "" {
				if err != nil || len(c.Plugins.Disable) != tc.disabled {
					t.Fatalf("Load: %v, %d disabled, want no error and %d", err, len(c.Plugins.Disable), tc.disabled)
				}
				return
			}
			file := tc.file
			if !filepath.IsAbs(file) {
				file = filepath.Join(base, file)
			}
			if want := "cannot read the configuration: " + file + ": " + tc.cause; err == nil || err.Error() != want {
				t.Errorf("Load: %v, want %q", err, want)
			}
		})
	}
}
