// Package gitcache keeps a local, immutable copy of a git repository's
// commits for a plugin registry.
//
// A Cache owns one directory, <root>/<name>-<hash>/, for one (URL, ref,
// subdir) configuration:
//
//	lock          shared by every process using the cache (sdk/filelock); held shared
//	              for the life of a Cache, taken exclusive at Open to collect
//	              unreferenced commits when no other process is using them
//	update.lock   exclusive while the repository or state.json changes
//	repo/         a bare repository filled with go-git (clone and fetch)
//	state.json    the commit the configured ref resolved to at the last update
//	commits/<sha> that commit's tree (only the subdir, if one is configured),
//	              materialized once into a temporary directory and renamed
//	              into place, never changed afterwards
//	commits/<sha>-<n>
//	              a copy of that tree materialized again by Repair (n = 1, 2,
//	              ...), published under its own name: a commit's directory is
//	              its copy of highest n (repair.go)
//	commits/<name>.<suffix>
//	              sidecars of the directory <name> (.tree, .shared, the
//	              caller's index)
//	commits/.tomb-<name>
//	              a directory being removed: renamed out of its commit's
//	              name first, never served, finished by a later collection
//
// Every directory a Cache hands out therefore stays valid while the Cache is
// open, even when an update moves the ref or a repair replaces it. Commit
// directories other than the current one are removed at a later Open, and
// only when no other process holds the cache.
//
// Updates fetch only the ref's newest commit (a shallow fetch); a commit
// asked for by id is looked for in the full history. Network access happens
// only in Update and, when asked to, in Commit. A
// cache that was damaged or partly deleted is repaired by fetching into a
// fresh repository.
package gitcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/filelock"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/regcache"
)

// Mode says how far Update goes to the network.
type Mode int

const (
	// Check asks the remote where the ref points and fetches only when it
	// moved or the commit is not cached.
	Check Mode = iota + 1
	// Fetch fetches the ref unconditionally.
	Fetch
)

// Config configures a Cache.
type Config struct {
	// Root is the directory holding the caches of every registry
	// (<cache_dir>/gitregistry).
	Root string
	// Name names the registry; it only makes the cache directory readable.
	Name string
	// URL is the repository: https://, http://, ssh://, git://, file://,
	// scp-like user@host:path, or a local path.
	URL string
	// Ref is a branch, a tag, a full ref name or a full commit id; empty
	// means the remote's HEAD.
	Ref string
	// Subdir limits the materialized tree to one directory of the
	// repository (slash-separated, relative); empty means the whole tree.
	Subdir string
	// Getenv reads configuration (proxies); nil reads nothing.
	Getenv func(string) string
	// Environ is the environment for the git credential helper; nil means
	// the process environment.
	Environ []string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// BeforeWrite, when set, is called before every write to a file of the
	// cache (repository, commit directories, state) with the file's path and
	// the number of bytes about to be written; an error it returns fails
	// that write as the file system would. Tests use it to simulate a full
	// disk and to count the bytes an update writes.
	BeforeWrite func(path string, n int) error

	// limits, when set, lowers MaxFileSize, MaxTotalSize and MaxPackSize
	// (tests only).
	limits struct{ file, total, pack int64 }
	// beforeRemove, when set, is called with each path a removal of a
	// commit directory (removeCommitDir) is about to rename away or remove,
	// one entry at a time (tests only: they kill the process there).
	beforeRemove func(path string)
	// Reusable, when set, is asked before an update turns the previous
	// commit's directory dir into the new commit's (see inplace.go):
	// it reports whether the directory is still whole, as far as the caller
	// can tell cheaply. A directory it refuses is left alone and the new
	// commit materialized beside it, from the repository.
	Reusable func(commit, dir string) bool
}

// Snapshot is one materialized commit.
type Snapshot struct {
	// Commit is the full commit id.
	Commit string
	// Dir is the absolute directory holding the commit's tree (or its
	// configured subdir).
	Dir string
}

// ErrNotCached reports that the content is not in the cache and the network
// may not be used.
var ErrNotCached = errors.New("not cached")

// ErrCommitNotFound reports a commit id that neither the cache nor the remote
// knows.
var ErrCommitNotFound = errors.New("commit not found")

