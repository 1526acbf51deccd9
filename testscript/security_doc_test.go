package testscript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// TestSecurityFigures: every bound SECURITY.md states is the one the code
// enforces. A change to a constant fails here until the page says the same.
func TestSecurityFigures(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Lines wrap anywhere: compare with runs of blanks as one space.
	doc := strings.Join(strings.Fields(string(b)), " ")
	mib := func(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
	secs := func(d time.Duration) string {
		if d >= time.Minute {
			return fmt.Sprintf("%d min", int(d/time.Minute))
		}
		return fmt.Sprintf("%d s", int(d/time.Second))
	}
	to := host.DefaultTimeouts
	lim := archive.DefaultLimits
	for _, want := range []struct{ what, text string }{
		{"framing.DefaultMaxMessage", "| one message from a PM | " + mib(framing.DefaultMaxMessage) + " (`framing.DefaultMaxMessage`"},
		{"the stderr ring", "the last 20 lines are kept for error messages, each cut to 1,024 bytes"},
		{"Initialize, ListDeps, Workspace", "| `initialize`, `list_deps`, `workspace` | " + secs(to.Initialize) + " each |"},
		{"ListDeps", secs(to.ListDeps)},
		{"ActivePlugins, Search", "| `active_plugins`, `search` | " + secs(to.ActivePlugins) + " each |"},
		{"LoadPlugin, Fetch, Refresh", "| `load_plugin`, `fetch`, `refresh` | " + secs(to.LoadPlugin) + " each"},
		{"Grace, Term", fmt.Sprintf("stdin closed, then %d s to exit, then SIGTERM to the PM's process group, %d s, then SIGKILL", to.Grace/time.Second, to.Term/time.Second)},
		{"Drain", fmt.Sprintf("its stderr is read for at most %d s more", to.Drain/time.Second)},
		{"discovery.MaxManifestSize", fmt.Sprintf("a regular file of at most %s, read through the workspace's `os.Root`", mib(discovery.MaxManifestSize))},
		{"skill defaults", fmt.Sprintf("%d directory levels below a group, %s directory entries and %d s per plugin", skill.DefaultDepth, commas(skill.DefaultEntries), skill.DefaultTime/time.Second)},
		{"skill.MaxProblems", fmt.Sprintf("The first %d entries left out", skill.MaxProblems)},
		{"discovery.DefaultWalkBudget", fmt.Sprintf("%d s in total (`discovery.DefaultWalkBudget`)", discovery.DefaultWalkBudget/time.Second)},
		{"skill.MaxFileSize", fmt.Sprintf("each `SKILL.md` a regular file of at most %s", mib(skill.MaxFileSize))},
		{"archive.DefaultLimits", fmt.Sprintf("at most %d GiB expanded, %s entries, and %d × the archive's size + %s", lim.MaxBytes>>30, commas(lim.MaxEntries), lim.Ratio, mib(lim.Allowance))},
		{"archive budget of 1 MiB", fmt.Sprintf("a 1 MB archive never makes a PM write more than about %s", mib(lim.Budget(1<<20)))},
		{"pkgfile.MaxManifest", fmt.Sprintf("(`sdk/pkgfile`: %s for `SYMPOSIUM.toml`", mib(pkgfile.MaxManifest))},
	} {
		if !strings.Contains(doc, want.text) {
			t.Errorf("SECURITY.md does not say %q (%s)", want.text, want.what)
		}
	}
	if to.Initialize != to.ListDeps || to.ListDeps != to.Workspace || to.ActivePlugins != to.Search ||
		to.LoadPlugin != to.Fetch || to.Fetch != to.Refresh {
		t.Errorf("SECURITY.md groups timeouts that differ now: %+v", to)
	}
}

// commas writes n with thousands separators, as the documents do.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
