// Package gitregistry is the Symposium package manager for a plugin
// registry kept in a git repository, such as Symposium's recommendations
// registry or an enterprise's own.
//
// One process serves one registry, configured by command-line flags or, for
// any flag not given, by the initialize environment:
//
//	--name NAME          SYMPOSIUM_GITREGISTRY_NAME    the registry's name: the pm of every id
//	--url URL            SYMPOSIUM_GITREGISTRY_URL     https, http, ssh, git, file URL or local path
//	--ref REF            SYMPOSIUM_GITREGISTRY_REF     branch, tag, full ref or commit (default: HEAD)
//	--subdir DIR         SYMPOSIUM_GITREGISTRY_SUBDIR  the part of the repository that is the registry
//	--no-auto-update     SYMPOSIUM_GITREGISTRY_NO_AUTO_UPDATE=1  refresh only when forced
//
// The name is announced in the initialize result, read once Initialize has
// settled the configuration, so it may come from the initialize environment
// like every other setting.
//
// Entries follow the registry layout (every directory holding SYMPOSIUM.toml
// or SKILL.md, not descending into entries); an entry's id is (NAME, entry
// path, commit id). Content lives under <cache_dir>/gitregistry/ (see
// package gitcache): every commit gets its own immutable directory, so the
// roots handed out stay valid when a refresh moves the registry on, or a
// repair replaces a damaged directory by a copy beside it.
package gitregistry

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/regcache"
)

// Environment variables that configure the registry when the matching flag
// is not given.
const (
	EnvName         = "SYMPOSIUM_GITREGISTRY_NAME"
	EnvURL          = "SYMPOSIUM_GITREGISTRY_URL"
	EnvRef          = "SYMPOSIUM_GITREGISTRY_REF"
	EnvSubdir       = "SYMPOSIUM_GITREGISTRY_SUBDIR"
	EnvNoAutoUpdate = "SYMPOSIUM_GITREGISTRY_NO_AUTO_UPDATE"
)

// Config is a registry's configuration.
type Config struct {
	// Name is the registry's name, the pm of its ids.
	Name string
	// URL is the repository.
	URL string
	// Ref is the branch, tag, full ref name or commit id; empty is HEAD.
	Ref string
	// Subdir is the directory of the repository that holds the registry.
	Subdir string
	// NoAutoUpdate makes refresh do nothing unless forced.
	NoAutoUpdate bool
}

// PM is the git registry package manager. It implements pmserver.PM,
// pmserver.Searcher and pmserver.Refresher.
type PM struct {
	flags Config
	set   map[string]bool // flags given on the command line
	fs    *flag.FlagSet

	mu       sync.Mutex
	cfg      Config
	ready    bool
	root     string // <cache_dir>/gitregistry
	environ  []string
	getenv   func(string) string
	log      *slog.Logger
	cache    *gitcache.Cache
	indexes  map[string]*index // by commit directory (gitcache.Snapshot.Dir)
	reported map[string]bool   // commits whose index head was reported on the hook path (rawanswer.go)

	// beforeWrite is handed to the cache (gitcache.Config.BeforeWrite);
	// tests set it to simulate a full disk.
	beforeWrite func(path string, n int) error
}

// New returns a PM configured by cfg; flags registered with RegisterFlags
// and the initialize environment fill in what cfg leaves empty.
func New(cfg Config) *PM {
	return &PM{flags: cfg, set: map[string]bool{}, indexes: map[string]*index{}, reported: map[string]bool{}, log: slog.New(slog.DiscardHandler)}
}

// RegisterFlags defines --name, --url, --ref, --subdir and --no-auto-update
// on fs. Their values are read when the PM is used, after fs is parsed.
func (p *PM) RegisterFlags(fs *flag.FlagSet) {
	p.fs = fs
	fs.StringVar(&p.flags.Name, "name", p.flags.Name, "registry name: the pm of every id it offers (env "+EnvName+")")
	fs.StringVar(&p.flags.URL, "url", p.flags.URL, "git repository: https://, http://, ssh://, git://, file:// URL, user@host:path or local path (env "+EnvURL+")")
	fs.StringVar(&p.flags.Ref, "ref", p.flags.Ref, "branch, tag, full ref or commit id to follow; default the remote HEAD (env "+EnvRef+")")
	fs.StringVar(&p.flags.Subdir, "subdir", p.flags.Subdir, "directory of the repository holding the registry (env "+EnvSubdir+")")
	fs.BoolVar(&p.flags.NoAutoUpdate, "no-auto-update", p.flags.NoAutoUpdate, "refresh only when forced (env "+EnvNoAutoUpdate+"=1)")
}