// RemoteError is a failure to reach or read the remote repository.
type RemoteError struct {
	// URL is the remote, without credentials.
	URL string
	// Err is the transport's error, with any password removed.
	Err error
}

// Error names the remote and the cause.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("git remote %s: %v", e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *RemoteError) Unwrap() error { return e.Err }

// Status returns the HTTP status the remote answered with, or 0.
func (e *RemoteError) Status() int {
	err := e.Err
	// go-git wraps HTTP errors in types that do not unwrap.
	var ue *plumbing.UnexpectedError
	var pe *plumbing.PermanentError
	if errors.As(err, &ue) {
		err = ue.Err
	} else if errors.As(err, &pe) {
		err = pe.Err
	}
	var he *githttp.Err
	switch {
	case errors.As(err, &he) && he.Response != nil:
		return he.Response.StatusCode
	case !strings.HasPrefix(e.URL, "http"):
		return 0
	case errors.Is(err, transport.ErrAuthenticationRequired):
		return http.StatusUnauthorized
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return http.StatusForbidden
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return http.StatusNotFound
	}
	return 0
}

// RefNotFoundError reports a ref the remote does not have.
type RefNotFoundError struct {
	// URL is the remote, without credentials.
	URL string
	// Ref is the ref asked for; empty means HEAD.
	Ref string
}

// Error names the remote and the ref.
func (e *RefNotFoundError) Error() string {
	ref := e.Ref
	if ref == "" {
		ref = "HEAD"
	}
	msg := fmt.Sprintf("git remote %s has no ref %q", e.URL, ref)
	if len(ref) >= 4 && len(ref) < 40 && strings.Trim(strings.ToLower(ref), "0123456789abcdef") == "" {
		msg += " (a commit id must be given in full, 40 hex digits)"
	}
	return msg
}

// ContentError reports a commit whose tree cannot be materialized safely.
type ContentError struct {
	// Commit is the commit id.
	Commit string
	// Detail says what is wrong.
	Detail string
}

// Error names the commit and the problem.
func (e *ContentError) Error() string {
	return fmt.Sprintf("commit %s: %s", e.Commit, e.Detail)
}

// Cache is one registry's cache. Its methods are safe for concurrent use.
type Cache struct {
	cfg        Config
	remote     *remote
	dir        string
	repoDir    string
	commitsDir string
	statePath  string
	log        *slog.Logger

	life *filelock.File // held shared while the Cache is open

	mu   sync.Mutex // serializes updates and materialization in-process
	auth transport.AuthMethod

	hmu    sync.Mutex
	handed map[string]bool // names of the directories of the snapshots returned: roots maybe in use

	rmu     sync.Mutex
	refused map[string]bool // repository files refused for reading and warned of (refusalLog)
}

// IsCommitID reports whether s is a full, lower-case hex commit id: 40
// digits 0-9 and a-f. (A loop, not a regular expression compiled when the
// package is initialized: every process, the hook's included, would pay
// for compiling it before main.)
func IsCommitID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// normalizeRef returns ref in lower case when it is a full commit id in
// any case (40 hex digits), as git reads one, and ref unchanged otherwise:
// an abbreviation stays a branch or tag name. (Only SHA-1 ids are
// followed: IsCommitID is 40 digits.)
func normalizeRef(ref string) string {
	if len(ref) == 40 && IsCommitID(strings.ToLower(ref)) {
		return strings.ToLower(ref)
	}
	return ref
}

// Dir returns the directory Open uses for cfg.
func Dir(cfg Config) string {
	h := sha256.Sum256([]byte(cfg.URL + "\x00" + normalizeRef(cfg.Ref) + "\x00" + cleanSubdir(cfg.Subdir)))
	return filepath.Join(cfg.Root, regcache.NamePart(cfg.Name)+"-"+hex.EncodeToString(h[:])[:16])
}

func cleanSubdir(s string) string {
	s = strings.Trim(strings.ReplaceAll(s, "\\", "/"), "/")
	if s == "" || s == "." {
		return ""
	}
	return s
}

// ValidateSubdir checks a --subdir value: relative, slash-separated, with no
// "." or ".." component.
func ValidateSubdir(s string) error {
	s = cleanSubdir(s)
	if s == "" {
		return nil
	}
	if strings.HasPrefix(s, "/") || filepath.IsAbs(s) {
		return fmt.Errorf("subdir %q is absolute", s)
	}
	for _, part := range strings.Split(s, "/") {
		if err := checkName(part); err != nil {
			return fmt.Errorf("subdir %q: %w", s, err)
		}
	}
	return nil
}

