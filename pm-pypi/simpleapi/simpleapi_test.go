package simpleapi

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

func noenv(string) string { return "" }

func TestProjectJSONAndHTML(t *testing.T) {
	ix := fakeindex.Start(
		fakeindex.Package{Name: "Demo", Version: "1.0", Summary: "s", Files: map[string]string{"demo/x": "y"}},
		fakeindex.Package{Name: "Demo", Version: "1.1", Yanked: "bad build"},
		fakeindex.Package{Name: "Demo", Version: "0.9", Sdist: true, RequiresPython: ">=3.8"},
	)
	defer ix.Close()
	c := NewClient(Config{Index: ix.URL}, noenv, "test")
	for _, htmlOnly := range []bool{false, true} {
		ix.HTMLOnly.Store(htmlOnly)
		p, err := c.Project(context.Background(), "DEMO")
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "demo" || len(p.Files) != 3 {
			t.Fatalf("html=%v: %+v", htmlOnly, p)
		}
		f0, f1, f2 := p.Files[0], p.Files[1], p.Files[2]
		if f0.Filename != "demo-1.0-py3-none-any.whl" || len(f0.SHA256) != 64 || f0.Yanked || !f0.CoreMetadata {
			t.Errorf("html=%v: %+v", htmlOnly, f0)
		}
		if !f1.Yanked || f1.YankedReason != "bad build" {
			t.Errorf("html=%v: yanked %+v", htmlOnly, f1)
		}
		if f2.RequiresPython != ">=3.8" || f2.CoreMetadata {
			t.Errorf("html=%v: sdist %+v", htmlOnly, f2)
		}
		var buf bytes.Buffer
		sum, err := c.Download(context.Background(), f0, &buf, 1<<20)
		if err != nil || sum != f0.SHA256 {
			t.Errorf("html=%v: download sum %s vs %s: %v", htmlOnly, sum, f0.SHA256, err)
		}
		meta, err := c.CoreMetadata(context.Background(), f0)
		if err != nil || !strings.Contains(string(meta), "Summary: s") {
			t.Errorf("html=%v: core metadata %q %v", htmlOnly, meta, err)
		}
		names, err := c.ProjectNames(context.Background())
		if err != nil || !slices.Equal(names, []string{"demo"}) {
			t.Errorf("html=%v: names %v %v", htmlOnly, names, err)
		}
	}
	_, err := c.Project(context.Background(), "missing")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("missing project: %v", err)
	}
	ix.Down.Store(true)
	_, err = c.Project(context.Background(), "demo")
	var re *RegistryError
	if !errors.As(err, &re) || re.Status != 503 {
		t.Errorf("index down: %v", err)
	}
}

func TestCredentials(t *testing.T) {
	ix := fakeindex.Start(fakeindex.Package{Name: "private", Version: "1.0"})
	ix.User, ix.Password = "alice", "s3cret-token"
	defer ix.Close()
	u, _ := url.Parse(ix.URL)
	u.User = url.UserPassword("alice", "s3cret-token")
	c := NewClient(Config{Index: u.String()}, noenv, "test")
	p, err := c.Project(context.Background(), "private")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Download(context.Background(), p.Files[0], &bytes.Buffer{}, 1<<20); err != nil {
		t.Fatalf("download with index credentials: %v", err)
	}
	u.User = url.UserPassword("alice", "wrong-password")
	c = NewClient(Config{Index: u.String()}, noenv, "test")
	_, err = c.Project(context.Background(), "private")
	if err == nil || strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("error leaks or is missing: %v", err)
	}
	if r := redact.URL("https://tok:pw@example.com/simple/"); strings.Contains(r, "pw") || strings.Contains(r, "tok") {
		t.Errorf("Redact kept credentials: %s", r)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".config", "pip"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "pip", "pip.conf"), []byte(
		"[global]\nindex-url = https://user.example/simple\nextra-index-url =\n    https://a.example/simple\n    https://b.example/simple\n[install]\nindex_url = https://install.example/simple\n"), 0o644)
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	for name, tc := range map[string]struct {
		env   map[string]string
		index string
		extra []string
	}{
		"default":       {map[string]string{}, DefaultIndex, nil},
		"pip.conf":      {map[string]string{"HOME": home}, "https://install.example/simple", []string{"https://a.example/simple", "https://b.example/simple"}},
		"env wins":      {map[string]string{"HOME": home, "PIP_INDEX_URL": "https://env.example/simple", "PIP_EXTRA_INDEX_URL": "https://x/ https://y/"}, "https://env.example/simple", []string{"https://x/", "https://y/"}},
		"devnull":       {map[string]string{"HOME": home, "PIP_CONFIG_FILE": os.DevNull}, DefaultIndex, nil},
		"uv":            {map[string]string{"UV_INDEX_URL": "https://uv.example/simple", "UV_INDEX": "corp=https://corp.example/simple"}, "https://uv.example/simple", []string{"https://corp.example/simple"}},
		"pip before uv": {map[string]string{"PIP_INDEX_URL": "https://pip/", "UV_INDEX_URL": "https://uv/"}, "https://pip/", nil},
	} {
		cfg := LoadConfig(env(tc.env))
		if cfg.Index != tc.index || !slices.Equal(cfg.Extra, tc.extra) {
			t.Errorf("%s: got %q %q", name, cfg.Index, cfg.Extra)
		}
	}
}

