package depcache_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// offersFixture writes a package directory with a manifest, waits out the
// racy window and returns the stamps of its inputs and one offer rooted in
// it.
func offersFixture(t *testing.T) (string, []depcache.Stamp, []protocol.Offer) {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "a")
	write(t, filepath.Join(pkg, "package.json"), `{"name":"a","version":"1.0.0"}`)
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	rec.ObserveDir(filepath.Join(dir, "node_modules"))
	rec.ObserveDir(pkg)
	rec.Observe(filepath.Join(pkg, "package.json"))
	rec.ObserveTree(pkg, "skills")
	offers := []protocol.Offer{{ID: protocol.PackageID{PM: "npm", Name: "a", Version: "1.0.0"}, Root: pkg, Manifest: json.RawMessage(`{"name":"a"}`)}}
	return dir, rec.Stamps(), offers
}

func TestOffersRoundTrip(t *testing.T) {
	_, stamps, offers := offersFixture(t)
	c := depcache.New(t.TempDir())
	key := depcache.OffersKey("test 1", []string{"/ws"}, []protocol.PackageID{offers[0].ID})
	if err := c.StoreOffers(key, stamps, offers); err != nil {
		t.Fatal(err)
	}
	got, ok := c.LoadOffers(key, nil)
	if !ok || !reflect.DeepEqual(got, offers) {
		t.Fatalf("LoadOffers = %v, %v; want %v", got, ok, offers)
	}
	// Another dependency set, another context: other keys.
	for _, other := range []string{
		depcache.OffersKey("test 1", []string{"/ws"}, nil),
		depcache.OffersKey("test 1", []string{"/other"}, []protocol.PackageID{offers[0].ID}),
		depcache.OffersKey("test 2", []string{"/ws"}, []protocol.PackageID{offers[0].ID}),
	} {
		if other == key {
			t.Errorf("key %q collides", other)
		}
	}
}

// TestOffersInvalidation: a plugin added to a package, a manifest rewritten
// and a package directory replaced each make the entry stale.
func TestOffersInvalidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"SYMPOSIUM.toml added", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "node_modules", "a", "SYMPOSIUM.toml"), "")
		}},
		{"skills directory added", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "node_modules", "a", "skills", "s", "SKILL.md"), "")
		}},
		{"manifest rewritten", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "node_modules", "a", "package.json"), `{"name":"a","version":"1.0.1"}`)
		}},
		{"package directory replaced", func(t *testing.T, dir string) {
			nm := filepath.Join(dir, "node_modules")
			write(t, filepath.Join(nm, ".new", "package.json"), `{"name":"a","version":"1.0.0"}`)
			if err := os.RemoveAll(filepath.Join(nm, "a")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(nm, ".new"), filepath.Join(nm, "a")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, stamps, offers := offersFixture(t)
			c := depcache.New(t.TempDir())
			key := depcache.OffersKey("test 1", nil, nil)
			if err := c.StoreOffers(key, stamps, offers); err != nil {
				t.Fatal(err)
			}
			tc.change(t, dir)
			if got, ok := c.LoadOffers(key, nil); ok {
				t.Fatalf("stale entry loaded: %v", got)
			}
		})
	}
}

// TestOffersSkillsTree: a SKILL.md added deep in an existing skills tree
// changes only its own directory, which ObserveTree recorded.
func TestOffersSkillsTree(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "skills", "a", "b", "notes.txt"), "")
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	rec.ObserveTree(dir, "skills")
	c := depcache.New(t.TempDir())
	if err := c.StoreOffers("k", rec.Stamps(), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.LoadOffers("k", nil); !ok {
		t.Fatal("fresh entry missed")
	}
	write(t, filepath.Join(dir, "skills", "a", "b", "SKILL.md"), "")
	if _, ok := c.LoadOffers("k", nil); ok {
		t.Fatal("entry survived a SKILL.md added under skills/a/b")
	}
}

