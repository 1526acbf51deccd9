// Package locktest holds the checks every Python lockfile reader's tests
// make of its [lockfile.Resolver]: a table of names and the versions they
// resolve to, and a fuzz target over the reader's parser.
package locktest

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
)

// Resolve checks r.Resolve's answer for each name of want: the versions
// the lock must answer, nil for a name it does not lock.
func Resolve(t testing.TB, r lockfile.Resolver, want map[string][]lockfile.Locked) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got := r.Resolve(name); !reflect.DeepEqual(got, want[name]) {
			t.Errorf("Resolve(%q) = %+v, want %+v", name, got, want[name])
		}
	}
}

// ReadFile returns the file's content, failing the test when it cannot be
// read (a seed that silently went missing would leave the fuzzer nothing).
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Names returns the non-empty names name gives for the packages, in order:
// the names a fuzzed lock must resolve.
func Names[P any](packages []P, name func(P) string) []string {
	var out []string
	for _, p := range packages {
		if n := name(p); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// FuzzResolve fuzzes a reader: for every input parse accepts, Resolve
// answers without panicking, with candidates for each name locked returns
// (the packages the lock must resolve), and with nil for a name no lock
// can hold. A reader that also describes its workspace is asked for it.
func FuzzResolve[L lockfile.Resolver](f *testing.F, parse func([]byte) (L, error), locked func(L) []string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parse(b)
		if err != nil {
			return
		}
		if w, ok := any(l).(lockfile.WorkspaceReader); ok {
			w.Workspace()
		}
		for _, name := range locked(l) {
			if len(l.Resolve(name)) == 0 {
				t.Errorf("Resolve(%q) found nothing for a locked package", name)
			}
		}
		if got := l.Resolve("-not-a-name-"); got != nil {
			t.Errorf("Resolve of an absent name = %+v", got)
		}
	})
}

// CheckReader checks that parseReader, reading a lockfile from the file,
// gives what parse gives from its bytes, for every file under testdata.
func CheckReader[L any](t *testing.T, parse func([]byte) (L, error), parseReader func(io.ReadSeeker) (L, error)) {
	t.Helper()
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		want, werr := parse(data)
		got, gerr := parseReader(bytes.NewReader(data))
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("%s: reading the file gives error %v, parsing its bytes %v", f, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reading the file gives %+v, parsing its bytes %+v", f, got, want)
		}
	}
	if len(files) == 0 {
		t.Fatal("no test files")
	}
}
