package depcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// An active_plugins answer is persisted like a list_deps one: under a key
// naming what was asked (OffersKey), with the stamps of every file and
// directory it was read from. Its value is the offers as JSON. Because the
// entry sits in a directory others can write, a loaded answer is trusted
// only as far as the PM's own inputs go: every offer's root must be one of
// the directories the answer records as read, with the stamp it has now,
// so an entry, however it was written, can never make a PM offer a root it
// did not observe.

// offersFormat versions what an offers entry's value holds; it is part of
// every OffersKey.
const offersFormat = "offers 1"

// OffersKey returns the key of an active_plugins answer: the PM's own
// versioned prefix, the context the answer depends on besides files
// (workspace directory, environment values, a digest of what list_deps
// resolved), and the requested dependencies in order, by digest so that the
// key stays short however many there are.
func OffersKey(prefix string, context []string, deps []protocol.PackageID) string {
	h := sha256.New()
	for _, c := range context {
		fmt.Fprintf(h, "%d:%s", len(c), c)
	}
	h.Write([]byte{0})
	for _, d := range deps {
		fmt.Fprintf(h, "%d:%s%d:%s%d:%s", len(d.PM), d.PM, len(d.Name), d.Name, len(d.Version), d.Version)
	}
	return offersFormat + "\x00" + prefix + "\x00" + hex.EncodeToString(h.Sum(nil))
}

// loadEntry reads and checks the entry under key, trusting the stamps
// c's Verified found fresh within VerifiedWindow, and requiring every one
// of the roots it returns for the value (which it may keep, decoded) to
// be a directory the entry records, absolute and clean. It returns the
// value. A missing entry is fs.ErrNotExist, a stale one errStale;
// anything else is an entry that should not be there (corrupt, truncated,
// written by something else, offering a root it did not record).
func (c *Cache) loadEntry(key string, roots func(value []byte) ([]string, error)) ([]byte, error) {
	if c == nil || c.dir == "" {
		return nil, fs.ErrNotExist
	}
	var dirs map[string]int
	var want []string
	now := time.Now()
	ec := entryCheck{
		trust: func(s Stamp) bool { return c.verified.recent(s, now) },
		// The roots are decoded before the stamps are checked: they name
		// the directories to look for among them.
		decode: func(value []byte) (map[string]int, error) {
			var err error
			if want, err = roots(value); err != nil {
				return nil, err
			}
			dirs = make(map[string]int, len(want))
			for i, r := range want {
				if !absClean(r) {
					return nil, rootError(i, r)
				}
				dirs[r] = i
			}
			return dirs, nil
		},
	}
	value, seen, err := c.readEntry(key, ec)
	if err != nil {
		return nil, err
	}
	for i, r := range want {
		if !seen[dirs[r]] {
			return nil, rootError(i, r)
		}
	}
	return value, nil
}

// absClean reports whether root is absolute and clean, as an offer's root
// must be.
func absClean(root string) bool { return filepath.IsAbs(root) && filepath.Clean(root) == root }

// rootError reports that root, offer i's, is not a directory the answer
// was read from.
func rootError(i int, root string) error {
	why := ""
	if !absClean(root) {
		why = ": not an absolute clean path"
	}
	return fmt.Errorf("depcache: cached offer %d has root %q, which is not a directory the answer was read from%s", i+1, root, why)
}

// VerifiedWindow is how long a stamp a Load found fresh is trusted without
// another stat by LoadOffers in the same process.
const VerifiedWindow = time.Second

// Verified remembers, for one process, the stamps Load found fresh and
// when. A PM answers list_deps and then active_plugins within milliseconds
// on the hook path, and both answers are often read from the same files
// (npm's installed package.json files): the second check would stat them
// again to learn what the first just did. A change between the two checks
// is indistinguishable from one just after the second, so the answer is
// the same; the window keeps a long-lived connection from being served a
// stale answer for longer. The zero value is ready to use and it is safe
// for concurrent use.
type Verified struct {
	mu sync.RWMutex
	at map[Stamp]time.Time
}

// Remembering returns c, recording the stamps its Load finds fresh in v,
// and trusting in LoadOffers those v recorded within VerifiedWindow.
func (c *Cache) Remembering(v *Verified) *Cache {
	if c != nil {
		c.verified = v
	}
	return c
}

func (v *Verified) note(stamps []Stamp) {
	if v == nil {
		return
	}
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.at == nil {
		v.at = make(map[Stamp]time.Time, len(stamps))
	}
	for _, s := range stamps {
		v.at[s] = now
	}
}

