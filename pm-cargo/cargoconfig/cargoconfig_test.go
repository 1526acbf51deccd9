package cargoconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
)

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCratesIO(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", ".cargo")
	ws := filepath.Join(root, "proj", "ws")
	none := func(string) string { return "" }

	c, err := Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.CratesIO(none); s.Index != CratesIOSparse || s.Name != "crates-io" {
		t.Errorf("default = %+v", s)
	}
	if s, _ := c.CratesIO(func(k string) string {
		if k == "CARGO_REGISTRIES_CRATES_IO_PROTOCOL" {
			return "git"
		}
		return ""
	}); s.Index != CratesIOGit {
		t.Errorf("git protocol = %+v", s)
	}

	write(t, filepath.Join(home, "config.toml"), "[source.crates-io]\nreplace-with = \"mirror\"\n[source.mirror]\nregistry = \"sparse+https://mirror.example/index/\"\n")
	c, _ = Load(ws, home)
	s, err := c.CratesIO(none)
	if u, ok := s.Sparse(); err != nil || !ok || u != "https://mirror.example/index/" || s.Name != "mirror" {
		t.Errorf("mirror = %+v %v", s, err)
	}

	// A project config nearer the workspace wins, and its directory source is
	// relative to the directory holding .cargo.
	write(t, filepath.Join(root, "proj", ".cargo", "config.toml"), "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n")
	c, _ = Load(ws, home)
	s, err = c.CratesIO(none)
	if err != nil || s.Kind != Directory || s.Dir != filepath.Join(root, "proj", "vendor") {
		t.Errorf("vendored = %+v %v", s, err)
	}
	if d := c.Directories(); len(d) != 1 || d[0] != filepath.Join(root, "proj", "vendor") {
		t.Errorf("Directories = %v", d)
	}
	if len(c.Files) != 2 || !strings.HasPrefix(c.Files[0], filepath.Join(root, "proj")) {
		t.Errorf("Files = %v", c.Files)
	}

	write(t, filepath.Join(ws, ".cargo", "config"), "[source.crates-io]\nreplace-with = \"loop\"\n[source.loop]\nreplace-with = \"crates-io\"\n")
	c, _ = Load(ws, home)
	if _, err := c.CratesIO(none); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("loop: %v", err)
	}
	write(t, filepath.Join(ws, ".cargo", "config"), "[source.crates-io]\nreplace-with = \"nowhere\"\n")
	c, _ = Load(ws, home)
	if _, err := c.CratesIO(none); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("undefined: %v", err)
	}
	write(t, filepath.Join(ws, ".cargo", "config"), "[source.crates-io]\nreplace-with = 1\n[registries.x]\nprotocol = true\n")
	_, err = Load(ws, home)
	want := filepath.Join(ws, ".cargo", "config") + ":2: source.crates-io.replace-with: expected a string, found an integer\n" +
		filepath.Join(ws, ".cargo", "config") + ":4: registries.x.protocol: expected a string, found a boolean"
	if err == nil || err.Error() != want {
		t.Errorf("wrong types: %v, want\n%s", err, want)
	}
	write(t, filepath.Join(ws, ".cargo", "config"), "[source.crates-io\n")
	if _, err := Load(ws, home); err == nil || !strings.Contains(err.Error(), filepath.Join(ws, ".cargo", "config")+":1") {
		t.Errorf("malformed: %v", err)
	}
}