// checkName rejects a component of a configured subdir that could not be
// a plain path component.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty path component")
	case name == "." || name == "..":
		return fmt.Errorf("path component %q", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("path component %q contains a separator or NUL", name)
	}
	return nil
}

// Open opens (creating as needed) the cache for cfg. It does not touch the
// network. When no other process is using the cache it first removes the
// commit directories that state.json no longer references.
func Open(ctx context.Context, cfg Config) (*Cache, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Subdir = cleanSubdir(cfg.Subdir)
	if err := ValidateSubdir(cfg.Subdir); err != nil {
		return nil, err
	}
	if cfg.Ref != "" && strings.ContainsAny(cfg.Ref, "\x00 ~^:?*[\\") {
		return nil, fmt.Errorf("ref %q is not a valid git ref name", cfg.Ref)
	}
	cfg.Ref = normalizeRef(cfg.Ref)
	r, err := parseRemote(cfg.URL)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("cache root %s: %w", cfg.Root, err)
	}
	cfg.Root = root
	c := &Cache{
		cfg:     cfg,
		remote:  r,
		log:     cfg.Logger,
		handed:  map[string]bool{},
		refused: map[string]bool{},
	}
	c.dir = Dir(cfg)
	c.repoDir = filepath.Join(c.dir, "repo")
	c.commitsDir = filepath.Join(c.dir, "commits")
	c.statePath = filepath.Join(c.dir, regcache.StateFile)
	c.auth = r.auth()
	if err := os.MkdirAll(c.commitsDir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	life, err := filelock.Open(filepath.Join(c.dir, "lock"))
	if err != nil {
		return nil, err
	}
	c.life = life
	excl, err := life.TryLock(filelock.Exclusive)
	if errors.Is(err, errors.ErrUnsupported) {
		// No file locks on this system: never collect, since another
		// process may be using what would go.
		return c, nil
	}
	if err != nil {
		life.Close()
		return nil, err
	}
	if excl {
		c.collectIfNotUpdating()
	}
	// Changing the mode is not atomic; another process may slip in
	// between, which is harmless: nothing has been handed out yet.
	if err := life.Lock(ctx, filelock.Shared); err != nil {
		life.Close()
		return nil, err
	}
	return c, nil
}

// Close releases the cache. Directories it handed out may be collected by a
// later Open.
func (c *Cache) Close() error {
	return c.life.Close()
}

// URL returns the remote URL without credentials.
func (c *Cache) URL() string { return c.remote.url }

// Path returns the cache's directory.
func (c *Cache) Path() string { return c.dir }

// SidecarPath returns the path of a file kept beside the commit directory
// called name (Snapshot.Name; for example an index derived from it); it
// describes that directory only, not another copy of the commit's tree,
// and is collected with it.
func (c *Cache) SidecarPath(name, suffix string) string {
	return filepath.Join(c.commitsDir, name+"."+suffix)
}

// collectIfNotUpdating collects unless a process holds the update lock. A
// process alone with the cache updating in place (updateInPlace) changes
// its shared life lock to an exclusive one and back, which is not atomic
// (on Linux, flock(2) removes the lock held before taking the new one, and
// a non-blocking attempt that fails leaves none): for that moment this
// Open can take the life lock exclusively although that process is alive
// and may have handed out roots, which a collection would remove. It holds
// the update lock throughout, so a collection that cannot take the update
// lock at once is left to a later start. The caller holds the life lock
// exclusively.
func (c *Cache) collectIfNotUpdating() {
	l, err := filelock.Open(filepath.Join(c.dir, "update.lock"))
	if err != nil {
		return
	}
	defer l.Close()
	if ok, err := l.TryLock(filelock.Exclusive); err != nil || !ok {
		c.log.Debug("another process is updating the cache; not collecting", "err", err)
		return
	}
	c.collect()
}