// TestLoadConfigInputs: what the index configuration is derived from is
// named, so that a choice made from it can be recorded: Consulted lists
// each pip configuration file looked for, present or absent (none with
// PIP_CONFIG_FILE=/dev/null), and ConfigSources changes with every
// variable LoadConfig reads for the indexes (not PIP_PROXY), and with none
// of the file locations when the files are disabled.
func TestLoadConfigInputs(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "pip"), 0o755)
	conf := filepath.Join(home, ".config", "pip", "pip.conf")
	os.WriteFile(conf, []byte("[global]\nindex-url = https://user.example/simple\n"), 0o644)
	base := map[string]string{"HOME": home}
	getenv := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	read := map[string]bool{}
	cfg := LoadConfig(func(k string) string {
		read[k] = true
		return base[k]
	})
	for _, f := range []string{"/etc/pip.conf", filepath.Join(home, ".pip", "pip.conf"), conf} {
		if !slices.Contains(cfg.Consulted, f) {
			t.Errorf("Consulted %q lacks %s", cfg.Consulted, f)
		}
	}
	for _, f := range cfg.Consulted {
		if !slices.Contains(ConfigSources(getenv(base)), f) {
			t.Errorf("ConfigSources lacks the consulted %s", f)
		}
	}
	delete(read, "PIP_PROXY")
	if len(read) < 5 {
		t.Fatalf("LoadConfig read only %v", read)
	}
	for k := range read {
		changed := maps.Clone(base)
		changed[k] = filepath.Join(home, "other")
		if slices.Equal(ConfigSources(getenv(base)), ConfigSources(getenv(changed))) {
			t.Errorf("LoadConfig reads %s, which does not change ConfigSources", k)
		}
	}
	devnull := map[string]string{"PIP_CONFIG_FILE": os.DevNull}
	if cfg := LoadConfig(getenv(devnull)); len(cfg.Consulted) != 0 {
		t.Errorf("with PIP_CONFIG_FILE=%s, Consulted %q", os.DevNull, cfg.Consulted)
	}
	other := map[string]string{"PIP_CONFIG_FILE": os.DevNull, "HOME": home, "XDG_CONFIG_DIRS": home}
	if !slices.Equal(ConfigSources(getenv(devnull)), ConfigSources(getenv(other))) {
		t.Errorf("with the files disabled, the files' locations changed ConfigSources")
	}
}

func FuzzParseProject(f *testing.F) {
	f.Add([]byte(`{"meta":{"api-version":"1.1"},"files":[{"filename":"a-1.whl","url":"a-1.whl","hashes":{"sha256":"ab"},"yanked":"x"}]}`))
	f.Add([]byte(`<a href="../a-1.whl#sha256=ab" data-yanked="">a-1.whl</a>`))
	base, _ := url.Parse("https://example.com/simple/a/")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseProjectJSON(b, base)
		_, _ = ParseProjectHTML(b, base)
	})
}

func TestParseProjectHTMLEdgeCases(t *testing.T) {
	page := `<!DOCTYPE html><html><head><base href="https://cdn.example/pkgs/"><!-- <a href="commented.whl">x</a> --></head>
<body>
<A HREF="a-1.0-py3-none-any.whl#sha256=ABCDEF" data-requires-python="&gt;=3.8" data-yanked>a-1.0-py3-none-any.whl</A><br>
<a href=a-1.1.tar.gz data-core-metadata="sha256=00">a-1.1.tar.gz</a>
<a data-dist-info-metadata='true' href='/abs/a-1.2-py3-none-any.whl?x=1&amp;y=2'> a-1.2-py3-none-any.whl </a>
<a href="a-0.9-py3-none-any.whl" data-yanked="bad &quot;build&quot;">a-0.9-py3-none-any.whl
</body></html>`
	base, _ := url.Parse("https://index.example/simple/a/")
	files, err := ParseProjectHTML([]byte(page), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("%+v", files)
	}
	want := []File{
		{Filename: "a-1.0-py3-none-any.whl", URL: "https://cdn.example/pkgs/a-1.0-py3-none-any.whl", SHA256: "abcdef", RequiresPython: ">=3.8", Yanked: true},
		{Filename: "a-1.1.tar.gz", URL: "https://cdn.example/pkgs/a-1.1.tar.gz", CoreMetadata: true},
		{Filename: "a-1.2-py3-none-any.whl", URL: "https://cdn.example/abs/a-1.2-py3-none-any.whl?x=1&y=2", CoreMetadata: true},
		{Filename: "a-0.9-py3-none-any.whl", URL: "https://cdn.example/pkgs/a-0.9-py3-none-any.whl", Yanked: true, YankedReason: `bad "build"`},
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("file %d:\n got %+v\nwant %+v", i, files[i], want[i])
		}
	}
}