// given reports whether a flag was set on the command line (or in the
// Config given to New).
func (p *PM) given(name string, v string) bool {
	if p.fs != nil {
		seen := false
		p.fs.Visit(func(f *flag.Flag) {
			if f.Name == name {
				seen = true
			}
		})
		return seen
	}
	return v != ""
}

func (p *PM) givenBool(name string, v bool) bool {
	if p.fs != nil {
		return p.given(name, "")
	}
	return v
}

// Name returns the registry name: once initialized, the configured one
// (--name, else SYMPOSIUM_GITREGISTRY_NAME from the initialize env); before
// that (only --help asks then) the --name flag, else the variable in the
// process environment, else "gitregistry". The harness reads it after
// Initialize, so a name given only in the initialize env is the one
// announced.
func (p *PM) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ready:
		return p.cfg.Name
	case p.flags.Name != "":
		return p.flags.Name
	case os.Getenv(EnvName) != "":
		return os.Getenv(EnvName)
	}
	return "gitregistry"
}

// Initialize settles the configuration. It does not touch the network.
func (p *PM) Initialize(ctx context.Context, s *pmserver.Session) error {
	cfg := p.flags
	pick := func(flagName, cur, env string) string {
		if p.given(flagName, cur) {
			return cur
		}
		if v, ok := s.Env.Lookup(env); ok {
			return v
		}
		return cur
	}
	cfg.Name = pick("name", cfg.Name, EnvName)
	cfg.URL = pick("url", cfg.URL, EnvURL)
	cfg.Ref = pick("ref", cfg.Ref, EnvRef)
	cfg.Subdir = pick("subdir", cfg.Subdir, EnvSubdir)
	if !p.givenBool("no-auto-update", cfg.NoAutoUpdate) {
		if v, ok := s.Env.Lookup(EnvNoAutoUpdate); ok && v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s=%q: want true or false", EnvNoAutoUpdate, v)
			}
			cfg.NoAutoUpdate = b
		}
	}
	cfg = splitTreeURL(cfg)
	switch {
	case cfg.Name == "":
		return fmt.Errorf("no registry name: pass --name or set %s", EnvName)
	case strings.TrimSpace(cfg.URL) == "":
		return fmt.Errorf("registry %s has no URL: pass --url or set %s", cfg.Name, EnvURL)
	}
	if err := gitcache.ValidateSubdir(cfg.Subdir); err != nil {
		return fmt.Errorf("registry %s: %w", cfg.Name, err)
	}
	cacheDir := s.CacheDir
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no cache_dir given and no user cache directory: %w", err)
		}
		cacheDir = filepath.Join(d, "symposium")
	}
	// The protocol gives each PM <cache_dir>/<its name>/ and nothing else
	// there; the name is made safe for a path as status expects it.
	root, err := filepath.Abs(filepath.Join(cacheDir, regcache.NamePart(cfg.Name)))
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg = cfg
	p.root = root
	p.environ = s.Env.Environ()
	p.getenv = s.Env.Get
	if s.Logger != nil {
		p.log = s.Logger.With("registry", cfg.Name)
	}
	p.ready = true
	return nil
}

// splitTreeURL accepts the GitHub form Symposium's configuration uses for
// a registry inside a repository, https://github.com/OWNER/REPO/tree/REF[/DIR]:
// the URL becomes the repository's, and REF and DIR fill in the ref and
// subdir unless those are given. As in Symposium, REF cannot contain '/'.
func splitTreeURL(cfg Config) Config {
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || !strings.EqualFold(u.Scheme, "https") || !strings.EqualFold(u.Host, "github.com") {
		return cfg
	}
	parts := strings.SplitN(strings.Trim(u.Path, "/"), "/", 5)
	if len(parts) < 4 || parts[2] != "tree" || parts[3] == "" {
		return cfg
	}
	u.Path = "/" + parts[0] + "/" + parts[1]
	cfg.URL = u.String()
	if cfg.Ref == "" {
		cfg.Ref = parts[3]
	}
	if len(parts) == 5 && cfg.Subdir == "" {
		cfg.Subdir = parts[4]
	}
	return cfg
}