// collect removes commit directories and sidecars other than the current
// commit's directory and those it shares with, and abandoned temporary
// directories and tombstones. A directory is removed through a tombstone
// (removeCommitDir), so that a collection killed halfway never leaves a
// partly removed directory under a commit's name. The caller holds the
// life lock exclusively, and the update lock.
func (c *Cache) collect() {
	st := c.stateOr("removing every commit directory")
	if tmps, err := filepath.Glob(filepath.Join(c.dir, ".tmp-*")); err == nil {
		for _, p := range tmps {
			os.Remove(p) // abandoned atomic writes of state.json
		}
	}
	// The current commit's directory, and the directories it shares with,
	// stay, with their sidecars (one may be asked for by id again). Older
	// copies of the current commit's tree (Repair) go.
	keep := map[string]bool{}
	if st != nil {
		if name, _, ok := c.commitGen(st.Commit); ok {
			keep[name] = true
			homes, err := c.sharedHomes(name)
			if err != nil {
				c.log.Warn("cannot tell which commit directories the current one shares; keeping them all", "commit", st.Commit, "err", err)
				return
			}
			for _, h := range homes {
				keep[h] = true
			}
		}
	}
	ents, err := os.ReadDir(c.commitsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		p := filepath.Join(c.commitsDir, n)
		if strings.HasPrefix(n, ".") {
			// Never a commit's directory, nor a sidecar: a tombstone
			// (removeCommitDir) or a temporary directory that was never
			// published, its process killed.
			if err := c.removeTree(p); err != nil {
				c.log.Warn("cannot remove an abandoned directory", "path", p, "err", err)
			}
			continue
		}
		base, _, side := strings.Cut(n, ".")
		if keep[base] {
			continue
		}
		if side {
			// The sidecar of a directory removed before (or of none).
			if err := os.RemoveAll(p); err != nil {
				c.log.Warn("cannot remove an unreferenced commit's file", "path", p, "err", err)
			}
			continue
		}
		if err := c.removeCommitDir(n); err != nil {
			c.log.Warn("cannot remove unreferenced commit", "path", p, "err", err)
			continue
		}
		c.log.Debug("removed unreferenced commit", "path", p)
	}
}

// state is what state.json records.
type state struct {
	// Name is the registry's name (Config.Name): symposium-pm status tells
	// by it which of the caches whose names render alike is a registry's.
	Name      string    `json:"name,omitempty"`
	URL       string    `json:"url"`
	Ref       string    `json:"ref"`
	RefHash   string    `json:"ref_hash"`
	Commit    string    `json:"commit"`
	FetchedAt time.Time `json:"fetched_at"`
}

// maxStateFile bounds state.json read back: what it records is a few
// hundred bytes, a long URL included.
const maxStateFile = 64 << 10

// readState reads state.json. It is read on the hook path, so it costs
// what os.ReadFile costs (pkgfile.ReadOwnFile): a FIFO, a device or a link
// to one put in its place is refused once open, never waited on or read,
// and a file over maxStateFile is refused before it is read, each with a
// pkgfile error naming the file. An absent file's error wraps
// fs.ErrNotExist.
func (c *Cache) readState() (*state, error) {
	b, err := pkgfile.ReadOwnFile(c.statePath, maxStateFile)
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", c.statePath, err)
	}
	if !IsCommitID(st.Commit) {
		return nil, fmt.Errorf("%s: invalid commit %q", c.statePath, st.Commit)
	}
	return &st, nil
}

// stateOr reads state.json for a caller that goes on without it, doing
// what then says: a state.json that is there but cannot be used (damaged,
// not a regular file, over its cap) is a warning naming the file. It is
// replaced by the next update, which writes state.json afresh.
func (c *Cache) stateOr(then string) *state {
	st, err := c.readState()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("cache state cannot be read; "+then, "file", c.statePath, "err", err)
		}
		return nil
	}
	return st
}

func (c *Cache) writeState(st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return c.writeFileAtomic(c.statePath, append(b, '\n'))
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// into place.
func (c *Cache) writeFileAtomic(path string, data []byte) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return &WriteError{Dir: c.dir, Err: err}
	}
	defer f.Abort()
	if _, err := (&hookWriter{w: f, path: f.Name(), hook: c.cfg.BeforeWrite}).Write(data); err != nil {
		return &WriteError{Dir: c.dir, Err: fmt.Errorf("write %s: %w", path, err)}
	}
	if err := f.Commit(); err != nil {
		return &WriteError{Dir: c.dir, Err: err}
	}
	return nil
}

