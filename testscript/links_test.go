package testscript

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// notPaths are backquoted names in the repository's Markdown that look like
// repository documents or paths but name something else: files of the
// user's projects, build output. A span whose base name is listed here is
// accepted wherever it appears.
var notPaths = []string{
	"SKILL.md",      // a skill's file, in any package
	"CHANGELOG.md",  // "each module's CHANGELOG.md"
	"./bin", "bin/", // build output of make build
	"bench/out/", // raw output of make bench, not committed
}

// A backquoted span is checked when it names a Markdown document, or a
// path whose first element exists in the repository (relative to the
// document, its module or the root): `../drafts/x.md` and
// `sdk/pmtest/gone.go` are checked, `hook-path/cold` (a benchmark) and
// `rust/errors` (a registry entry) are not.
const (
	notChecked = iota
	mustExist
	ifTopExists
)

var (
	placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$|X\.Y\.Z`)
	goSymbol    = regexp.MustCompile(`^(.*/[a-z0-9_]+)\.[A-Z][A-Za-z0-9_]*$`)
)

// classify says whether and how a backquoted span is checked, and returns
// the path to check (a Go symbol such as `sdk/versions.NPM` is checked as
// its package directory).
func classify(s string) (int, string) {
	if s == "" || strings.ContainsAny(s, " \t()<>{}[]*$~…|=,:@'\"\\!?;^#%&+") || strings.HasPrefix(s, "-") ||
		strings.Contains(s, "...") || strings.HasPrefix(s, "/") || slices.Contains(notPaths, s) ||
		slices.Contains(notPaths, filepath.Base(s)) {
		return notChecked, ""
	}
	segs := strings.Split(strings.TrimSuffix(s, "/"), "/")
	if len(segs) > 1 && strings.Contains(segs[0], ".") && !strings.HasPrefix(segs[0], ".") {
		return notChecked, "" // a module or import path: github.com/...
	}
	for _, seg := range segs {
		if placeholder.MatchString(seg) {
			return notChecked, ""
		}
	}
	if m := goSymbol.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if strings.HasSuffix(s, ".md") {
		return mustExist, s
	}
	if len(segs) > 1 {
		return ifTopExists, s
	}
	return notChecked, ""
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`([^`\n]+)`")
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlComm   = regexp.MustCompile(`<!--.*?-->`)
)

// mdLine is one line of Markdown prose (outside fenced code blocks).
type mdLine struct {
	n    int
	text string
}

// prose returns the lines of a Markdown file outside fenced code blocks.
func prose(data []byte) []mdLine {
	var out []mdLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	inFence := false
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, mdLine{n, line})
		}
	}
	return out
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// '-' and '_' kept, spaces turned into '-', everything else dropped.
func slug(h string) string {
	h = codeSpan.ReplaceAllString(h, "$1")
	h = inlineLinkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var inlineLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// anchors returns the heading anchors of a Markdown file.
func anchors(data []byte) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, l := range prose(data) {
		m := heading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// repoRoot returns the repository root, or "" when the test runs outside a
// checkout (from a module zip, where the other modules are absent).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		return ""
	}
	return root
}

// moduleRoot returns the directory of the nearest go.mod at or above dir,
// within root, or root.
func moduleRoot(root, dir string) string {
	for d := dir; strings.HasPrefix(d, root) && d != root; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return root
}

