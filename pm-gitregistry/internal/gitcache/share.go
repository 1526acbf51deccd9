package gitcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// When roots of the commit served before may be in use, its directory
// cannot become the new commit's (inplace.go), and materializing the new
// commit in full costs a directory made per directory of the tree, however
// small the change. An update given a Share instead leaves out of the new
// commit's directory every shared directory whose subtree did not change:
// those stay where they are, in the directory of the commit that holds
// them (immutable, as every commit directory is), and the new commit's
// directory holds the rest of the tree — the directories above the shared
// ones, the files beside them, and whatever changed. The caller (which
// knows which directories it hands out as roots: a registry's entries)
// then hands out a shared directory's root in its holder's directory.
//
// What a commit's directory shares is recorded beside it (a sidecar
// written before the directory is published, so a published directory
// never lacks it, and removed before a directory of that name is
// published: see sharedSuffix), and the directories it names are kept by
// collect as long as the commit served shares with them. A shared
// directory is named exactly (repair.go): a repaired copy of a commit
// published later does not move the roots of a directory sharing with the
// copy it replaces. A directory sharing with too many
// others (maxShareHomes) is not shared again: the next commit is
// materialized in full, linking the files of the shared directories from
// where they are. An update in place is never made from a directory that
// shares (its changes could fall in the directories it does not hold), nor
// of a directory that a commit this process handed out shares with (its
// roots lie there).

// Share maps directories of the commit served before an update,
// slash-separated and relative to the commit's directory, to the name of
// the commit directory that holds each (IsDirName: the commit's id, or the
// name of a repaired copy of its tree): the directories a new commit may
// leave out of its own directory when their subtree did not change.
type Share map[string]string

// sharedSuffix names the sidecar listing what a commit's directory
// shares.
//
// Invariant: while commits/<name> is published, commits/<name>.shared is
// there exactly when that directory shares, and lists what it shares; it
// never describes another directory of that name (one that was being
// published when its process was killed, one updated in place, or one
// removed before). Every commit directory is published through publishDir,
// under the update lock, which removes any sidecar of <name> first, then
// writes the new directory's list (when it shares), and only then renames
// the directory into place, removing the list again when that fails.
// Killed at any point, it leaves no directory and no list, no directory and
// its list (which describes nothing: no one reads a list without the
// directory, the next publish of <name> removes it, and so does
// collection), or the directory with its own list — never a published
// directory lacking its list, nor with another's.
const sharedSuffix = "shared"

// publishDir renames the finished directory tmp into place as the commit
// directory called name (repair.go), with shared (nil when it holds its
// whole tree) recorded beside it as sharedSuffix says; won is false when a
// directory of that name was already there (tmp is then removed). Any
// other sidecar of name, left by a directory of that name removed before
// or never published, goes first: it describes another directory. The
// caller holds the update lock.
func (c *Cache) publishDir(tmp, name string, shared Share) (dir string, won bool, err error) {
	dir = filepath.Join(c.commitsDir, name)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		os.RemoveAll(tmp)
		return dir, false, nil // its sidecars are its own: leave them
	}
	stale, _ := filepath.Glob(filepath.Join(c.commitsDir, name+".*"))
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, &WriteError{Dir: c.dir, Err: fmt.Errorf("commit directory %s: remove the stale sidecar %s: %w", name, p, err)}
		}
	}
	side := c.SidecarPath(name, sharedSuffix)
	if len(shared) > 0 {
		if err := c.WriteSidecar(name, sharedSuffix, encodeShare(shared)); err != nil {
			return "", false, &WriteError{Dir: c.dir, Err: fmt.Errorf("commit directory %s: %w", name, err)}
		}
	}
	won, err = atomicfile.PublishDir(tmp, dir)
	if (err != nil || !won) && len(shared) > 0 {
		// The list describes tmp, which is not what is published (a
		// directory there now came without the update lock).
		os.Remove(side)
	}
	if err != nil {
		return "", false, &WriteError{Dir: c.dir, Err: fmt.Errorf("install commit directory %s: %w", dir, err)}
	}
	return dir, won, nil
}

// maxShareHomes bounds the commit directories one commit shares with.
const maxShareHomes = 8

// maxSharedFile bounds the shared sidecar read back: a line per shared
// directory, at most MaxFiles of them.
const maxSharedFile = 64 << 20

// Holder returns the name of the commit directory that holds p
// (slash-separated, relative to the commit's directory) when p is a shared
// directory or lies below one; ok is false when p is in the commit's own
// directory.
func (s Share) Holder(p string) (name string, ok bool) {
	if len(s) == 0 {
		return "", false
	}
	for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
		if h, ok := s[q]; ok {
			return h, true
		}
	}
	return "", false
}

