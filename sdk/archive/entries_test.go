package archive

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// le is a listed entry of a test tree: a file's body is its content, a
// link's its target.
type le struct {
	name string
	typ  Type
	body string
	size int64 // declared size when not len(body); -1 for len(body)
}

func f(name, body string) le    { return le{name, Regular, body, -1} }
func d(name string) le          { return le{name, Dir, "", -1} }
func ln(name, target string) le { return le{name, Symlink, target, -1} }

// listOf lists es; opened counts the contents opened.
func listOf(es []le, opened *int) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for _, e := range es {
			size := e.size
			if size == -1 {
				size = int64(len(e.body))
			}
			body := e.body
			ent := Entry{Name: e.name, Type: e.typ, Size: size, Open: func() (io.ReadCloser, error) {
				if opened != nil {
					*opened++
				}
				return io.NopCloser(strings.NewReader(body)), nil
			}}
			if !yield(ent, nil) {
				return
			}
		}
	}
}

// tree lists what is below dir: name → "d", "f:<content>" or "l:<target>".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[rel] = "l:" + target
		case de.IsDir():
			got[rel] = "d"
		default:
			b, _ := os.ReadFile(p)
			got[rel] = "f:" + string(b)
		}
		return nil
	})
	return got
}

func openRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir
}

// TestExtractEntriesRefuses: every hostile listing is refused as a whole
// with an *Error naming the entry and the cause, and leaves nothing.
func TestExtractEntriesRefuses(t *testing.T) {
	small := Limits{MaxBytes: 10, MaxEntries: 4, MaxFile: 6}
	for _, tc := range []struct {
		name   string
		es     []le
		opts   Options
		want   string // in the error
		errEnt string // the entry named ("" for none expected)
	}{
		{"dotdot", []le{f("../x", "1")}, Options{}, `a ".." component`, "../x"},
		{"dotdot-inner", []le{d("a"), f("a/../../x", "1")}, Options{}, `a ".." component`, "a/../../x"},
		{"absolute", []le{f("/etc/passwd", "1")}, Options{}, "absolute path", "/etc/passwd"},
		{"drive", []le{f("C:/x", "1")}, Options{}, "absolute path", "C:/x"},
		{"backslash", []le{f(`a\b`, "1")}, Options{}, "backslash", `a\b`},
		{"nul", []le{f("a\x00b", "1")}, Options{}, "NUL", "a\x00b"},
		{"empty", []le{f("", "1")}, Options{}, "empty name", ""},
		{"dot", []le{f(".", "1")}, Options{}, "canonical", "."},
		{"dot-component", []le{d("a"), f("a/./b", "1")}, Options{}, "canonical", "a/./b"},
		{"empty-component", []le{d("a"), f("a//b", "1")}, Options{}, "canonical", "a//b"},
		{"trailing-slash", []le{d("a/")}, Options{}, "canonical", "a/"},
		{"long-component", []le{f(strings.Repeat("x", 256), "1")}, Options{}, "over 255 bytes", strings.Repeat("x", 256)},
		{"parent-unlisted", []le{f("a/b", "1")}, Options{}, `directory "a" is listed`, "a/b"},
		{"parent-is-file", []le{f("a", "1"), f("a/b", "2")}, Options{}, `directory "a" is listed`, "a/b"},
		{"duplicate-file", []le{f("a", "1"), f("a", "2")}, Options{}, "more than once", "a"},
		{"file-over-dir", []le{d("a"), f("a", "1")}, Options{}, "already has the directory", "a"},
		{"case-files", []le{f("README", "1"), f("readme", "2")}, Options{}, "differing only in case", "readme"},
		{"case-dirs", []le{d("Docs"), f("Docs/a", "1"), d("docs")}, Options{}, "differing only in case", "docs"},
		{"case-link", []le{f("a", "1"), ln("A", "a")}, Options{Links: KeepLinksInside}, "differing only in case", "A"},
		{"symlink-refused", []le{f("a", "1"), ln("l", "a")}, Options{}, "symbolic link", "l"},
		{"unknown-type", []le{{"x", Type(9), "", -1}}, Options{}, "entry type 9", "x"},
		{"negative-size", []le{{"x", Regular, "", -5}}, Options{}, "negative size", "x"},
		{"file-cap", []le{f("big", "1234567")}, Options{Limits: small}, "over the cap of 6 bytes for one file", "big"},
		{"bytes-cap", []le{f("a", "123456"), f("b", "12345")}, Options{Limits: small}, "past 10 bytes", "b"},
		{"entries-cap", []le{f("a", ""), f("b", ""), f("c", ""), d("d"), f("d/e", "")}, Options{Limits: small}, "more than 4 entries", ""},
		{"placeholders-count", []le{{"a", Placeholder, "", 0}, {"b", Placeholder, "", 0}, {"c", Placeholder, "", 0}, f("e", ""), f("g", "")}, Options{Limits: small}, "more than 4 entries", ""},
		{"longer-than-declared", []le{{"x", Regular, "12345", 3}}, Options{}, "more content than its declared size", "x"},
		{"shorter-than-declared", []le{{"x", Regular, "1", 3}}, Options{}, "less content than its declared size", "x"},
		{"top", []le{d("pkg"), f("pkg/a", "1"), f("other", "2")}, Options{Top: "pkg"}, "not under", "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := openRoot(t)
			_, err := ExtractEntries(context.Background(), listOf(tc.es, nil), root, tc.opts)
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || ae.Entry != tc.errEnt {
				t.Fatalf("err = %v (entry %q), want %q about entry %q", err, ae.Entry, tc.want, tc.errEnt)
			}
			if got := tree(t, dir); len(got) != 0 {
				t.Fatalf("a refused tree left %v", got)
			}
			// Check-only finds the same problem, reading no content
			// (except for a length it cannot see without reading).
			opened := 0
			_, cerr := ExtractEntries(context.Background(), listOf(tc.es, &opened), nil, tc.opts)
			if strings.Contains(tc.name, "declared") {
				if cerr != nil {
					t.Fatalf("check-only read content: %v", cerr)
				}
			} else if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("check-only: %v, want %v", cerr, err)
			}
			if opened != 0 {
				t.Fatalf("check-only opened %d contents", opened)
			}
		})
	}
}

