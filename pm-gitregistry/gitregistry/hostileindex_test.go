//go:build unix

package gitregistry

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestHostileIndex: a FIFO, a link to /dev/zero or a file over
// maxIndexFile in place of a commit's persisted index is refused at once
// wherever the index is read, with a warning naming the file and why, and
// is handled as a damaged index is. On the hook path the kept answer is
// not served (openIndex refuses the file), the usual path answers the
// same, builds the index again and keeps it, so the next hook serves the
// kept answer again. On a refresh the index of the commit served is not
// derived from: the refresh moves the registry and the new commit's index
// is built from its tree. With os.Open, a FIFO hung either for good; a
// link to /dev/zero was opened and read as an empty file.
func TestHostileIndex(t *testing.T) {
	f := newFixture(t)
	const hookParams = `{"deps":[]}`
	// warned matches the warning of an index that cannot be read, naming
	// the file and why.
	warned := func(file, cause string) *regexp.Regexp {
		return regexp.MustCompile(`level=WARN msg="persisted registry index cannot be read; [^\n]*file=` + regexp.QuoteMeta(file) + ` [^\n]*` + regexp.QuoteMeta(cause))
	}
	for _, tc := range []struct {
		kind  pkgfiletest.Kind
		cause string
	}{
		{pkgfiletest.FIFO, "not a regular file (a FIFO)"},
		{pkgfiletest.DevZero, "not a regular file (a character device)"},
		{pkgfiletest.Oversize, "over the size cap"},
	} {
		// setup refreshes a fresh cache, serves one hook from it (the
		// kept answer) and puts the hostile file in place of the index.
		setup := func(t *testing.T) (cache, idxPath, kept string) {
			cache = t.TempDir()
			if out, _ := serveOnce(t, f.url, cache, protocol.MethodRefresh, `{"update":"check","force":false}`); !strings.Contains(out, `"refreshed":true`) {
				t.Fatalf("refresh: %s", out)
			}
			kept, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams)
			if !strings.Contains(logs, "served the kept active_plugins answer") {
				t.Fatalf("the first hook did not serve the kept answer:\n%s", logs)
			}
			idxPath = indexPaths(t, cache)[0]
			if err := os.Remove(idxPath); err != nil {
				t.Fatal(err)
			}
			pkgfiletest.Make(t, idxPath, tc.kind, maxIndexFile)
			return cache, idxPath, kept
		}
		t.Run(string(tc.kind)+"/hook", func(t *testing.T) {
			cache, idxPath, kept := setup(t)
			var usual, logs string
			pkgfiletest.Within(t, "the hook", func() { usual, logs = serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams) })
			if strings.Contains(logs, "served the kept active_plugins answer") {
				t.Fatalf("served the kept answer from a %s:\n%s", tc.kind, logs)
			}
			if usual != kept {
				t.Errorf("the usual path sent\n%s\nthe kept answer\n%s", usual, kept)
			}
			if !warned(idxPath, tc.cause).MatchString(logs) {
				t.Errorf("no warning naming %s and %q:\n%s", idxPath, tc.cause, logs)
			}
			if fi, err := os.Lstat(idxPath); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexFile {
				t.Fatalf("the index was not written again: %v, %v", fi, err)
			}
			again, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams)
			if !strings.Contains(logs, "served the kept active_plugins answer") || again != kept {
				t.Errorf("the next hook did not serve the answer kept again:\n%s\n%s", again, logs)
			}
		})
		t.Run(string(tc.kind)+"/refresh", func(t *testing.T) {
			cache, idxPath, _ := setup(t)
			next := f.push(t, map[string]string{"python/SKILL.md": "---\nname: python\ndescription: Python, changed by " + string(tc.kind) + "\n---\n"})
			var out, logs string
			pkgfiletest.Within(t, "the refresh", func() {
				out, logs = serveOnce(t, f.url, cache, protocol.MethodRefresh, `{"update":"check","force":false}`)
			})
			if !strings.Contains(out, `"refreshed":true`) {
				t.Fatalf("refresh: %s\n%s", out, logs)
			}
			if !warned(idxPath, tc.cause).MatchString(logs) {
				t.Errorf("no warning naming %s and %q:\n%s", idxPath, tc.cause, logs)
			}
			if strings.Contains(logs, "derived registry index") {
				t.Errorf("the new commit's index was derived from a %s:\n%s", tc.kind, logs)
			}
			hook, logs := serveOnce(t, f.url, cache, protocol.MethodActivePlugins, hookParams)
			if !strings.Contains(logs, "served the kept active_plugins answer") || !strings.Contains(hook, `"version":"`+next+`"`) {
				t.Errorf("the hook after the refresh did not serve the new commit's kept answer:\n%s\n%s", hook, logs)
			}
		})
	}
}