func (v *Verified) recent(s Stamp, now time.Time) bool {
	if v == nil {
		return false
	}
	v.mu.RLock()
	t, ok := v.at[s]
	v.mu.RUnlock()
	return ok && now.Sub(t) < VerifiedWindow
}

// LoadOffers returns the offers stored under key when every input they were
// read from is unchanged and every offer's root is a directory among those
// inputs, absolute and clean. Anything else is a miss; an entry that is
// there but unusable for another reason than a changed input (corrupt,
// another key, a root it did not record) is reported on log at debug level
// (log may be nil), and the caller simply recomputes and stores over it.
func (c *Cache) LoadOffers(key string, log *slog.Logger) ([]protocol.Offer, bool) {
	var offers []protocol.Offer
	_, err := c.loadEntry(key, func(value []byte) ([]string, error) {
		if err := json.Unmarshal(value, &offers); err != nil {
			return nil, fmt.Errorf("depcache: the cached offers do not decode: %w", err)
		}
		return offerRoots(offers), nil
	})
	if err == nil {
		if offers == nil {
			offers = []protocol.Offer{}
		}
		return offers, true
	}
	if log != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errStale) {
		log.Debug("ignoring an unusable cached active_plugins answer", "file", c.file(key), "err", err)
	}
	return nil, false
}

// offerRoots returns the offers' roots, in order.
func offerRoots(offers []protocol.Offer) []string {
	roots := make([]string, len(offers))
	for i, o := range offers {
		roots[i] = o.Root
	}
	return roots
}

// checkRecordedRoots reports a root that is not a directory among stamps
// (one recorded present), absolute and clean: the rule a loaded answer
// follows (loadEntry), for one about to be stored.
func checkRecordedRoots(roots []string, stamps []Stamp) error {
	dirs := make(map[string]bool, len(roots))
	for i, r := range roots {
		if !absClean(r) {
			return rootError(i, r)
		}
		dirs[r] = false
	}
	for _, s := range stamps {
		if _, ok := dirs[s.Path]; ok && s.Dir && s.Size >= 0 {
			dirs[s.Path] = true
		}
	}
	for i, r := range roots {
		if !dirs[r] {
			return rootError(i, r)
		}
	}
	return nil
}

// StoreOffers persists offers under key with the stamps of the inputs they
// were read from, atomically. Every offer's root must be among the
// recorded directories (see LoadOffers); an answer breaking that rule is
// refused with an error, since it could never be loaded.
func (c *Cache) StoreOffers(key string, stamps []Stamp, offers []protocol.Offer) error {
	if c == nil || c.dir == "" {
		return nil
	}
	if err := checkRecordedRoots(offerRoots(offers), stamps); err != nil {
		return err
	}
	if offers == nil {
		offers = []protocol.Offer{}
	}
	data, err := json.Marshal(offers)
	if err != nil {
		return fmt.Errorf("depcache: encoding offers: %w", err)
	}
	return c.Store(key, stamps, data)
}

// RacyWindow is how recent an input's modification or change time may be
// for an answer read from it to be persisted. File systems keep times at
// the granularity of the kernel's clock tick (up to 10 ms), so a change
// made in the same tick as the stamp was taken would leave the stamp
// unchanged; an input touched that recently is not trusted to show its
// next change, and the answer is recomputed next time instead.
const RacyWindow = 50 * time.Millisecond

// ErrRecent is wrapped by the error of a store refused because an input
// changed within RacyWindow: an expected outcome right after an edit, not a
// fault to report.
var ErrRecent = errors.New("input changed too recently to be trusted")

// racy reports an input changed within RacyWindow of now. The change time
// tells, where the platform has one: the kernel sets it to the current
// time at every change, contents included, while a modification time may
// be set anywhere (a file unpacked with a time in the future would
// otherwise never be cached).
func racy(stamps []Stamp, now time.Time) error {
	limit := now.Add(-RacyWindow).UnixNano()
	for _, s := range stamps {
		changed := s.Change
		if changed == 0 {
			changed = s.Mod
		}
		if s.Size >= 0 && changed > limit {
			return fmt.Errorf("depcache: not persisted: %s: %w (less than %v ago)", s.Path, ErrRecent, RacyWindow)
		}
	}
	return nil
}