// TestObserveTreeLinks: ObserveTree follows a link to a directory while
// it stays inside the root, recording it by the link's path; a link out
// of the root is neither followed nor recorded, and a link looping back
// into the tree ends the walk there.
func TestObserveTreeLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, "docs", "x", "README"), "")
	write(t, filepath.Join(outside, "y", "README"), "")
	for link, target := range map[string]string{
		"skills/common": filepath.Join("..", "docs"),
		"skills/out":    outside,
		"skills/loop":   ".",
		"skills/file":   filepath.Join("..", "docs", "x", "README"),
	} {
		if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip(err)
		}
	}
	var rec depcache.Recorder
	rec.ObserveTree(dir, "skills")
	var got []string
	for _, s := range rec.Stamps() {
		rel, _ := filepath.Rel(dir, s.Path)
		got = append(got, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	want := []string{"skills", "skills/common", "skills/common/x", "skills/loop"}
	if !slices.Equal(got, want) || rec.Tainted() {
		t.Errorf("ObserveTree recorded %q (tainted %v), want %q", got, rec.Tainted(), want)
	}
}

// TestRecorderDanglingLink: a link leading nowhere keeps a stamp of its
// own even when its directory is recorded (an absent path's is left to its
// directory), and keeps it when merged into a recorder that has the
// directory too: its target appearing elsewhere changes nothing else the
// answer recorded.
func TestRecorderDanglingLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "SYMPOSIUM.toml")
	if err := os.Symlink(filepath.Join("conf", "SYMPOSIUM.toml"), link); err != nil {
		t.Skip(err)
	}
	var rec, part depcache.Recorder
	rec.ObserveDir(dir)
	rec.Observe(link)
	rec.Observe(filepath.Join(dir, "absent"))
	part.Observe(link)
	var merged depcache.Recorder
	merged.ObserveDir(dir)
	merged.Merge(&part)
	for name, r := range map[string]*depcache.Recorder{"recorded": &rec, "merged": &merged} {
		if got := len(r.Stamps()); got != 2 || r.Stamps()[1].Path != link || r.Stamps()[1].Size != -1 {
			t.Errorf("%s: stamps %+v, want the directory's and the link's (absent)", name, r.Stamps())
		}
	}
	write(t, filepath.Join(dir, "conf", "SYMPOSIUM.toml"), "name = \"x\"\n")
	if rec.Stamps()[1].Fresh() {
		t.Error("the link's stamp is fresh after its target appeared")
	}
}

// TestOffersRacyNotStored: an answer read from an input changed within the
// racy window is not persisted, since a further change in the same clock
// tick would not show in its stamp.
func TestOffersRacyNotStored(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "package.json"), "{}")
	var rec depcache.Recorder
	rec.Observe(filepath.Join(dir, "package.json"))
	c := depcache.New(t.TempDir())
	if err := c.StoreOffers("k", rec.Stamps(), nil); err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Fatalf("StoreOffers of a just-written input: %v", err)
	}
	if _, ok := c.LoadOffers("k", nil); ok {
		t.Fatal("racy answer persisted")
	}
}

// entryFile returns the single entry file in dir.
func entryFile(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.cache"))
	if len(files) != 1 {
		t.Fatalf("entries %v", files)
	}
	return files[0]
}

// relength gives the stored entry data the length of the value it now
// holds, as a forger would, so that what follows the length check is
// what refuses it.
func relength(data []byte) []byte {
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	i := bytes.Index(rest, []byte("\n\n"))
	magic := first[:bytes.LastIndexByte(first, ' ')+1]
	out := append([]byte(nil), magic...)
	out = strconv.AppendInt(out, int64(len(rest)-i-2), 10)
	out = append(out, '\n')
	return append(out, rest...)
}

// TestOffersUnusableEntries: a corrupt, truncated or forged entry is a
// miss, reported at debug level, never a partial answer; the next store
// replaces it whole.
func TestOffersUnusableEntries(t *testing.T) {
	_, stamps, offers := offersFixture(t)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name   string
		mangle func(data []byte) []byte
		report string
	}{
		{"garbage", func([]byte) []byte { return []byte("\x00\x01not an entry") }, "not an entry"},
		{"truncated in the header", func(d []byte) []byte { return d[:len(d)/3] }, "truncated"},
		{"truncated in the value", func(d []byte) []byte { return d[:len(d)-5] }, "cut short"},
		{"value not offers", func(d []byte) []byte {
			i := bytes.Index(d, []byte("\n\n"))
			return relength(append(d[:i+2:i+2], `{"x":1}`...))
		}, "do not decode"},
		{"root not a recorded input", func(d []byte) []byte {
			return relength(bytes.Replace(d, []byte(`"root":"`+offers[0].Root), []byte(`"root":"`+elsewhere), 1))
		}, "not a directory the answer was read from"},
		{"relative root", func(d []byte) []byte {
			return relength(bytes.Replace(d, []byte(`"root":"`+offers[0].Root), []byte(`"root":"../../etc`), 1))
		}, "not a directory the answer was read from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := depcache.New(dir)
			key := depcache.OffersKey("test 1", nil, nil)
			if err := c.StoreOffers(key, stamps, offers); err != nil {
				t.Fatal(err)
			}
			f := entryFile(t, dir)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, tc.mangle(data), 0o644); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			if got, ok := c.LoadOffers(key, logger); ok {
				t.Fatalf("unusable entry loaded: %v", got)
			}
			if !strings.Contains(log.String(), "level=DEBUG") || !strings.Contains(log.String(), tc.report) {
				t.Errorf("debug report %q lacks %q", log.String(), tc.report)
			}
			if err := c.StoreOffers(key, stamps, offers); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.LoadOffers(key, logger); !ok || !reflect.DeepEqual(got, offers) {
				t.Fatalf("after a new store: %v, %v", got, ok)
			}
		})
	}
}