// TestHostileEntryFiles: the files of a commit's directory an index is
// built from, and the directories the hook lists to see the entries are
// still there, are the cache's own and read as such. An entry's
// SYMPOSIUM.toml or SKILL.md over the manifest cap is the entry's problem,
// naming the file and the cap, without reading it; a FIFO or a link to
// /dev/zero swapped in after the entry was found is refused at once (with
// os.Open, a FIFO hung the build). A FIFO in place of a directory holding
// entries makes the entries absent at once (with os.Open, the hook hung).
func TestHostileEntryFiles(t *testing.T) {
	const commit = "0123456789012345678901234567890123456789"
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plugins/good/SYMPOSIUM.toml": "name = \"good\"\n",
		"skills/s/SKILL.md":           "---\nname: s\ndescription: d\n---\n",
	})
	pkgfiletest.Make(t, filepath.Join(dir, "plugins", "big", manifest.ManifestFile), pkgfiletest.Oversize, pkgfile.MaxManifest)
	pkgfiletest.Make(t, filepath.Join(dir, "skills", "big", skill.File), pkgfiletest.Oversize, pkgfile.MaxManifest)
	idx := buildIndex(dir, commit)
	problems := map[string]string{}
	for _, e := range idx.Entries {
		problems[e.Path] = e.Problem
	}
	over := fmt.Sprintf(": %d bytes, over the size cap of %d bytes", pkgfile.MaxManifest+1, pkgfile.MaxManifest)
	want := map[string]string{
		"plugins/good": "",
		"plugins/big":  "SYMPOSIUM.toml" + over,
		"skills/s":     "",
		"skills/big":   "SKILL.md" + over,
	}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("entries' problems:\n got %q\nwant %q", problems, want)
	}

	for _, tc := range []struct {
		kind  pkgfiletest.Kind
		cause string
	}{
		{pkgfiletest.FIFO, "not a regular file (a FIFO)"},
		{pkgfiletest.DevZero, "not a regular file (a character device)"},
	} {
		p := filepath.Join(t.TempDir(), manifest.ManifestFile)
		pkgfiletest.Make(t, p, tc.kind, 0)
		var err error
		pkgfiletest.Within(t, "readCapped of a "+string(tc.kind), func() { _, err = readCapped(p) })
		if w := manifest.ManifestFile + ": " + tc.cause; err == nil || err.Error() != w {
			t.Errorf("%s: %v, want %q", tc.kind, err, w)
		}
	}

	if !idx.present(dir) {
		t.Fatal("the entries just indexed are not present")
	}
	moved := t.TempDir()
	if err := os.Rename(filepath.Join(dir, "skills"), filepath.Join(moved, "skills")); err != nil {
		t.Fatal(err)
	}
	pkgfiletest.Make(t, filepath.Join(dir, "skills"), pkgfiletest.FIFO, 0)
	var present bool
	pkgfiletest.Within(t, "present with a FIFO for a directory", func() { present = idx.present(dir) })
	if present {
		t.Error("entries below a FIFO in place of their directory are present")
	}
}
