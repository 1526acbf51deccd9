package cargopm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// tarEntry is one entry of a hand-made .crate; Name is used verbatim (no
// prefix added), so it can escape.
type tarEntry struct {
	Name     string
	Body     string
	Type     byte
	Linkname string
	Mode     int64
	Size     int64 // for a body of Size zero bytes (bombs); Body is then ignored
}

// crateArchive gzips a tar of the entries; std adds the usual Cargo.toml and
// src/lib.rs for name-version first unless the entries replace them.
func crateArchive(t testing.TB, name, version string, entries ...tarEntry) []byte {
	t.Helper()
	prefix := name + "-" + version + "/"
	std := []tarEntry{
		{Name: prefix + "Cargo.toml", Body: "[package]\nname = \"" + name + "\"\nversion = \"" + version + "\"\nedition = \"2021\"\n"},
		{Name: prefix + "src/lib.rs"},
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, e := range append(std, entries...) {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Linkname, Mode: e.Mode, ModTime: time.Unix(1700000000, 0), Format: tar.FormatGNU}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.Body))
			if e.Size > 0 {
				h.Size = e.Size
			}
		}
		if h.Typeflag == tar.TypeChar || h.Typeflag == tar.TypeBlock {
			h.Devmajor, h.Devminor = 1, 3
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if e.Size > 0 {
				if _, err := io.CopyN(tw, zeroReader{}, e.Size); err != nil {
					t.Fatal(err)
				}
			} else if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// snapshotTree lists every path under root (relative, with its type), so a
// test can tell what appeared.
func snapshotTree(t testing.TB, root string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = d.Type()
		return nil
	})
	return out
}

// hostileCases are .crate archives a hostile registry could serve (with a
// correct checksum). cargo 1.95 refuses some itself (refusedByCargo); it
// unpacks the others: a ".." entry inside the crate prefix is silently
// skipped, links and special files are created, a duplicate overwrites, a
// case twin is a second file. The PM refuses every one with -32014.
func hostileCases(outside string) map[string][]tarEntry {
	p := func(n string) string { return n + "-1.0.0/" }
	return map[string][]tarEntry{
		"dotdot":      {{Name: p("dotdot") + "../../../../escaped-dotdot", Body: "x"}},
		"dotdotbare":  {{Name: "../escaped-bare", Body: "x"}},
		"absolute":    {{Name: filepath.Join(outside, "escaped-abs"), Body: "x"}},
		"symfile":     {{Name: p("symfile") + "SYMPOSIUM.toml", Type: tar.TypeSymlink, Linkname: filepath.Join(outside, "secret.toml")}},
		"symrel":      {{Name: p("symrel") + "SYMPOSIUM.toml", Type: tar.TypeSymlink, Linkname: strings.Repeat("../", 12) + strings.TrimPrefix(filepath.Join(outside, "secret.toml"), "/")}},
		"symskills":   {{Name: p("symskills") + "skills", Type: tar.TypeSymlink, Linkname: filepath.Join(outside, "skills")}},
		"symthrough":  {{Name: p("symthrough") + "esc", Type: tar.TypeSymlink, Linkname: outside}, {Name: p("symthrough") + "esc/written", Body: "x"}},
		"hardabs":     {{Name: p("hardabs") + "SYMPOSIUM.toml", Type: tar.TypeLink, Linkname: filepath.Join(outside, "secret.toml")}},
		"hardrel":     {{Name: p("hardrel") + "SYMPOSIUM.toml", Type: tar.TypeLink, Linkname: "../../../secret.toml"}},
		"chardev":     {{Name: p("chardev") + "null", Type: tar.TypeChar}},
		"fifo":        {{Name: p("fifo") + "pipe", Type: tar.TypeFifo}},
		"dup":         {{Name: p("dup") + "SYMPOSIUM.toml", Body: "name = \"first\"\n"}, {Name: p("dup") + "SYMPOSIUM.toml", Body: "name = \"second\"\n"}},
		"casedup":     {{Name: p("casedup") + "SYMPOSIUM.toml", Body: "name = \"upper\"\n"}, {Name: p("casedup") + "symposium.toml", Body: "name = \"lower\"\n"}},
		"otherprefix": {{Name: "other-9.9.9/x", Body: "x"}},
		// 600 MiB of zeros in ~600 KiB: over cargo's 512 MiB unpack limit.
		"bomb": {{Name: p("bomb") + "zeros", Size: 600 << 20}},
	}
}

