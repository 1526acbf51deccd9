//go:build unix

package gitcache

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// hostile is one kind of file put where the cache keeps one of its own,
// and the words of the refusal that must reach the log.
type hostile struct {
	kind  pkgfiletest.Kind
	cause string
}

// hostiles are the files each read of the cache must refuse at once: a
// FIFO (a blocking open waits for a writer forever), a link to /dev/zero
// (a read never ends) and a file one byte over the read's cap (refused
// before it is read, from its size).
func hostiles() []hostile {
	return []hostile{
		{pkgfiletest.FIFO, "not a regular file (a FIFO)"},
		{pkgfiletest.DevZero, "not a regular file (a character device)"},
		{pkgfiletest.Oversize, "over the size cap"},
	}
}

// replace puts a hostile file of kind at path, in place of the cache's.
func replace(t *testing.T, path string, kind pkgfiletest.Kind, limit int64) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	pkgfiletest.Make(t, path, kind, limit)
}

// loggedConfig is a cache configuration whose log, debug messages and up,
// is kept in the returned buffer.
func loggedConfig(root, name, url string) (Config, *pmtest.LogBuffer) {
	logs := &pmtest.LogBuffer{}
	return Config{Root: root, Name: name, URL: url,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, logs
}

// TestHostileState: a FIFO, a link to /dev/zero or an oversize file in
// state.json's place is refused at once by every read of it (Open's
// collection, Current, Update), with a warning naming state.json and
// why, and is treated as a damaged state.json is: the registry is not
// cached (Current is ErrNotCached) until an update, which writes
// state.json afresh. With os.ReadFile, a FIFO hung Open and /dev/zero was
// read until memory ran out.
func TestHostileState(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	ctx := context.Background()
	for _, h := range hostiles() {
		t.Run(string(h.kind), func(t *testing.T) {
			cfg, logs := loggedConfig(t.TempDir(), "hostile", repo.Dir)
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Update(ctx, Fetch); err != nil {
				t.Fatal(err)
			}
			c.Close()
			statePath := filepath.Join(Dir(cfg), "state.json")
			replace(t, statePath, h.kind, maxStateFile)

			var snap Snapshot
			pkgfiletest.Within(t, "Open, Current and Update", func() {
				// No other process holds the cache: Open collects, and
				// reads state.json to know what to keep.
				if c, err = Open(ctx, cfg); err != nil {
					return
				}
				if _, err = c.Current(ctx); !errors.Is(err, ErrNotCached) {
					err = errors.Join(errors.New("Current did not report the registry not cached"), err)
					return
				}
				snap, _, err = c.Update(ctx, Check)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if snap.Commit != c1 {
				t.Fatalf("Update served %s, want %s", snap.Commit, c1)
			}
			if st, err := c.readState(); err != nil || st.Commit != c1 {
				t.Fatalf("state.json after the update: %+v, %v; want commit %s", st, err, c1)
			}
			for _, then := range []string{"removing every commit directory", "the registry is not cached until it is updated", "fetching the ref afresh"} {
				warned := regexp.MustCompile(`level=WARN msg="cache state cannot be read; ` + then + `" [^\n]*file=` + regexp.QuoteMeta(statePath) + ` [^\n]*` + regexp.QuoteMeta(h.cause))
				if !warned.MatchString(logs.String()) {
					t.Errorf("no warning %q naming %s and %q:\n%s", then, statePath, h.cause, logs)
				}
			}
		})
	}
}

// TestHostileTreeSidecar: a FIFO, a link to /dev/zero or an oversize file
// in place of the tree sidecar of the commit served is refused at once
// with a warning naming it and why, and is treated as a damaged sidecar
// is: the next commit is materialized beside the previous one, not
// updated in place, and the update reports no changes (the caller
// derives everything again). The intact sidecar is the control: the same
// update then happens in place, with its changes. With os.ReadFile, a
// FIFO hung the update.
func TestHostileTreeSidecar(t *testing.T) {
	ctx := context.Background()
	cases := append([]hostile{{"", ""}}, hostiles()...)
	for _, h := range cases {
		name := string(h.kind)
		if name == "" {
			name = "intact"
		}
		t.Run(name, func(t *testing.T) {
			repo, bare := inPlaceRepo(t)
			root := t.TempDir()
			first := fetchAndClose(t, root, bare)
			side := filepath.Join(filepath.Dir(first.Dir), first.Commit+"."+treeStatsSuffix)
			if h.kind != "" {
				replace(t, side, h.kind, maxTreeStats)
			}
			c2, _ := change(t, repo, bare)

			cfg, logs := loggedConfig(root, "inplace", bare)
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var snap Snapshot
			var changes *Changes
			pkgfiletest.Within(t, "UpdateChanges", func() { snap, _, changes, err = c.UpdateChanges(ctx, Check) })
			if err != nil || snap.Commit != c2 {
				t.Fatalf("UpdateChanges: %+v, %v; want commit %s", snap, err, c2)
			}
			if got, want := files(t, snap.Dir), lsTree(t, repo.Dir, c2, ""); !slices.Equal(got, want) {
				t.Fatalf("commit %s holds %v, want %v", c2, got, want)
			}
			inPlace := strings.Contains(logs.String(), "updated commit in place")
			if h.kind == "" {
				if !inPlace || changes == nil {
					t.Fatalf("intact sidecar: in place %v, changes %v; want both:\n%s", inPlace, changes, logs)
				}
				return
			}
			if inPlace || changes != nil {
				t.Fatalf("in place %v, changes %v; want neither with the sidecar refused:\n%s", inPlace, changes, logs)
			}
			warned := regexp.MustCompile(`level=WARN msg="commit's tree sidecar cannot be used[^\n]*file=` + regexp.QuoteMeta(side) + ` [^\n]*` + regexp.QuoteMeta(h.cause))
			if !warned.MatchString(logs.String()) {
				t.Errorf("no warning naming %s and %q:\n%s", side, h.cause, logs)
			}
		})
	}
}

// TestHostileRepository: a FIFO or a link to /dev/zero in place of a file
// of the cached repository that go-git reads (HEAD, config) no longer
// hangs an update, and the repository is repaired: the update serves the
// commit and the file is a regular file again. With osfs's blocking open,
// a FIFO HEAD or config hung every update. How the refusal is reported is
// go-git's: a config that cannot be read makes the repository unreadable,
// with a warning (naming the file and why for a FIFO, which ownFS opens
// and refuses; for a link out of the repository, which billy's chroot
// refuses before opening, naming the repository and "chroot boundary
// crossed"), and the update fetches into a fresh one; a HEAD that cannot
// be read is written again by the fetch without a word from go-git.
func TestHostileRepository(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	ctx := context.Background()
	for _, tc := range []struct {
		file string
		kind pkgfiletest.Kind
		warn string // the warning's words after "err=" (a regexp, %s: the file's path), or "" for none
	}{
		{"HEAD", pkgfiletest.FIFO, ""},
		{"HEAD", pkgfiletest.DevZero, ""},
		{"config", pkgfiletest.FIFO, `"%s: not a regular file \(a FIFO\)"`},
		{"config", pkgfiletest.DevZero, `"chroot boundary crossed"`},
	} {
		t.Run(tc.file+"/"+string(tc.kind), func(t *testing.T) {
			cfg, logs := loggedConfig(t.TempDir(), "hostile", repo.Dir)
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, _, err := c.Update(ctx, Fetch); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(Dir(cfg), "repo", tc.file)
			replace(t, path, tc.kind, 0)
			var snap Snapshot
			pkgfiletest.Within(t, "Update", func() { snap, _, err = c.Update(ctx, Fetch) })
			if err != nil || snap.Commit != c1 {
				t.Fatalf("Update: %+v, %v; want commit %s", snap, err, c1)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s after the update: %v, %v; want a regular file again", path, fi, err)
			}
			refused := regexp.MustCompile(`level=WARN msg="cached repository file refused; the repository is read without it" file=` + regexp.QuoteMeta(path) + ` err=`)
			if n := len(refused.FindAllString(logs.String(), -1)); n != 1 {
				t.Errorf("%d warnings matching %s, want one:\n%s", n, refused, logs)
			}
			if tc.warn == "" {
				return
			}
			warned := regexp.MustCompile(`level=WARN msg="cached repository is unreadable; starting afresh" [^\n]*err=` + strings.ReplaceAll(tc.warn, "%s", regexp.QuoteMeta(path)))
			if !warned.MatchString(logs.String()) {
				t.Errorf("no warning matching %s:\n%s", warned, logs)
			}
		})
	}
}