// WriteSidecar writes a sidecar of the commit directory called name
// (SidecarPath) atomically.
func (c *Cache) WriteSidecar(name, suffix string, data []byte) error {
	return c.writeFileAtomic(c.SidecarPath(name, suffix), data)
}

// Current returns the commit of the last update, materializing it from the
// local repository if its directory is missing. It never touches the
// network; a registry never updated yields ErrNotCached.
func (c *Cache) Current(ctx context.Context) (Snapshot, error) {
	st := c.stateOr("the registry is not cached until it is updated")
	if st == nil {
		return Snapshot{}, fmt.Errorf("registry %s: %w", c.remote.url, ErrNotCached)
	}
	if dir, ok := c.commitDir(st.Commit); ok {
		return c.hand(Snapshot{Commit: st.Commit, Dir: dir}), nil
	}
	return c.Commit(ctx, st.Commit, false)
}

// Commit returns the materialized tree of a commit given by full id. When the
// commit is not in the local repository and network is true, the remote's
// branches and tags are fetched to find it; otherwise the result is
// ErrNotCached. A commit the remote does not have is ErrCommitNotFound.
func (c *Cache) Commit(ctx context.Context, commit string, network bool) (Snapshot, error) {
	snap, err := c.commit(ctx, commit, network)
	if err != nil {
		return Snapshot{}, err
	}
	return c.hand(snap), nil
}