// Close releases the cache.
func (p *PM) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cache == nil {
		return nil
	}
	err := p.cache.Close()
	p.cache = nil
	return err
}

// open returns the cache, opening it on first use.
func (p *PM) open(ctx context.Context) (*gitcache.Cache, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ready {
		return nil, errors.New("not initialized")
	}
	if p.cache != nil {
		return p.cache, nil
	}
	c, err := gitcache.Open(ctx, gitcache.Config{
		Root: p.root, Name: p.cfg.Name, URL: p.cfg.URL, Ref: p.cfg.Ref, Subdir: p.cfg.Subdir,
		Getenv: p.getenv, Environ: p.environ, Logger: p.log, BeforeWrite: p.beforeWrite,
		Reusable: reusable,
	})
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", p.cfg.Name, err)
	}
	p.cache = c
	return c, nil
}

// snapshotIndex returns the index of a materialized commit: from memory,
// from the file persisted beside the commit's directory, or built from its
// tree; and the snapshot it describes, which is snap unless snap's
// directory had to be repaired. The persisted index is used only when it
// is intact (its checksum, format and commit match) and the stamps of the
// commit's directories still hold (one stat per directory holding entries,
// none per entry). When a stamp does not hold, the entries are looked for
// on disk: a commit directory whose entries are gone (the cache was partly
// deleted) is materialized again from the local repository, as a new copy
// beside it (gitcache.Cache.Repair: the damaged one stays for the roots
// handed out of it, here or in other processes, until collected); one
// that is whole is stamped again.
func (p *PM) snapshotIndex(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot) (gitcache.Snapshot, *index) {
	p.mu.Lock()
	idx := p.indexes[snap.Dir]
	p.mu.Unlock()
	if idx != nil {
		return snap, idx
	}
	persist := false
	share, err := c.Shared(snap.Name())
	if err != nil {
		// What the directory lacks is unknown: it is materialized whole.
		p.log.Warn("cannot tell which entries the cached commit shares; materializing it again", "commit", snap.Commit, "err", err)
		if snap, err = p.unshare(ctx, c, snap); err != nil {
			return snap, p.unbuilt(snap, err)
		}
		share = nil
	}
	side := c.SidecarPath(snap.Name(), indexSuffix)
	data, err := readIndexFile(side)
	switch {
	case err == nil:
		got, stamps, err := decodeIndex(data, snap.Commit)
		if err == nil && len(share) > 0 && !withHomes(got, share) {
			err = fmt.Errorf("%w: its entries do not match what the commit's directory shares", errBadIndex)
		}
		switch {
		case err != nil:
			p.log.Warn("persisted registry index cannot be used; building it again", "file", side, "err", err)
		case stampsHold(snap.Dir, stamps):
			idx = got
		case got.present(snap.Dir):
			idx, persist = got, true
		default:
			p.log.Warn("cached commit is damaged; materializing it again", "commit", snap.Commit, "dir", snap.Dir)
			repaired, err := c.Repair(ctx, snap)
			if err != nil {
				return snap, p.unbuilt(snap, err)
			}
			// A repaired copy holds its whole tree; its list is read all
			// the same, as for any directory this process did not write.
			snap, share = repaired, nil
			if rs, err := c.Shared(snap.Name()); err == nil {
				share = rs
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		p.log.Warn("persisted registry index cannot be read; building it again", "file", side, "err", err)
	}
	if idx == nil && len(share) > 0 {
		idx = buildSharedIndex(snap.Dir, snap.Commit, share)
		if !withHomes(idx, share) {
			p.log.Warn("cached commit does not hold what it shares; materializing it again", "commit", snap.Commit)
			if snap, err = p.unshare(ctx, c, snap); err != nil {
				return snap, p.unbuilt(snap, err)
			}
			idx = nil
		}
		persist = true
	}
	if idx == nil {
		idx = buildIndex(snap.Dir, snap.Commit)
		p.log.Debug("built registry index", "commit", snap.Commit, "entries", len(idx.Entries))
		persist = true
	}
	if persist {
		p.persist(ctx, c, snap, idx)
	}
	idx.report(p.log)
	p.mu.Lock()
	p.indexes[snap.Dir] = idx
	p.mu.Unlock()
	return snap, idx
}

// unbuilt is the index of a damaged commit that could not be materialized
// again: no entries, and the cause as the registry's problem.
func (p *PM) unbuilt(snap gitcache.Snapshot, err error) *index {
	p.log.Warn("cannot rebuild damaged commit; refresh the registry", "commit", snap.Commit, "err", err)
	return &index{Format: indexFormat, Commit: snap.Commit, Entries: []entry{}, Problem: err.Error()}
}

// persist writes idx beside the commit's directory with the stamps of its
// directories and its active_plugins answer, so that later processes load
// it instead of reading the tree. Failing that is logged, not an error:
// the index is built again when needed.
func (p *PM) persist(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot, idx *index) {
	stamps, err := idx.takeStamps(snap.Dir)
	if err != nil {
		p.log.Debug("cannot stamp the commit's directories; not persisting the index", "err", err)
		return
	}
	idx.Answer = p.encodeAnswer(ctx, snap, idx)
	p.writeIndex(c, snap, idx, stamps)
}

// writeIndex writes idx and its stamps beside the commit's directory.
func (p *PM) writeIndex(c *gitcache.Cache, snap gitcache.Snapshot, idx *index, stamps []stamp) {
	if err := c.WriteSidecar(snap.Name(), indexSuffix, encodeIndex(idx, stamps)); err != nil {
		p.log.Debug("cannot persist registry index", "err", err)
	}
	// The index of an earlier version of this PM, if any.
	os.Remove(c.SidecarPath(snap.Name(), "index.json"))
}

// reusable reports whether a commit's directory may be updated in place
// into the next commit's: the commit has a persisted index whose stamps
// still hold, so its entry directories are where the index found them. A
// directory damaged behind the cache's back is not carried into the next
// commit; that one is then materialized from the repository.
func reusable(commit, dir string) bool {
	data, err := readIndexHead(filepath.Clean(dir) + "." + indexSuffix) // its sidecar (gitcache.Cache.SidecarPath)
	if err != nil {
		return false
	}
	_, stamps, err := decodeHead(data, commit)
	return err == nil && stampsHold(dir, stamps)
}

// current returns the registry as last updated, with no network; ok is false
// for a registry never populated. A never populated registry at a local path
// that does not exist, or is not a repository, is an error: a registry that
// cannot be read is a failure, not an empty registry.
func (p *PM) current(ctx context.Context) (*gitcache.Cache, gitcache.Snapshot, bool, error) {
	c, err := p.open(ctx)
	if err != nil {
		return nil, gitcache.Snapshot{}, false, err
	}
	snap, err := c.Current(ctx)
	if errors.Is(err, gitcache.ErrNotCached) {
		if lerr := c.CheckLocal(); lerr != nil {
			var re *gitcache.RemoteError
			errors.As(lerr, &re)
			return nil, gitcache.Snapshot{}, false, protocol.ErrRegistry(nil, re.URL, 0, "registry %s: %v", p.cfg.Name, lerr)
		}
		return c, snap, false, nil
	}
	if err != nil {
		return nil, gitcache.Snapshot{}, false, err
	}
	return c, snap, true, nil
}

func (p *PM) offer(snap gitcache.Snapshot, e entry) protocol.Offer {
	return protocol.Offer{
		ID:       protocol.PackageID{PM: p.cfg.Name, Name: e.Path, Version: snap.Commit},
		Root:     rootOf(snap.Dir, e),
		Manifest: e.Manifest,
	}
}

// ActivePlugins offers every entry of the registry as last updated. It never
// touches the network; a registry never populated offers nothing.
func (p *PM) ActivePlugins(ctx context.Context, _ []protocol.PackageID) ([]protocol.Offer, error) {
	c, snap, ok, err := p.current(ctx)
	if err != nil || !ok {
		return []protocol.Offer{}, err
	}
	snap, idx := p.snapshotIndex(ctx, c, snap)
	idx.diagnose(ctx, p.cfg.Name, snap.Dir)
	p.keepAnswer(ctx, c, snap, idx)
	return p.offers(snap, idx), nil
}

// offers are the offers of every readable entry of idx.
func (p *PM) offers(snap gitcache.Snapshot, idx *index) []protocol.Offer {
	offers := make([]protocol.Offer, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if e.Problem == "" {
			offers = append(offers, p.offer(snap, e))
		}
	}
	return offers
}

// resolve finds the snapshot an id's version names. "*" is the registry as
// last updated (or, at level check/fetch, as updated now); a commit id is that
// commit; a prefix of the current commit's id is the current commit.
func (p *PM) resolve(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (*gitcache.Cache, gitcache.Snapshot, error) {
	c, err := p.open(ctx)
	if err != nil {
		return nil, gitcache.Snapshot{}, err
	}
	v := strings.TrimSpace(id.Version)
	switch {
	case v == "" || v == protocol.AnyVersion:
		var snap gitcache.Snapshot
		switch update {
		case protocol.UpdateNone:
			snap, err = c.Current(ctx)
		case protocol.UpdateCheck, protocol.UpdateFetch:
			mode := gitcache.Check
			if update == protocol.UpdateFetch {
				mode = gitcache.Fetch
			}
			snap, _, err = c.Update(ctx, mode)
			if err != nil && update == protocol.UpdateCheck {
				if cur, cerr := c.Current(ctx); cerr == nil {
					p.log.Warn("cannot check the registry for updates; using the cached commit", "commit", cur.Commit, "err", err)
					return c, cur, nil
				}
			}
		}
		return c, snap, p.mapErr(err, id)
	case gitcache.IsCommitID(strings.ToLower(v)):
		snap, err := c.Commit(ctx, strings.ToLower(v), update != protocol.UpdateNone)
		return c, snap, p.mapErr(err, id)
	case len(v) < 40 && isHex(v):
		// Abbreviations are refused everywhere: an id's version is exact, and
		// a prefix could name another commit once the repository grows.
		hint := ""
		if cur, err := c.Current(ctx); err == nil && strings.HasPrefix(cur.Commit, strings.ToLower(v)) {
			hint = fmt.Sprintf(" (it abbreviates the current commit %s)", cur.Commit)
		}
		return nil, gitcache.Snapshot{}, protocol.ErrNotFound(id, "%s: version %q is an abbreviated commit id%s; registry %s takes * or a full 40-digit commit id", id, v, hint, p.cfg.Name)
	default:
		return nil, gitcache.Snapshot{}, protocol.ErrNotFound(id, "%s: version %q is not a commit of registry %s; use * or a full 40-digit commit id", id, v, p.cfg.Name)
	}
}

func isHex(s string) bool {
	for _, r := range strings.ToLower(s) {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// mapErr turns a cache error into the protocol error for id.
func (p *PM) mapErr(err error, id protocol.PackageID) error {
	if err == nil {
		return nil
	}
	var re *gitcache.RemoteError
	var rnf *gitcache.RefNotFoundError
	var ce *gitcache.ContentError
	switch {
	case errors.Is(err, gitcache.ErrNotCached):
		return protocol.NewError(protocol.CodeOffline, protocol.IDData{ID: id},
			"%s: registry %s has not been fetched (or not this commit) and update level %q forbids the network; refresh it first", id, p.cfg.Name, protocol.UpdateNone)
	case errors.Is(err, gitcache.ErrCommitNotFound):
		return protocol.ErrNotFound(id, "%s: %v", id, err)
	case errors.As(err, &rnf):
		return protocol.ErrNotFound(id, "%s: %v", id, err)
	case errors.As(err, &ce):
		return protocol.ErrInvalidContent(id, ce.Error())
	case errors.As(err, &re):
		return protocol.ErrRegistry(&id, re.URL, re.Status(), "%s: %v", id, err)
	}
	return err
}

// LoadPlugin offers the entries id names: the entry at path id.Name, or
// else every entry whose plugin is named id.Name, at the commit id.Version
// names ("*" or a commit id). A registry never populated is fetched first,
// unless auto-update is off.
func (p *PM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	update := protocol.UpdateNone
	if v := strings.TrimSpace(id.Version); v != "" && v != protocol.AnyVersion {
		update = protocol.UpdateCheck // a commit not cached is fetched
	} else if _, _, ok, err := p.current(ctx); err != nil {
		return nil, err
	} else if !ok && !p.cfg.NoAutoUpdate {
		update = protocol.UpdateCheck
	}
	c, snap, err := p.resolve(ctx, id, update)
	if err != nil {
		return nil, err
	}
	snap, idx := p.snapshotIndex(ctx, c, snap)
	m := idx.match(id.Name)
	if len(m) == 0 {
		return nil, p.noEntry(id, snap)
	}
	offers := []protocol.Offer{}
	for _, e := range m {
		if e.Problem != "" {
			return nil, p.unreadable(id, snap, e)
		}
		offers = append(offers, p.offer(snap, e))
	}
	return offers, nil
}

// noEntry is the answer to load_plugin and fetch for a name that is
// neither an entry's path nor a plugin's name at the commit served: the
// same -32010 from both (protocol §6.3, §6.4).
func (p *PM) noEntry(id protocol.PackageID, snap gitcache.Snapshot) error {
	return protocol.ErrNotFound(id, "%s: registry %s has no entry or plugin %q at commit %s", id, p.cfg.Name, id.Name, snap.Commit)
}

// unreadable is the answer to load_plugin and fetch for an entry whose
// manifest or SKILL.md cannot be read at all (so there is nothing to offer
// for the host to judge): the same -32014 naming the entry and the problem
// from both.
func (p *PM) unreadable(id protocol.PackageID, snap gitcache.Snapshot, e entry) error {
	eid := protocol.PackageID{PM: p.cfg.Name, Name: e.Path, Version: snap.Commit}
	return protocol.ErrInvalidContent(eid, fmt.Sprintf("%s: registry %s entry %s at commit %s cannot be read: %s", id, p.cfg.Name, e.Path, snap.Commit, e.Problem))
}

// Fetch returns the directory of the entry id names inside the commit's
// checkout, acquiring the commit as the update level allows.
func (p *PM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	if update == "" {
		update = protocol.UpdateNone
	}
	if !update.Valid() {
		return protocol.FetchResult{}, protocol.NewError(protocol.CodeInvalidParams, nil, "fetch: update must be none, check or fetch, not %q", update)
	}
	c, snap, err := p.resolve(ctx, id, update)
	if err != nil {
		return protocol.FetchResult{}, err
	}
	snap, idx := p.snapshotIndex(ctx, c, snap)
	m := idx.match(id.Name)
	if len(m) == 0 {
		return protocol.FetchResult{}, p.noEntry(id, snap)
	}
	if len(m) > 1 {
		p.log.Warn("several entries offer the plugin; fetching the first", "plugin", id.Name, "entry", m[0].Path)
	}
	if m[0].Problem != "" {
		return protocol.FetchResult{}, p.unreadable(id, snap, m[0])
	}
	o := p.offer(snap, m[0])
	return protocol.FetchResult{ID: o.ID, Root: o.Root}, nil
}

// Search matches query, case-insensitively, against entry paths, plugin
// names and skill descriptions (a bare skill's, and those of the skills in
// a plugin's local skill groups) of the registry as last updated, best
// matches first (protocol §6.6; see searchRank), ties by entry path. It
// never touches the network; an empty query matches everything, in entry
// path order.
func (p *PM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	c, snap, ok, err := p.current(ctx)
	if err != nil || !ok {
		return []protocol.SearchHit{}, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	type ranked struct {
		rank int
		path string
		hit  protocol.SearchHit
	}
	var found []ranked
	_, idx := p.snapshotIndex(ctx, c, snap)
	for _, e := range idx.Entries {
		if e.Problem != "" {
			continue
		}
		rank, desc := searchRank(e, q)
		if rank < 0 {
			continue
		}
		found = append(found, ranked{rank, e.Path, protocol.SearchHit{
			ID:          protocol.PackageID{PM: p.cfg.Name, Name: e.Path, Version: snap.Commit},
			Description: desc,
		}})
	}
	slices.SortStableFunc(found, func(a, b ranked) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.path, b.path)
	})
	hits := make([]protocol.SearchHit, len(found))
	for i, f := range found {
		hits[i] = f.hit
	}
	return hits, nil
}

// searchRank says how well entry e matches the lower-case query q, best
// first: 0 its name (the plugin's name, or the last component of its path)
// is q, 1 a name begins with q, 2 a name contains q, 3 its path contains q,
// 4 a description contains q (a bare skill's, or a skill's of a plugin's
// local skill groups); -1 no match. It returns the description the hit
// shows: the entry's own, or else the skill description that matched.
func searchRank(e entry, q string) (int, string) {
	names := [2]string{strings.ToLower(e.Name), strings.ToLower(path.Base(e.Path))}
	rank := -1
	for _, n := range names {
		r := -1
		switch {
		case n == "":
		case n == q:
			r = 0
		case strings.HasPrefix(n, q):
			r = 1
		case strings.Contains(n, q):
			r = 2
		}
		if r >= 0 && (rank < 0 || r < rank) {
			rank = r
		}
	}
	if rank >= 0 {
		return rank, e.Description
	}
	if strings.Contains(strings.ToLower(e.Path), q) {
		return 3, e.Description
	}
	if strings.Contains(strings.ToLower(e.Description), q) {
		return 4, e.Description
	}
	for _, d := range e.Skills {
		if strings.Contains(strings.ToLower(d), q) {
			return 4, d
		}
	}
	return -1, ""
}

// Refresh pulls the registry: at level check only when the ref moved, at
// fetch always, at none not at all. With auto-update off it does nothing
// unless forced. It reports whether the commit the registry serves changed.
func (p *PM) Refresh(ctx context.Context, update protocol.UpdateLevel, force bool) (bool, error) {
	c, err := p.open(ctx)
	if err != nil {
		return false, err
	}
	if p.cfg.NoAutoUpdate && !force {
		p.log.Debug("auto-update is off; not refreshing")
		return false, nil
	}
	mode := gitcache.Check
	switch update {
	case protocol.UpdateNone:
		return false, nil
	case protocol.UpdateFetch:
		mode = gitcache.Fetch
	}
	// The previous commit's index, read before the update (an update in
	// place removes it) while its stamps can still be checked, to derive
	// the new commit's index from it and the change.
	prev := p.previousIndex(c)
	snap, changed, changes, err := c.UpdateSharing(ctx, mode, p.shareFrom(c, prev))
	if err != nil {
		var re *gitcache.RemoteError
		var rnf *gitcache.RefNotFoundError
		var ce *gitcache.ContentError
		switch {
		case errors.As(err, &rnf):
			return false, protocol.ErrRegistry(nil, rnf.URL, 0, "registry %s: %v", p.cfg.Name, err)
		case errors.As(err, &re):
			return false, protocol.ErrRegistry(nil, re.URL, re.Status(), "registry %s: %v", p.cfg.Name, err)
		case errors.As(err, &ce):
			return false, protocol.ErrInvalidContent(protocol.PackageID{PM: p.cfg.Name, Name: p.cfg.Name, Version: ce.Commit}, ce.Error())
		case errors.Is(err, gitcache.ErrCommitNotFound):
			return false, protocol.ErrRegistry(nil, c.URL(), 0, "registry %s: %v", p.cfg.Name, err)
		}
		return false, fmt.Errorf("registry %s: %w", p.cfg.Name, err)
	}
	if changed {
		p.log.Info("registry updated", "commit", snap.Commit)
		p.indexUpdate(ctx, c, snap, prev, changes)
	} else {
		p.log.Debug("registry unchanged", "commit", snap.Commit)
	}
	// refreshed says whether the commit served changed, not whether the
	// remote was asked.
	return changed, nil
}