// TestLegacyConfigWins: with both .cargo/config and .cargo/config.toml in
// one directory, cargo reads the extensionless config and warns ("both
// ... exist. Using .../config"); so does Load. One file linked to the
// other is read once, without a warning, as cargo does.
func TestLegacyConfigWins(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	legacy, modern := filepath.Join(ws, ".cargo", "config"), filepath.Join(ws, ".cargo", "config.toml")
	write(t, legacy, "[source.crates-io]\nreplace-with = \"va\"\n[source.va]\ndirectory = \"va\"\n")
	write(t, modern, "[source.crates-io]\nreplace-with = \"vb\"\n[source.vb]\ndirectory = \"vb\"\n")
	c, err := Load(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.CratesIO(nil)
	if err != nil || s.Dir != filepath.Join(ws, "va") {
		t.Errorf("crates-io = %+v, %v; want the directory source of %s", s, err, legacy)
	}
	if len(c.Files) != 1 || c.Files[0] != legacy {
		t.Errorf("Files = %v, want [%s]", c.Files, legacy)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Message, "both `"+legacy+"` and `"+modern+"` exist. Using `"+legacy+"`") {
		t.Errorf("Warnings = %+v", c.Warnings)
	}

	// CARGO_HOME is read the same way.
	home := filepath.Join(root, "home")
	write(t, filepath.Join(home, "config"), "[http]\nproxy = \"legacy:1\"\n")
	write(t, filepath.Join(home, "config.toml"), "[http]\nproxy = \"modern:1\"\n")
	if c, err = Load(filepath.Join(root, "elsewhere"), home); err != nil || c.HTTPProxy != "legacy:1" || len(c.Warnings) != 1 {
		t.Errorf("CARGO_HOME with both files: proxy %q, warnings %+v, %v", c.HTTPProxy, c.Warnings, err)
	}

	if err := os.Remove(legacy); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("config.toml", legacy); err != nil {
		t.Skip(err)
	}
	if c, err = Load(ws, ""); err != nil || len(c.Warnings) != 0 || len(c.Files) != 1 {
		t.Errorf("config linked to config.toml: files %v, warnings %+v, %v", c.Files, c.Warnings, err)
	}
	if s, _ := c.CratesIO(nil); s.Dir != filepath.Join(ws, "vb") {
		t.Errorf("config linked to config.toml: crates-io = %+v", s)
	}
}

// TestDirectoriesCargoBuildsFrom: Directories lists only the directory
// sources cargo builds from, those a replace-with chain from crates-io or
// from another replaced source (a vendored git dependency) ends at, in
// the same order every time: crates-io's first, then by source name.
func TestDirectoriesCargoBuildsFrom(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string // relative to the workspace
	}{
		{"unused sources are left out",
			"[source.crates-io]\nreplace-with = \"vb\"\n[source.va]\ndirectory = \"va\"\n[source.vb]\ndirectory = \"vb\"\n[source.vc]\ndirectory = \"vc\"\n",
			[]string{"vb"}},
		{"a chain through a mirror",
			"[source.crates-io]\nreplace-with = \"mid\"\n[source.mid]\nreplace-with = \"vend\"\n[source.vend]\ndirectory = \"vendor\"\n",
			[]string{"vendor"}},
		{"cargo vendor with git sources",
			"[source.crates-io]\nreplace-with = \"vendored-sources\"\n" +
				"[source.\"git+https://example.com/z\"]\ngit = \"https://example.com/z\"\nreplace-with = \"gitvend\"\n" +
				"[source.\"git+https://example.com/a\"]\ngit = \"https://example.com/a\"\nreplace-with = \"vendored-sources\"\n" +
				"[source.gitvend]\ndirectory = \"gv\"\n[source.vendored-sources]\ndirectory = \"vendor\"\n",
			[]string{"vendor", "gv"}},
		{"crates-io not replaced",
			"[source.va]\ndirectory = \"va\"\n", nil},
		{"replaced by a registry",
			"[source.crates-io]\nreplace-with = \"m\"\n[source.m]\nregistry = \"sparse+https://m.example/\"\n[source.va]\ndirectory = \"va\"\n", nil},
		{"a loop and an undefined name",
			"[source.crates-io]\nreplace-with = \"x\"\n[source.x]\nreplace-with = \"crates-io\"\n[source.g]\nreplace-with = \"nowhere\"\n[source.va]\ndirectory = \"va\"\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			write(t, filepath.Join(ws, ".cargo", "config.toml"), tt.config)
			for range 10 { // map order must not show
				c, err := Load(ws, "")
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, w := range tt.want {
					want = append(want, filepath.Join(ws, w))
				}
				if got := c.Directories(); !slices.Equal(got, want) {
					t.Fatalf("Directories = %v, want %v", got, want)
				}
			}
		})
	}
}