func (c *Cache) commit(ctx context.Context, commit string, network bool) (Snapshot, error) {
	if !IsCommitID(commit) {
		return Snapshot{}, fmt.Errorf("%q is not a full commit id: %w", commit, ErrCommitNotFound)
	}
	if dir, ok := c.commitDir(commit); ok {
		return Snapshot{Commit: commit, Dir: dir}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	unlock, err := c.updateLock(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	h := plumbing.NewHash(commit)
	repo, err := c.openRepo(false)
	if err == nil {
		if _, cerr := repo.CommitObject(h); cerr == nil {
			snap, merr := c.materialize(ctx, repo, h, nil)
			if merr == nil || !network {
				return snap, merr
			}
			c.log.Warn("cached repository is damaged; fetching again", "commit", commit, "err", merr)
		}
	}
	if !network {
		return Snapshot{}, fmt.Errorf("commit %s of %s: %w", commit, c.remote.url, ErrNotCached)
	}
	if _, err := c.list(ctx); err != nil {
		return Snapshot{}, err
	}
	repo, err = c.fetchCommit(ctx, h)
	if err != nil {
		return Snapshot{}, err
	}
	return c.materialize(ctx, repo, h, nil)
}

// Update brings the cache up to date with the remote ref: Check fetches
// only when the ref moved; Fetch always fetches. It reports the current
// snapshot and whether its commit changed.
func (c *Cache) Update(ctx context.Context, mode Mode) (Snapshot, bool, error) {
	return c.updateSharing(ctx, mode, nil)
}

func (c *Cache) updateSharing(ctx context.Context, mode Mode, share func(prev string) Share) (Snapshot, bool, error) {
	snap, changed, err := c.update(ctx, mode, share)
	if err != nil {
		return Snapshot{}, false, err
	}
	return c.hand(snap), changed, nil
}

func (c *Cache) update(ctx context.Context, mode Mode, share func(prev string) Share) (Snapshot, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	unlock, err := c.updateLock(ctx)
	if err != nil {
		return Snapshot{}, false, err
	}
	defer unlock()
	old := c.stateOr("fetching the ref afresh")

	if IsCommitID(c.cfg.Ref) {
		return c.updatePinned(ctx, old)
	}
	refs, err := c.list(ctx)
	if err != nil {
		return Snapshot{}, false, err
	}
	name, adv, ok := resolveRef(refs, c.cfg.Ref)
	if !ok {
		return Snapshot{}, false, &RefNotFoundError{URL: c.remote.url, Ref: c.cfg.Ref}
	}
	if mode == Check && old != nil && old.Ref == name.String() && old.RefHash == adv.String() {
		if dir, ok := c.commitDir(old.Commit); ok {
			c.log.Debug("registry is current", "url", c.remote.url, "commit", old.Commit)
			return Snapshot{Commit: old.Commit, Dir: dir}, false, nil
		}
	}
	var repo *git.Repository
	var commit plumbing.Hash
	if mode == Check {
		// The advertised object may already be here (say, the ref moved back).
		if r, err := c.openRepo(false); err == nil {
			if h, err := peel(r, adv); err == nil {
				repo, commit = r, h
			}
		}
	}
	if repo == nil {
		spec := config.RefSpec("+" + name.String() + ":refs/symposium/fetched")
		repo, err = c.fetchRepaired(ctx, []config.RefSpec{spec}, c.fetchDepth(old))
		if err != nil {
			return Snapshot{}, false, err
		}
		commit, err = peel(repo, adv)
		if err != nil {
			return Snapshot{}, false, &RemoteError{URL: c.remote.url, Err: fmt.Errorf("ref %s: %w", name, err)}
		}
	}
	var snap Snapshot
	inPlace := false
	if old != nil {
		snap, inPlace, err = c.updateInPlace(ctx, old.Commit, commit)
		if err != nil {
			return Snapshot{}, false, err
		}
	}
	if !inPlace {
		var sh Share
		if share != nil && old != nil && old.Commit != commit.String() {
			if prevDir, ok := c.commitDir(old.Commit); ok {
				sh = share(filepath.Base(prevDir))
			}
		}
		if snap, err = c.materialize(ctx, repo, commit, sh); err != nil {
			return Snapshot{}, false, err
		}
	}
	st := &state{Name: c.cfg.Name, URL: c.remote.url, Ref: name.String(), RefHash: adv.String(), Commit: snap.Commit, FetchedAt: time.Now().UTC()}
	if err := c.writeState(st); err != nil {
		return Snapshot{}, false, err
	}
	changed := old == nil || old.Commit != snap.Commit
	c.log.Debug("registry updated", "url", c.remote.url, "ref", name.String(), "commit", snap.Commit, "changed", changed)
	return snap, changed, nil
}

// fetchDepth is the depth of an update's fetch. A first fetch takes only the
// ref's newest commit (depth 1). Later, a shallow fetch would bring the whole
// tree of the new commit again (the server cannot subtract what the client
// has across a deepen request), so when the repository still has the commit
// served now, the fetch is not deepened and the server sends only the
// commits and objects the repository lacks: the change.
func (c *Cache) fetchDepth(old *state) int {
	if old == nil {
		return 1
	}
	repo, err := c.openRepo(false)
	if err != nil {
		return 1
	}
	if _, err := repo.CommitObject(plumbing.NewHash(old.Commit)); err != nil {
		return 1
	}
	return 0
}

// updatePinned handles a ref that is a commit id: it is fetched only when
// missing, whatever the mode.
func (c *Cache) updatePinned(ctx context.Context, old *state) (Snapshot, bool, error) {
	snap, err := c.commitUnlocked(ctx)
	if err != nil {
		return Snapshot{}, false, err
	}
	st := &state{Name: c.cfg.Name, URL: c.remote.url, Ref: c.cfg.Ref, RefHash: c.cfg.Ref, Commit: snap.Commit, FetchedAt: time.Now().UTC()}
	if err := c.writeState(st); err != nil {
		return Snapshot{}, false, err
	}
	return snap, old == nil || old.Commit != snap.Commit, nil
}

// commitUnlocked materializes the pinned commit; the caller holds the mutex
// and the update lock.
func (c *Cache) commitUnlocked(ctx context.Context) (Snapshot, error) {
	commit := c.cfg.Ref
	if dir, ok := c.commitDir(commit); ok {
		return Snapshot{Commit: commit, Dir: dir}, nil
	}
	h := plumbing.NewHash(commit)
	if repo, err := c.openRepo(false); err == nil {
		if _, err := repo.CommitObject(h); err == nil {
			if snap, err := c.materialize(ctx, repo, h, nil); err == nil {
				return snap, nil
			}
		}
	}
	if _, err := c.list(ctx); err != nil {
		return Snapshot{}, err
	}
	repo, err := c.fetchCommit(ctx, h)
	if err != nil {
		return Snapshot{}, err
	}
	return c.materialize(ctx, repo, h, nil)
}

// updateLock takes the cross-process update lock.
func (c *Cache) updateLock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(c.commitsDir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	l, err := filelock.Open(filepath.Join(c.dir, "update.lock"))
	if err != nil {
		return nil, err
	}
	if err := l.Lock(ctx, filelock.Exclusive); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		l.Close()
		return nil, err
	}
	return func() { l.Close() }, nil
}

// list asks the remote for its refs (git ls-remote), retrying once with
// credentials from git's credential helpers when the remote asks for them.
func (c *Cache) list(ctx context.Context) ([]*plumbing.Reference, error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{c.remote.url}})
	proxy, err := c.remote.proxy(c.cfg.Getenv)
	if err != nil {
		return nil, err
	}
	opts := &git.ListOptions{Auth: c.auth, PeelingOption: git.AppendPeeled, ProxyOptions: proxy}
	refs, err := rem.ListContext(ctx, opts)
	if err != nil && c.auth == nil && (errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)) {
		environ := c.cfg.Environ
		if environ == nil {
			environ = os.Environ()
		}
		if a := c.remote.credentialFill(ctx, environ); a != nil {
			c.auth = a
			opts.Auth = a
			refs, err = rem.ListContext(ctx, opts)
		}
	}
	if err != nil {
		return nil, &RemoteError{URL: c.remote.url, Err: c.remote.scrub(err)}
	}
	return refs, nil
}