// ObserveDir records dir's stamp as a directory input: its listing matters
// (entries added or removed change its modification time), or it is the
// root of an offer. It returns whether dir exists and is a directory.
func (r *Recorder) ObserveDir(dir string) bool {
	if r == nil {
		fi, err := os.Stat(dir)
		return err == nil && fi.IsDir()
	}
	if i, ok := r.seen[dir]; ok {
		return i >= 0 && r.stamps[i].Dir
	}
	fi, err, dangling := stat(dir)
	r.record(stampOf(dir, fi, err), dangling)
	return err == nil && fi.IsDir()
}

// ObserveTree records root/rel and every directory below it, so that an
// entry added or removed anywhere in the tree (a SKILL.md in skills/a/b)
// invalidates the answer. It walks the tree as skilltree.Walk does, inside
// root opened as an os.Root: a symbolic link to a directory is followed,
// and recorded by its own path, while it stays inside root; one leading
// out of root is not (the walk does not read it either). The walk stops
// after maxTreeDirs directories; the answer is then marked unstorable, as
// its inputs could not all be recorded.
func (r *Recorder) ObserveTree(root, rel string) {
	if r == nil || !r.ObserveDir(filepath.Join(root, rel)) {
		return
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		r.Taint()
		return
	}
	defer rt.Close()
	// Directories are told apart by device and inode, so that links
	// looping back into the tree end the walk there.
	type fileID struct{ dev, ino uint64 }
	walked := map[fileID]bool{}
	queue := []string{rel}
	for n := 0; len(queue) > 0; n++ {
		if n >= maxTreeDirs {
			r.Taint()
			return
		}
		d := queue[0]
		queue = queue[1:]
		f, err := rt.Open(d)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		var ents []fs.DirEntry
		if err == nil {
			_, dev, ino := sysStamp(fi)
			if id := (fileID{dev, ino}); ino == 0 || !walked[id] {
				walked[id] = true
				ents, _ = f.ReadDir(-1)
			}
		}
		f.Close()
		for _, e := range ents {
			sub := filepath.Join(d, e.Name())
			switch {
			case e.IsDir(): // DirEntry.IsDir does not follow links
			case e.Type()&fs.ModeSymlink != 0:
				if fi, err := rt.Stat(sub); err != nil || !fi.IsDir() {
					continue // leads out of root, nowhere, or to a file
				}
			default:
				continue
			}
			r.ObserveDir(filepath.Join(root, sub))
			queue = append(queue, sub)
		}
	}
}

// Merge records the stamps o recorded that r has not, and o's taint. It
// is how work split among goroutines, each with its own Recorder, is
// recorded as one computation.
func (r *Recorder) Merge(o *Recorder) {
	if r == nil || o == nil {
		return
	}
	for _, s := range o.stamps {
		r.record(s, o.dangling[s.Path])
	}
	if o.tainted {
		r.tainted = true
	}
}

// maxTreeDirs bounds ObserveTree's walk.
const maxTreeDirs = 4096

// Taint marks the computation being recorded as not to be persisted: an
// input could not be recorded, or a problem was reported that a cached
// answer would not repeat.
func (r *Recorder) Taint() {
	if r != nil {
		r.tainted = true
	}
}

// Tainted reports whether Taint was called.
func (r *Recorder) Tainted() bool { return r != nil && r.tainted }

// Warnings counts the records at warning level or above logged through the
// loggers it wraps. A PM wraps its logger once, then compares counts around
// a computation: an answer whose computation warned is not persisted, so
// that a cache hit never silences a problem the user should see again.
type Warnings struct {
	n atomic.Int64
}

// Wrap returns a logger that logs through l and counts its warnings.
func (w *Warnings) Wrap(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return slog.New(warnCounter{h: l.Handler(), w: w})
}

// Count returns the number of warnings counted so far.
func (w *Warnings) Count() int64 {
	if w == nil {
		return 0
	}
	return w.n.Load()
}

type warnCounter struct {
	h slog.Handler
	w *Warnings
}

func (c warnCounter) Enabled(ctx context.Context, l slog.Level) bool {
	// Warnings are always counted, even when the wrapped handler drops them.
	return l >= slog.LevelWarn || c.h.Enabled(ctx, l)
}

func (c warnCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		c.w.n.Add(1)
	}
	if !c.h.Enabled(ctx, r.Level) {
		return nil
	}
	return c.h.Handle(ctx, r)
}

func (c warnCounter) WithAttrs(as []slog.Attr) slog.Handler {
	return warnCounter{h: c.h.WithAttrs(as), w: c.w}
}

func (c warnCounter) WithGroup(name string) slog.Handler {
	return warnCounter{h: c.h.WithGroup(name), w: c.w}
}