// TestOffersStoreRefusesUnrecordedRoots: an answer naming a root it did not
// record is refused at store time too.
func TestOffersStoreRefusesUnrecordedRoots(t *testing.T) {
	_, stamps, offers := offersFixture(t)
	offers[0].Root = t.TempDir()
	dir := t.TempDir()
	if err := depcache.New(dir).StoreOffers("k", stamps, offers); err == nil {
		t.Fatal("stored an offer whose root is not a recorded input")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("left %v", files)
	}
}

// TestWarnings: the wrapped logger counts warnings, even those its handler
// filters out, and passes records through.
func TestWarnings(t *testing.T) {
	var w depcache.Warnings
	var out bytes.Buffer
	l := w.Wrap(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError}))).With("pm", "x")
	l.Info("quiet")
	l.Warn("one")
	l.Error("two")
	if w.Count() != 2 {
		t.Errorf("count %d, want 2", w.Count())
	}
	if strings.Contains(out.String(), "one") || !strings.Contains(out.String(), "two") || !strings.Contains(out.String(), "pm=x") {
		t.Errorf("output %q", out.String())
	}
}

// TestAbsentChildOfRecordedDir: an absent file under a directory recorded
// before it takes no stamp of its own, and its creation still makes the
// entry stale through the directory's.
func TestAbsentChildOfRecordedDir(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pkg", "package.json"), "{}")
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	rec.ObserveDir(filepath.Join(dir, "pkg"))
	rec.Observe(filepath.Join(dir, "pkg", "SYMPOSIUM.toml"))
	rec.Observe(filepath.Join(dir, "elsewhere", "SYMPOSIUM.toml"))
	if n := len(rec.Stamps()); n != 2 {
		t.Fatalf("%d stamps, want 2 (the directory and the unrelated absent file): %+v", n, rec.Stamps())
	}
	c := depcache.New(t.TempDir())
	if err := c.StoreOffers("k", rec.Stamps(), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.LoadOffers("k", nil); !ok {
		t.Fatal("fresh entry missed")
	}
	write(t, filepath.Join(dir, "pkg", "SYMPOSIUM.toml"), "")
	if _, ok := c.LoadOffers("k", nil); ok {
		t.Fatal("entry survived the creation of a file it read as absent")
	}
}

// TestVerifiedWindow: stamps a list_deps Load found fresh are trusted by
// LoadOffers for VerifiedWindow only; past it, a change is seen.
func TestVerifiedWindow(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "package.json")
	write(t, pkg, "{}")
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	rec.Observe(pkg)
	var v depcache.Verified
	list := depcache.New(t.TempDir()).Remembering(&v)
	offers := depcache.New(t.TempDir()).Remembering(&v)
	if err := list.Store("deps", rec.Stamps(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := offers.StoreOffers("offers", rec.Stamps(), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := list.Load("deps"); !ok {
		t.Fatal("list_deps entry missed")
	}
	time.Sleep(depcache.VerifiedWindow + 100*time.Millisecond)
	write(t, pkg, `{"name":"changed"}`)
	if _, ok := offers.LoadOffers("offers", nil); ok {
		t.Fatal("a change made after the verified window was not seen")
	}
}

// TestParallelCheck: an entry large enough to be checked on several
// processors is still stale when one input in the middle changed.
func TestParallelCheck(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2000 {
		p := filepath.Join(dir, strings.Repeat("d", 1+i%7), "f"+strconv.Itoa(i))
		write(t, p, "x")
		paths = append(paths, p)
	}
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	for _, p := range paths {
		rec.Observe(p)
	}
	c := depcache.New(t.TempDir())
	if err := c.StoreOffers("k", rec.Stamps(), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.LoadOffers("k", nil); !ok {
		t.Fatal("fresh entry missed")
	}
	write(t, paths[1337], "yy")
	if _, ok := c.LoadOffers("k", nil); ok {
		t.Fatal("a changed input in a large entry was missed")
	}
}

// TestParallelCheckRoots: in an entry checked on several processors,
// roots recorded in any part are found (an offer rooted in the last part
// is served), a root recorded in none is refused, and a corrupt line in a
// later part makes the entry unusable, reported as such.
func TestParallelCheckRoots(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for i := range 2000 {
		d := filepath.Join(dir, "node_modules", "p"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	for _, d := range dirs {
		rec.ObserveDir(d)
	}
	offer := func(root string) protocol.Offer {
		return protocol.Offer{ID: protocol.PackageID{PM: "npm", Name: filepath.Base(root), Version: "1.0.0"}, Root: root, Manifest: json.RawMessage(`{}`)}
	}
	c := depcache.New(t.TempDir())
	offers := []protocol.Offer{offer(dirs[3]), offer(dirs[1999]), offer(dirs[1000])}
	if err := c.StoreOffers("k", rec.Stamps(), offers); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.LoadOffers("k", nil); !ok || !reflect.DeepEqual(got, offers) {
		t.Fatalf("fresh entry with roots in every part: %v, %v", got, ok)
	}
	enc, err := json.Marshal([]protocol.Offer{offer(dirs[0]), offer(dirs[1998])})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StoreRawOffers("raw", rec.Stamps(), enc); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.LoadRawOffers("raw", nil); !ok || string(got) != string(enc) {
		t.Fatalf("fresh encoded entry with roots in every part: %s, %v", got, ok)
	}

	// A root none of the 2,000 lines records, forged into the value.
	forged := append(slices.Clone(offers), offer(filepath.Join(dir, "node_modules")))
	data, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Store("k", rec.Stamps(), data); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if got, ok := c.LoadOffers("k", logger); ok {
		t.Fatalf("forged root served: %v", got)
	}
	if !strings.Contains(log.String(), "cached offer 4 has root") {
		t.Errorf("debug report %q does not name the forged root", log.String())
	}

	// A line near the end made unparsable.
	cdir := t.TempDir()
	c = depcache.New(cdir)
	if err := c.StoreOffers("k", rec.Stamps(), offers); err != nil {
		t.Fatal(err)
	}
	f := entryFile(t, cdir)
	data, err = os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	last := []byte(" d " + strconv.Quote(dirs[1990]) + "\n")
	if !bytes.Contains(data, last) {
		t.Fatalf("entry lacks %q", last)
	}
	if err := os.WriteFile(f, bytes.Replace(data, last, []byte(" x "+strconv.Quote(dirs[1990])+"\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if got, ok := c.LoadOffers("k", logger); ok {
		t.Fatalf("corrupt entry served: %v", got)
	}
	if !strings.Contains(log.String(), "input 1991: bad kind") {
		t.Errorf("debug report %q does not name the corrupt line", log.String())
	}
}

// TestStoreRacyNotStored: the rule holds for every entry, list_deps
// answers included: Store refuses a value read from an input changed
// within the racy window, with an error wrapping ErrRecent.
func TestStoreRacyNotStored(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Cargo.lock"), "version = 4\n")
	var rec depcache.Recorder
	rec.Observe(filepath.Join(dir, "Cargo.lock"))
	c := depcache.New(t.TempDir())
	err := c.Store("k", rec.Stamps(), []byte("deps"))
	if !errors.Is(err, depcache.ErrRecent) || !strings.Contains(err.Error(), "Cargo.lock") {
		t.Fatalf("Store of a value read from a just-written input: %v", err)
	}
	if _, ok := c.Load("k"); ok {
		t.Fatal("racy value persisted")
	}
}

// TestStoreFutureModTimeSettled: a file whose modification time lies in the
// future (unpacked from an archive, copied from a machine whose clock is
// ahead) is stored once its change time has settled: only the change time,
// which the kernel sets, tells how recent a change is.
func TestStoreFutureModTimeSettled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Cargo.lock")
	write(t, path, "version = 4\n")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var rec depcache.Recorder
	rec.Observe(path)
	c := depcache.New(t.TempDir())
	if err := c.Store("k", rec.Stamps(), []byte("deps")); err != nil {
		t.Fatalf("Store of a settled input with a future modification time: %v", err)
	}
	if v, ok := c.Load("k"); !ok || string(v) != "deps" {
		t.Fatalf("Load = %q, %v", v, ok)
	}
}