// resolveRef finds want among the advertised refs: empty means HEAD; a name
// is tried as given (if it starts with refs/), then as a branch, then as a
// tag. It returns the full ref name and its advertised object.
func resolveRef(refs []*plumbing.Reference, want string) (plumbing.ReferenceName, plumbing.Hash, bool) {
	byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	for _, r := range refs {
		byName[r.Name()] = r
	}
	var candidates []plumbing.ReferenceName
	switch {
	case want == "" || want == "HEAD":
		head, ok := byName[plumbing.HEAD]
		if !ok {
			return "", plumbing.ZeroHash, false
		}
		if head.Type() == plumbing.SymbolicReference {
			candidates = []plumbing.ReferenceName{head.Target()}
		} else {
			return plumbing.HEAD, head.Hash(), true
		}
	case strings.HasPrefix(want, "refs/"):
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(want)}
	default:
		candidates = []plumbing.ReferenceName{plumbing.NewBranchReferenceName(want), plumbing.NewTagReferenceName(want)}
	}
	for _, n := range candidates {
		if r, ok := byName[n]; ok && r.Type() == plumbing.HashReference {
			return n, r.Hash(), true
		}
	}
	return "", plumbing.ZeroHash, false
}

// peel follows annotated tags from h to a commit.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 10 {
		obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("object %s: %w", h, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(repo.Storer, obj)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("tag %s: %w", h, err)
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("object %s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("object %s: tag chain too long", h)
}

// openRepo opens the bare repository, creating it when create is true and
// it is missing or unreadable.
func (c *Cache) openRepo(create bool) (*git.Repository, error) {
	repo, err := c.openStorage()
	if err == nil {
		return repo, nil
	}
	if !create {
		return nil, err
	}
	if !errors.Is(err, git.ErrRepositoryNotExists) {
		c.log.Warn("cached repository is unreadable; starting afresh", "dir", c.repoDir, "err", err)
	}
	return c.initRepo()
}

// initRepo replaces the repository with an empty one.
func (c *Cache) initRepo() (*git.Repository, error) {
	if err := os.RemoveAll(c.repoDir); err != nil {
		return nil, &WriteError{Dir: c.dir, Err: fmt.Errorf("remove damaged repository %s: %w", c.repoDir, err)}
	}
	repo, err := c.initStorage()
	if err != nil {
		return nil, &WriteError{Dir: c.dir, Err: fmt.Errorf("create repository %s: %w", c.repoDir, err)}
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{c.remote.url}}); err != nil {
		return nil, &WriteError{Dir: c.dir, Err: fmt.Errorf("configure repository %s: %w", c.repoDir, err)}
	}
	return repo, nil
}

