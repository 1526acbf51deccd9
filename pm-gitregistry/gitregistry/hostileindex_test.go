//go:build unix

package gitregistry

import (
	"os"
	"regexp"
	"strings"
	"testing"

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