// TestConfigFileWarnings: cargo warns about a legacy extensionless config
// it reads, in a .cargo directory or in CARGO_HOME: alone, it "is
// deprecated in favor of `config.toml`"; beside a config.toml it is read
// instead ("both ... exist"). A config linked to config.toml, or the
// other way round, is one file read without a warning. Load warns exactly
// then, naming the file; each case is also given to `cargo metadata
// --offline --no-deps` when cargo is installed, whose warnings must agree.
func TestConfigFileWarnings(t *testing.T) {
	const cfg = "[http]\ntimeout = 30\n"
	tests := []struct {
		name  string
		files map[string]string // relative to the temporary directory; "->x" makes a link to x
		file  string            // the file the warning names; "" for none
		want  string            // a substring of the warning
	}{
		{"legacy config alone", map[string]string{"ws/.cargo/config": cfg}, "ws/.cargo/config", "is deprecated in favor of `config.toml`"},
		{"legacy config alone in an ancestor", map[string]string{".cargo/config": cfg}, ".cargo/config", "is deprecated in favor of `config.toml`"},
		{"legacy config alone in CARGO_HOME", map[string]string{"home/config": cfg}, "home/config", "is deprecated in favor of `config.toml`"},
		{"config.toml alone", map[string]string{"ws/.cargo/config.toml": cfg, "home/config.toml": cfg}, "", ""},
		{"both", map[string]string{"ws/.cargo/config": cfg, "ws/.cargo/config.toml": cfg}, "ws/.cargo/config.toml", "exist. Using `"},
		{"config linked to config.toml", map[string]string{"ws/.cargo/config.toml": cfg, "ws/.cargo/config": "->config.toml"}, "", ""},
		{"config.toml linked to config", map[string]string{"ws/.cargo/config": cfg, "ws/.cargo/config.toml": "->config"}, "", ""},
	}
	cargo, _ := exec.LookPath("cargo")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			write(t, filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
			write(t, filepath.Join(ws, "src", "lib.rs"), "")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range tt.files {
				p := filepath.Join(base, filepath.FromSlash(name))
				if target, ok := strings.CutPrefix(body, "->"); ok {
					if err := os.Symlink(target, p); err != nil {
						t.Skip(err)
					}
					continue
				}
				write(t, p, body)
			}
			c, err := Load(ws, home)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.file == "" && len(c.Warnings) != 0:
				t.Errorf("warnings %+v, want none", c.Warnings)
			case tt.file != "" && (len(c.Warnings) != 1 || c.Warnings[0].File != filepath.Join(base, filepath.FromSlash(tt.file)) ||
				!strings.Contains(c.Warnings[0].Message, tt.want) || !strings.Contains(c.Warnings[0].Message, c.Warnings[0].File)):
				t.Errorf("warnings %+v, want one about %s saying %q and naming it", c.Warnings, tt.file, tt.want)
			}
			if cargo == "" {
				return
			}
			env := &cargotest.Env{Cargo: cargo, CargoHome: home, Vars: []string{"CARGO_HOME=" + home, "CARGO_TERM_COLOR=never"}}
			if os.Getenv("RUSTUP_HOME") == "" {
				if h, err := os.UserHomeDir(); err == nil {
					env.Vars = append(env.Vars, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
				}
			}
			cmd := exec.Command(cargo, "metadata", "--offline", "--no-deps", "--format-version", "1")
			cmd.Dir, cmd.Env = ws, env.Environ()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("cargo metadata: %v\n%s", err, stderr.String())
			}
			said := stderr.String()
			if tt.file == "" {
				if strings.Contains(said, "warning") {
					t.Errorf("cargo warns where Load does not:\n%s", said)
				}
				return
			}
			if !strings.Contains(said, tt.want) {
				t.Errorf("cargo does not say %q:\n%s", tt.want, said)
			}
		})
	}
}