// fetchRepaired fetches specs into the repository, depth commits deep (0:
// the whole history); when that fails after the remote answered ls-remote,
// the local repository is presumed damaged and the fetch is retried once
// into a fresh one.
func (c *Cache) fetchRepaired(ctx context.Context, specs []config.RefSpec, depth int) (*git.Repository, error) {
	repo, err := c.openRepo(true)
	if err == nil {
		if err = c.fetch(ctx, repo, specs, depth); err == nil {
			return repo, nil
		}
		var we *WriteError
		if errors.As(err, &we) {
			return nil, err // the repository is fine; the disk is not
		}
		var big *PackTooLargeError
		if ctx.Err() != nil || errors.As(err, &big) {
			return nil, &RemoteError{URL: c.remote.url, Err: err}
		}
		c.log.Warn("fetch into cached repository failed; cloning afresh", "url", c.remote.url, "err", err)
	}
	repo, err = c.initRepo()
	if err != nil {
		return nil, err
	}
	if err := c.fetch(ctx, repo, specs, depth); err != nil {
		return nil, c.fetchErr(err)
	}
	return repo, nil
}

// fetchErr classifies a failed fetch: a cache write failure stays one,
// anything else is the remote's.
func (c *Cache) fetchErr(err error) error {
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	return &RemoteError{URL: c.remote.url, Err: err}
}

// allRefs are the refspecs that bring every branch and tag, to find a
// commit by id.
var allRefs = []config.RefSpec{
	"+refs/heads/*:refs/symposium/heads/*",
	"+refs/tags/*:refs/symposium/tags/*",
}

// fetchCommit fetches every branch and tag with their whole history and
// looks the commit up. Updates fetch shallow, so a commit behind a shallow
// boundary can only be found in a full clone: when the first fetch does not
// bring it into a shallow repository, the repository is cloned afresh.
func (c *Cache) fetchCommit(ctx context.Context, h plumbing.Hash) (*git.Repository, error) {
	repo, err := c.fetchRepaired(ctx, allRefs, 0)
	if err != nil {
		return nil, err
	}
	if _, err := repo.CommitObject(h); err == nil {
		return repo, nil
	}
	if shallow, err := repo.Storer.Shallow(); err != nil || len(shallow) == 0 {
		return nil, fmt.Errorf("commit %s on %s: %w", h, c.remote.url, ErrCommitNotFound)
	}
	repo, err = c.initRepo()
	if err != nil {
		return nil, err
	}
	if err := c.fetch(ctx, repo, allRefs, 0); err != nil {
		return nil, c.fetchErr(err)
	}
	if _, err := repo.CommitObject(h); err != nil {
		return nil, fmt.Errorf("commit %s on %s: %w", h, c.remote.url, ErrCommitNotFound)
	}
	return repo, nil
}

// fetch fetches specs into repo. A failure to write the repository (see
// fetchStorage) is a *WriteError.
func (c *Cache) fetch(ctx context.Context, repo *git.Repository, specs []config.RefSpec, depth int) error {
	proxy, err := c.remote.proxy(c.cfg.Getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, _ := repo.Storer.(*fetchStorage)
	if st != nil {
		st.begin(cancel)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName:   "origin",
		RemoteURL:    c.remote.url,
		RefSpecs:     specs,
		Depth:        depth,
		Auth:         c.auth,
		Tags:         git.NoTags,
		Force:        true,
		ProxyOptions: proxy,
	})
	if st != nil {
		if werr := st.end(); werr != nil {
			c.removeTempPacks()
			var big *PackTooLargeError
			if errors.As(werr, &big) {
				return werr // the remote's fault, not the disk's
			}
			return &WriteError{Dir: c.dir, Err: werr}
		}
	}
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if isWriteFailure(err) {
		return &WriteError{Dir: c.dir, Err: err}
	}
	return c.remote.scrub(err)
}

// removeTempPacks removes what a fetch stopped before the end of its pack
// left: go-git keeps the part it received in a temporary file when the pack
// does not parse. The caller holds the update lock, so no other fetch is
// writing one.
func (c *Cache) removeTempPacks() {
	tmps, _ := filepath.Glob(filepath.Join(c.repoDir, "objects", "pack", "tmp_pack_*"))
	for _, p := range tmps {
		if err := os.Remove(p); err != nil {
			c.log.Debug("cannot remove a partial pack", "file", p, "err", err)
		}
	}
}

// isWriteFailure reports a local file system failure (disk full, quota,
// read-only) that go-git returned after the pack was read.
func isWriteFailure(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}