// TestExtractEntriesWrites: a listing is written as given, with modes;
// links are kept only when they resolve to a file inside the root, and
// every link left out is reported.
func TestExtractEntriesWrites(t *testing.T) {
	root, dir := openRoot(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	rel, _ := filepath.Rel(dir, filepath.Join(outside, "secret"))
	es := []le{
		d("a"), f("a/x", "hello"), {"a/run", Executable, "#!", -1}, {"sub", Placeholder, "", 0},
		d("a/b"), f("a/b/y", ""),
		ln("to-file", "a/x"), ln("chain", "to-file"), ln("a/b/up", "../x"),
		ln("to-dir", "a"), ln("abs", "/etc/passwd"), ln("out", filepath.ToSlash(rel)), ln("dangling", "nope"),
		ln("loop1", "loop2"), ln("loop2", "loop1"), ln("empty", ""), ln("via-dir-link", "to-dir/x"),
		{"huge", Symlink, "", maxPathBytes + 1},
	}
	var dropped []string
	res, err := ExtractEntries(context.Background(), listOf(es, nil), root, Options{Links: KeepLinksInside, OnDrop: func(name, reason string) {
		dropped = append(dropped, name)
		if reason == "" {
			t.Errorf("%s dropped without a reason", name)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "d", "a/x": "f:hello", "a/run": "f:#!", "a/b": "d", "a/b/y": "f:",
		"to-file": "l:a/x", "chain": "l:to-file", "a/b/up": "l:../x"}
	if got := tree(t, dir); !mapsEqual(got, want) {
		t.Fatalf("tree = %v\nwant   %v", got, want)
	}
	slices.Sort(dropped)
	if w := []string{"abs", "dangling", "empty", "huge", "loop1", "loop2", "out", "to-dir", "via-dir-link"}; !slices.Equal(dropped, w) {
		t.Fatalf("dropped %v, want %v", dropped, w)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a/run")); fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("executable written %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a/x")); fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("regular file written %v", fi.Mode())
	}
	if want := (Result{Entries: len(es), Files: 3, Bytes: 7, Written: 7, Links: 3}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestExtractEntriesReuse: a file Reuse places is not opened, counts
// against the caps, and a Reuse that fails falls back to the content.
func TestExtractEntriesReuse(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "same"), []byte("12345"), 0o644)
	list := func(reuseOK bool, opened *int) iter.Seq2[Entry, error] {
		return func(yield func(Entry, error) bool) {
			for _, name := range []string{"one", "two"} {
				e := Entry{Name: name, Size: 5, Open: func() (io.ReadCloser, error) {
					*opened++
					return io.NopCloser(strings.NewReader("12345")), nil
				}, Reuse: func(root *os.Root, rel string) bool {
					return reuseOK && os.Link(filepath.Join(src, "same"), filepath.Join(root.Name(), rel)) == nil
				}}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
	root, dir := openRoot(t)
	opened := 0
	res, err := ExtractEntries(context.Background(), list(true, &opened), root, Options{})
	if err != nil || opened != 0 || res.Reused != 2 || res.Bytes != 10 || res.Written != 0 {
		t.Fatalf("reuse: %+v %v, opened %d", res, err, opened)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "two")); fi == nil || fi.Sys().(*syscall.Stat_t).Nlink != 3 {
		t.Fatalf("two not linked: %v", fi)
	}
	// Reused bytes count: two 5-byte files pass a 9-byte cap only if
	// reused files were free.
	root2, dir2 := openRoot(t)
	_, err = ExtractEntries(context.Background(), list(true, &opened), root2, Options{Limits: Limits{MaxBytes: 9}})
	if !IsContent(err) || len(tree(t, dir2)) != 0 {
		t.Fatalf("reused bytes over the cap: %v, left %v", err, tree(t, dir2))
	}
	root3, dir3 := openRoot(t)
	res, err = ExtractEntries(context.Background(), list(false, &opened), root3, Options{})
	if err != nil || opened != 2 || res.Reused != 0 || res.Written != 10 || tree(t, dir3)["one"] != "f:12345" {
		t.Fatalf("fallback: %+v %v, opened %d", res, err, opened)
	}
}

// TestExtractEntriesFailures: the source's failures are *SourceError,
// writing failures are neither that nor *Error, a name the file system
// already holds is a collision, and each leaves nothing behind.
func TestExtractEntriesFailures(t *testing.T) {
	boom := errors.New("boom")
	t.Run("listing", func(t *testing.T) {
		root, dir := openRoot(t)
		list := func(yield func(Entry, error) bool) {
			if yield(Entry{Name: "a", Type: Dir}, nil) {
				yield(Entry{}, boom)
			}
		}
		_, err := ExtractEntries(context.Background(), list, root, Options{})
		var se *SourceError
		if !errors.As(err, &se) || !errors.Is(err, boom) || IsContent(err) || len(tree(t, dir)) != 0 {
			t.Fatalf("err = %v, left %v", err, tree(t, dir))
		}
	})
	t.Run("open", func(t *testing.T) {
		root, dir := openRoot(t)
		list := func(yield func(Entry, error) bool) {
			yield(Entry{Name: "a", Size: 1, Open: func() (io.ReadCloser, error) { return nil, boom }}, nil)
		}
		_, err := ExtractEntries(context.Background(), list, root, Options{})
		var se *SourceError
		if !errors.As(err, &se) || se.Entry != "a" || !errors.Is(err, boom) || len(tree(t, dir)) != 0 {
			t.Fatalf("err = %v, left %v", err, tree(t, dir))
		}
	})
	t.Run("read", func(t *testing.T) {
		root, dir := openRoot(t)
		list := func(yield func(Entry, error) bool) {
			yield(Entry{Name: "a", Size: 3, Open: func() (io.ReadCloser, error) {
				return io.NopCloser(io.MultiReader(strings.NewReader("1"), errReader{boom})), nil
			}}, nil)
		}
		_, err := ExtractEntries(context.Background(), list, root, Options{})
		var se *SourceError
		if !errors.As(err, &se) || !errors.Is(err, boom) || strings.Contains(err.Error(), "writing") || len(tree(t, dir)) != 0 {
			t.Fatalf("err = %v, left %v", err, tree(t, dir))
		}
	})
	t.Run("disk-full", func(t *testing.T) {
		root, dir := openRoot(t)
		var seen []string
		opts := Options{BeforeWrite: func(name string, n int) error {
			seen = append(seen, name)
			return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
		}}
		_, err := ExtractEntries(context.Background(), listOf([]le{d("a"), f("a/x", "data")}, nil), root, opts)
		var se *SourceError
		if err == nil || IsContent(err) || errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), filepath.Join(dir, "a", "x")) {
			t.Fatalf("err = %v", err)
		}
		if !slices.Equal(seen, []string{"a/x"}) || len(tree(t, dir)) != 0 {
			t.Fatalf("hook saw %v; left %v", seen, tree(t, dir))
		}
	})
	t.Run("fs-collision", func(t *testing.T) {
		// A name the file system already holds although no entry claimed
		// it stands for one it takes for another (Unicode normalization).
		for _, es := range [][]le{{d("a")}, {f("a", "1")}} {
			root, dir := openRoot(t)
			os.Mkdir(filepath.Join(dir, "a"), 0o755)
			_, err := ExtractEntries(context.Background(), listOf(es, nil), root, Options{})
			if !IsContent(err) || !strings.Contains(err.Error(), "collides with another name on this file system") {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
				t.Fatalf("what was there before is gone: %v", err)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		root, dir := openRoot(t)
		ctx, cancel := context.WithCancel(context.Background())
		list := func(yield func(Entry, error) bool) {
			if yield(Entry{Name: "a", Type: Dir}, nil) {
				cancel()
				yield(Entry{Name: "a/b", Type: Dir}, nil)
			}
		}
		_, err := ExtractEntries(ctx, list, root, Options{})
		if !errors.Is(err, context.Canceled) || len(tree(t, dir)) != 0 {
			t.Fatalf("err = %v, left %v", err, tree(t, dir))
		}
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