// refusedByCargo are the cases cargo itself refuses to unpack.
var refusedByCargo = map[string]bool{
	"dotdotbare": true, "absolute": true, "otherprefix": true, "symthrough": true,
	"hardabs": true, "hardrel": true, "bomb": true,
}

// TestOracleHostileCrates fetches every hostile archive through real cargo from
// the loopback registry: fetch and load_plugin fail with -32014 naming the
// cause, active_plugins offers nothing for them, nothing lands in
// <cache_dir>/cargo and nothing is written outside cargo's own directories;
// a tampered checksum is -32013 with nothing unpacked.
func TestOracleHostileCrates(t *testing.T) {
	cargotest.Cargo(t)
	if testing.Short() {
		t.Skip("fetches 16 crates through cargo")
	}
	base := t.TempDir()
	top := filepath.Dir(base) // every t.TempDir of this test lies here
	outside := filepath.Join(base, "outside")
	cargotest.WriteFiles(t, outside, map[string]string{
		"secret.toml":          "name = \"stolen\"\n",
		"skills/evil/SKILL.md": "---\nname: evil\ndescription: evil\n---\n",
	})
	cases := hostileCases(outside)
	var crates []fakeregistry.Crate
	for name, es := range cases {
		crates = append(crates, fakeregistry.Crate{Name: name, Version: "1.0.0", Raw: crateArchive(t, name, "1.0.0", es...)})
	}
	// A download whose sha256 is not the index's.
	crates = append(crates, fakeregistry.Crate{Name: "tampered", Version: "1.0.0", Cksum: strings.Repeat("ab", 32)})
	reg, err := fakeregistry.New(crates...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	ws := filepath.Join(base, "ws")
	os.MkdirAll(ws, 0o755)
	pm := newPM(t, ws, envMap(env))
	cacheDir := pm.session().CacheDir
	ctx := context.Background()
	before := snapshotTree(t, top)

	for name := range cases {
		id := protocol.PackageID{PM: Name, Name: name, Version: "1.0.0"}
		_, err := pm.Fetch(ctx, id, protocol.UpdateFetch)
		wantCode(t, "fetch "+name, err, protocol.CodeInvalidContent)
		if err != nil && !strings.Contains(err.Error(), "invalid package content") {
			t.Errorf("fetch %s: %v does not say why", name, err)
		}
		if refusedByCargo[name] && err != nil && !strings.Contains(err.Error(), "cargo refused to unpack") {
			t.Errorf("fetch %s: %v; want cargo's refusal", name, err)
		}
		_, err = pm.LoadPlugin(ctx, id)
		wantCode(t, "load_plugin "+name, err, protocol.CodeInvalidContent)
	}
	_, err = pm.Fetch(ctx, protocol.PackageID{PM: Name, Name: "tampered", Version: "1.0.0"}, protocol.UpdateFetch)
	wantCode(t, "fetch tampered", err, protocol.CodeIntegrity)
	_, err = pm.Fetch(ctx, protocol.PackageID{PM: Name, Name: "tampered", Version: "1.0.0"}, protocol.UpdateNone)
	wantCode(t, "fetch tampered none", err, protocol.CodeOffline)

	var all []protocol.PackageID
	for name := range cases {
		all = append(all, protocol.PackageID{PM: Name, Name: name, Version: "1.0.0"})
	}
	offers, err := pm.ActivePlugins(ctx, all)
	if err != nil || len(offers) != 0 {
		t.Errorf("active_plugins over hostile crates = %+v, %v; want none", offers, err)
	}

	// Without cargo's .crate to audit, the unpacked links are still not
	// followed: the files are read through an os.Root.
	for _, name := range []string{"symfile", "symrel", "symskills"} {
		crates, _ := filepath.Glob(filepath.Join(env.CargoHome, "registry", "cache", "*", name+"-1.0.0.crate"))
		if len(crates) != 1 {
			t.Fatalf("%s: cargo kept %v", name, crates)
		}
		os.Remove(crates[0])
		id := protocol.PackageID{PM: Name, Name: name, Version: "=1.0.0"}
		_, err := pm.LoadPlugin(ctx, id)
		wantCode(t, "load_plugin "+name+" without its .crate", err, protocol.CodeInvalidContent)
		_, err = pm.Fetch(ctx, id, protocol.UpdateNone)
		wantCode(t, "fetch none "+name+" without its .crate", err, protocol.CodeInvalidContent)
		if err != nil && !strings.Contains(err.Error(), "out of the crate") && !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	offers, _ = pm.ActivePlugins(ctx, all)
	if len(offers) != 0 {
		t.Errorf("active_plugins without the archives = %+v; want none", offers)
	}

	// Nothing new anywhere but cargo's own home, the workspace and the
	// PM's cache directory, which holds no probe and no crate content.
	for rel := range snapshotTree(t, top) {
		if _, ok := before[rel]; ok {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) >= 2 && (parts[1] == "cargo-home" || parts[1] == "cache") {
			continue
		}
		t.Errorf("new path outside cargo's home and the cache directory: %s", filepath.Join(top, rel))
	}
	assertNoPartial(t, cacheDir)
	if b, err := os.ReadFile(filepath.Join(outside, "secret.toml")); err != nil || string(b) != "name = \"stolen\"\n" {
		t.Errorf("outside file changed: %q, %v", b, err)
	}
	for _, n := range []string{"escaped-dotdot", "escaped-bare", "escaped-abs"} {
		if m, _ := filepath.Glob(filepath.Join(os.TempDir(), n)); len(m) > 0 {
			t.Errorf("escaped entry written: %v", m)
		}
	}
	// Nothing unpacked completely for the tampered crate nor the refused ones.
	for name := range refusedByCargo {
		if m, _ := filepath.Glob(filepath.Join(env.CargoHome, "registry", "src", "*", name+"-1.0.0", ".cargo-ok")); len(m) > 0 {
			t.Errorf("%s: cargo marked it unpacked: %v", name, m)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(env.CargoHome, "registry", "*", "*", "tampered-1.0.0*")); len(m) > 0 {
		t.Errorf("tampered crate kept: %v", m)
	}
}

// TestAuditCrate checks the archive audit on its own, without cargo.
func TestAuditCrate(t *testing.T) {
	outside := "/nonexistent/outside"
	for name, es := range hostileCases(outside) {
		if name == "bomb" {
			continue // the cargo test covers it; building it costs seconds
		}
		data := crateArchive(t, name, "1.0.0", es...)
		if err := audit(data, name+"-1.0.0", 0); !archive.IsContent(err) {
			t.Errorf("%s: audit = %v, want a refusal", name, err)
		}
	}
	ok := crateArchive(t, "fine", "1.0.0", tarEntry{Name: "fine-1.0.0/skills/a/SKILL.md", Body: "---\nname: a\n---\n"}, tarEntry{Name: "fine-1.0.0/skills/", Type: tar.TypeDir, Mode: 0o755})
	if err := audit(ok, "fine-1.0.0", 0); err != nil {
		t.Errorf("fine crate refused: %v", err)
	}
	// Bombs against a 1 MiB cap: one entry over it, and many entries that
	// add up to more.
	bomb := crateArchive(t, "b", "1.0.0", tarEntry{Name: "b-1.0.0/zeros", Size: 2 << 20})
	if err := audit(bomb, "b-1.0.0", 1<<20); !archive.IsContent(err) || !strings.Contains(err.Error(), "cap") {
		t.Errorf("bomb: audit = %v", err)
	}
	many := make([]tarEntry, 0, 40)
	for i := range 40 {
		many = append(many, tarEntry{Name: fmt.Sprintf("b-1.0.0/f%d", i), Size: 64 << 10})
	}
	if err := audit(crateArchive(t, "b", "1.0.0", many...), "b-1.0.0", 1<<20); err == nil {
		t.Errorf("40 x 64 KiB under a 1 MiB cap passed")
	}
	for _, bad := range [][]byte{nil, []byte("not gzip"), ok[:len(ok)/2]} {
		if err := audit(bad, "fine-1.0.0", 0); err == nil {
			t.Errorf("audit of %d broken bytes passed", len(bad))
		}
	}
}

// audit runs auditCrate on data with the default limits, or a MaxBytes of
// limit when it is not 0.
func audit(data []byte, top string, limit int64) error {
	lim := archive.DefaultLimits
	if limit > 0 {
		lim.MaxBytes = limit
	}
	return auditCrate(context.Background(), bytes.NewReader(data), int64(len(data)), "test.crate", top, lim)
}

// FuzzAuditCrate: the audit never panics and never accepts an entry with
// a ".." component or outside the prefix.
func FuzzAuditCrate(f *testing.F) {
	for name, es := range hostileCases("/outside") {
		if name != "bomb" {
			f.Add(crateArchive(f, "x", "1.0.0", es...))
		}
	}
	f.Add(crateArchive(f, "x", "1.0.0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if audit(data, "x-1.0.0", 1<<20) != nil {
			return
		}
		// Accepted: every entry is a file or directory under the prefix.
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("accepted a non-gzip stream: %v", err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeXGlobalHeader {
				continue
			}
			if !strings.HasPrefix(path.Clean(h.Name)+"/", "x-1.0.0/") || strings.Contains("/"+h.Name+"/", "/../") {
				t.Fatalf("accepted entry %q", h.Name)
			}
			if h.Typeflag != tar.TypeReg && h.Typeflag != 0 && h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeGNUSparse {
				t.Fatalf("accepted entry %q of type %q", h.Name, h.Typeflag)
			}
		}
	})
}

// assertNoPartial checks <cacheDir>/cargo holds nothing but the persisted
// list_deps answers and an empty probe directory.
func assertNoPartial(t *testing.T, cacheDir string) {
	t.Helper()
	for rel, mode := range snapshotTree(t, filepath.Join(cacheDir, Name)) {
		switch {
		case rel == "." || rel == "probes" || rel == "deps":
		case strings.HasPrefix(rel, "deps"+string(filepath.Separator)) && mode.IsRegular() && strings.HasSuffix(rel, ".cache"):
		default:
			t.Errorf("left in %s: %s (%v)", filepath.Join(cacheDir, Name), rel, mode)
		}
	}
}

// TestHostilePathSource checks sources that are not archives (a path
// dependency here): a SYMPOSIUM.toml or skills/ link out of the crate, or a
// FIFO under skills/, is never read: active_plugins skips the crate and
// load_plugin and fetch answer -32014.
func TestHostilePathSource(t *testing.T) {
	dir := t.TempDir()
	cargotest.WriteFiles(t, dir, map[string]string{
		"outside/secret.toml":          "name = \"stolen\"\n",
		"outside/skills/evil/SKILL.md": "---\nname: evil\ndescription: evil\n---\n",
		"ws/Cargo.toml":                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nlinkfile = { path = \"../linkfile\" }\nlinkskills = { path = \"../linkskills\" }\nfifo = { path = \"../fifo\" }\ninside = { path = \"../inside\" }\n",
		"ws/src/lib.rs":                "",
		"ws/Cargo.lock": "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"fifo\", \"inside\", \"linkfile\", \"linkskills\"]\n" +
			"\n[[package]]\nname = \"fifo\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"inside\"\nversion = \"0.1.0\"\n" +
			"\n[[package]]\nname = \"linkfile\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"linkskills\"\nversion = \"0.1.0\"\n",
		"linkfile/Cargo.toml":    "[package]\nname = \"linkfile\"\nversion = \"0.1.0\"\n",
		"linkskills/Cargo.toml":  "[package]\nname = \"linkskills\"\nversion = \"0.1.0\"\n",
		"fifo/Cargo.toml":        "[package]\nname = \"fifo\"\nversion = \"0.1.0\"\n",
		"fifo/skills/a/SKILL.md": "---\nname: a\ndescription: a\n---\n",
		"inside/Cargo.toml":      "[package]\nname = \"inside\"\nversion = \"0.1.0\"\n",
		"inside/real/SKILL.md":   "---\nname: real\ndescription: real\n---\n",
		"inside/plugin.toml":     "name = \"inside-plugin\"\n",
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(dir, "outside", "secret.toml"), filepath.Join(dir, "linkfile", "SYMPOSIUM.toml")))
	must(os.Symlink("../outside/skills", filepath.Join(dir, "linkskills", "skills")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo", "skills", "a", "pipe"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "inside", "skills"), 0o755))
	must(os.Symlink("../real", filepath.Join(dir, "inside", "skills", "real"))) // stays inside: fine
	must(os.Symlink("plugin.toml", filepath.Join(dir, "inside", "SYMPOSIUM.toml")))
	// No cargo: everything here is on disk, nothing may be acquired.
	p := newPM(t, filepath.Join(dir, "ws"), map[string]string{"SYMPOSIUM_CARGO": filepath.Join(dir, "no-cargo"), "CARGO_HOME": filepath.Join(dir, "cargo-home")})
	ctx := context.Background()
	deps, err := p.ListDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	offers, err := p.ActivePlugins(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) != 1 || offers[0].ID.Name != "inside" {
		t.Errorf("active_plugins = %+v; want only inside", offers)
	}
	if lp, err := p.LoadPlugin(ctx, protocol.PackageID{PM: Name, Name: "inside", Version: "0.1.0"}); err != nil {
		t.Errorf("load_plugin inside: %v", err)
	} else if !strings.Contains(string(lp[0].Manifest), `"skills"`) || !strings.Contains(string(lp[0].Manifest), `"inside-plugin"`) {
		t.Errorf("load_plugin inside = %s", lp[0].Manifest)
	}
	for _, name := range []string{"linkfile", "linkskills", "fifo"} {
		id := protocol.PackageID{PM: Name, Name: name, Version: "0.1.0"}
		_, err := p.LoadPlugin(ctx, id)
		wantCode(t, "load_plugin "+name, err, protocol.CodeInvalidContent)
		_, err = p.Fetch(ctx, id, protocol.UpdateNone)
		wantCode(t, "fetch "+name, err, protocol.CodeInvalidContent)
		if err != nil && strings.Contains(err.Error(), "stolen") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// BenchmarkAuditCrate measures the archive audit fetch, load_plugin and
// active_plugins pay once per plugin crate and process: a crate of 200 text
// files, about 2 MiB unpacked.
func BenchmarkAuditCrate(b *testing.B) {
	var es []tarEntry
	for i := range 200 {
		es = append(es, tarEntry{Name: fmt.Sprintf("bench-1.0.0/src/m%03d.rs", i), Body: strings.Repeat(fmt.Sprintf("pub fn f%d() -> u32 { %d }\n", i, i*7), 400)})
	}
	data := crateArchive(b, "bench", "1.0.0", es...)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if err := audit(data, "bench-1.0.0", 0); err != nil {
			b.Fatal(err)
		}
	}
}
