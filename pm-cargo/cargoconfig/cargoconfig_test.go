package cargoconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