// linkProblems checks the Markdown file at path (inside root) and returns
// one message per relative link or backquoted path naming nothing.
func linkProblems(root, path string, data []byte) []string {
	rel, _ := filepath.Rel(root, path)
	dir := filepath.Dir(path)
	var out []string
	bad := func(n int, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s", filepath.ToSlash(rel), n, fmt.Sprintf(format, args...)))
	}
	for _, l := range prose(data) {
		text := htmlComm.ReplaceAllString(l.text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(dir, filepath.FromSlash(file))
				if !strings.HasPrefix(dest, root) {
					bad(l.n, "link %s leaves the repository", target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					bad(l.n, "link %s: %s does not exist", target, file)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") {
				d, err := os.ReadFile(dest)
				if err == nil && !anchors(d)[frag] {
					bad(l.n, "link %s: no heading with anchor #%s", target, frag)
				}
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(inlineLinkText.ReplaceAllString(text, ""), -1) {
			kind, p := classify(m[1])
			if kind == notChecked {
				continue
			}
			clean := filepath.FromSlash(strings.TrimSuffix(p, "/"))
			top := strings.Split(clean, string(filepath.Separator))[0]
			found, topFound := false, false
			for _, base := range []string{dir, moduleRoot(root, dir), root} {
				if _, err := os.Stat(filepath.Join(base, clean)); err == nil {
					found = true
					break
				}
				if _, err := os.Stat(filepath.Join(base, top)); err == nil {
					topFound = true
				}
			}
			if !found && (kind == mustExist || topFound) {
				bad(l.n, "`%s` names a path of this repository that does not exist (if it is not meant as one, add it to notPaths in testscript/links_test.go)", m[1])
			}
		}
	}
	return out
}

// TestMarkdownLinks fails when a relative link (with its #anchor) or a
// backquoted repository path in any Markdown file of the repository names
// something that does not exist, so a fresh clone's documents lead
// somewhere.
func TestMarkdownLinks(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository: the other modules are absent")
	}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == ".git" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, p := range linkProblems(root, path, data) {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d Markdown files; the walk of %s missed the repository", checked, root)
	}
}

// TestLinkProblems shows what the checker reports and what it lets pass.
func TestLinkProblems(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"docs/a.md", "sdk/go.mod", "sdk/pmserver/main.go", "README.md"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# Title here\n\n## §3.5 End of input\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := strings.Join([]string{
		"See [a](docs/a.md), [b](docs/a.md#35-end-of-input) and [web](https://example.com/x.md).",                   // fine
		"The harness is `sdk/pmserver/main.go`; `sdk/pmserver.Main` is its entry; `hook-path/cold` is a benchmark.", // fine
		"Run `go test ./...`, write `depends-on = \"x\"`, see `<cache_dir>/npm/`.",                                  // not paths
		"Read [gone](docs/missing.md).",                                                   // 4: missing file
		"Read [anchor](docs/a.md#no-such-heading).",                                       // 5: missing anchor
		"The design is in `../drafts/DESIGN.md` and `DESIGN.md`; see `sdk/nothing/x.go`.", // 6: three missing paths
		"Edit `SYMPOSIUM.toml` in your crate.",                                            // allowed by notPaths
		"```", "`not/checked/in/code.md`", "```",                                          // fenced code is not checked
		"[ref]: docs/nothing-here.md", // 11: missing reference target
	}, "\n")
	got := linkProblems(root, filepath.Join(root, "README.md"), []byte(doc))
	want := []string{
		"README.md:4: link docs/missing.md",
		"README.md:5: link docs/a.md#no-such-heading: no heading",
		"README.md:6: `../drafts/DESIGN.md`",
		"README.md:6: `DESIGN.md`",
		"README.md:6: `sdk/nothing/x.go`",
		"README.md:11: link docs/nothing-here.md",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

// TestNoDesignReferences fails when a file of the repository refers to the
// project's working notes, which are not part of it: the repository's own
// documents (docs/) are the reference. The words are assembled here so that
// this file does not match itself.
func TestNoDesignReferences(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository")
	}
	words := [][]byte{[]byte("SPEC" + ".md"), []byte("SPEC" + " §"), []byte("shared" + "/")}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == ".git" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 16<<20 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, w := range words {
			if i := bytes.Index(data, w); i >= 0 {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: mentions %q, which is not part of the repository; cite docs/ instead",
					filepath.ToSlash(rel), bytes.Count(data[:i], []byte("\n"))+1, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