// homes lists the names of the directories s shares with, sorted.
func (s Share) homes() []string {
	set := map[string]bool{}
	for _, h := range s {
		set[h] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// encodeShare is the shared sidecar's content: a first line "homes" and
// the names of the directories shared with (sorted), which collection reads
// alone, then a line "<name> <path>" per shared directory, sorted by path.
func encodeShare(s Share) []byte {
	var b bytes.Buffer
	b.WriteString(homesTag)
	for _, h := range s.homes() {
		b.WriteByte(' ')
		b.WriteString(h)
	}
	b.WriteByte('\n')
	for _, p := range slices.Sorted(maps.Keys(s)) {
		b.WriteString(s[p])
		b.WriteByte(' ')
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// homesTag starts the shared sidecar's first line.
const homesTag = "homes"

// maxHomesLine bounds the sidecar's first line: the tag and at most
// maxShareHomes directory names.
const maxHomesLine = len(homesTag) + (maxShareHomes+1)*(41+1+maxGenDigits) + 1

// parseHomes reads the sidecar's first line (without its newline): the
// directories shared with, by name (IsDirName), sorted, each once.
func parseHomes(line string) ([]string, error) {
	f := strings.Split(line, " ")
	if f[0] != homesTag || len(f) < 2 {
		return nil, fmt.Errorf("first line %q does not name the commits shared with", line)
	}
	homes := f[1:]
	for i, h := range homes {
		if !IsDirName(h) || i > 0 && homes[i-1] >= h {
			return nil, fmt.Errorf("first line %q: %q is not the name of a commit directory in order", line, h)
		}
	}
	return homes, nil
}

// parseShare reads a shared sidecar, refusing anything encodeShare does
// not write: a directory name that is not a commit directory's, a path
// that is not a clean relative one, a first line that does not name
// exactly the directories the other lines do.
func parseShare(b []byte) (Share, error) {
	head, rest, ok := strings.Cut(string(b), "\n")
	if !ok {
		return nil, fmt.Errorf("no first line")
	}
	homes, err := parseHomes(head)
	if err != nil {
		return nil, err
	}
	s := Share{}
	for line := range strings.Lines(rest) {
		home, p, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok || !strings.HasSuffix(line, "\n") || !IsDirName(home) ||
			p == "" || !fs.ValidPath(p) || p == "." {
			return nil, fmt.Errorf("malformed line %q", strings.TrimSuffix(line, "\n"))
		}
		s[p] = home
	}
	if got := s.homes(); !slices.Equal(got, homes) {
		return nil, fmt.Errorf("first line names %d directories, the lines %d", len(homes), len(got))
	}
	return s, nil
}

// sharedHomes returns the names of the directories that the commit
// directory called name shares with, reading only the first line of its
// list (collection runs at the start of every process alone with the
// cache, and the list has a line per shared entry): nil when it shares
// nothing.
func (c *Cache) sharedHomes(name string) ([]string, error) {
	p := c.SidecarPath(name, sharedSuffix)
	f, size, err := pkgfile.OpenOwnFile(p, maxSharedFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, min(size, int64(maxHomesLine)))
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	line, _, ok := strings.Cut(string(buf[:n]), "\n")
	if !ok {
		return nil, fmt.Errorf("%s: no first line within %d bytes", p, maxHomesLine)
	}
	homes, err := parseHomes(line)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return homes, nil
}

// Shared returns what the commit directory called name (Snapshot.Name)
// shares with other commits' directories: nil when it holds its whole
// tree. A sidecar that cannot be read or parsed is an error naming it; the
// caller then treats the directory as damaged.
func (c *Cache) Shared(name string) (Share, error) {
	p := c.SidecarPath(name, sharedSuffix)
	b, err := pkgfile.ReadOwnFile(p, maxSharedFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := parseShare(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

// shareable decides whether share, offered for an update from the commit
// directory prev (whose tree is prevTree) to commit id (whose tree is next), may be
// used: it returns share with id's totals for the limits, or nil when the
// update must materialize in full — the trees hold symbolic links (as for
// an update in place), prev's totals are unknown, share names too many
// commits, or its list would be over maxSharedFile. It fails only when id
// is over the limits or its tree cannot be read.
func (c *Cache) shareable(share Share, repo *git.Repository, prev string, prevTree *object.Tree, id string, next *object.Tree) (Share, treeStats, error) {
	if len(share) == 0 || prevTree == nil {
		return nil, treeStats{}, nil
	}
	size := 0
	for p := range share {
		size += len(p) + 42 // a line of the sidecar: the commit, a space, the path, a newline
	}
	if size > maxSharedFile {
		c.log.Debug("the list of what the commit would share is over its cap; materializing in full", "commit", id, "bytes", size)
		return nil, treeStats{}, nil
	}
	if n := len(share.homes()); n > maxShareHomes {
		c.log.Debug("previous commit shares with too many others; materializing in full", "commit", prev, "shares_with", n)
		return nil, treeStats{}, nil
	}
	stats, ok := c.readTreeStats(prev)
	if !ok || stats.links > 0 {
		return nil, treeStats{}, nil
	}
	maxFile, maxTotal := c.treeLimits()
	pl := &planner{repo: repo, commit: id, maxFile: maxFile}
	if err := pl.diff(prevTree, next, "."); err != nil {
		if errors.Is(err, errNotInPlace) {
			return nil, treeStats{}, nil
		}
		return nil, treeStats{}, err
	}
	total := treeStats{files: stats.files - pl.gone.files + pl.added.files, bytes: stats.bytes - pl.gone.bytes + pl.added.bytes}
	if err := checkTotals(id, total, maxTotal); err != nil {
		return nil, treeStats{}, err
	}
	return share, total, nil
}
