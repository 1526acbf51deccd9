package depcache

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// A load checks an entry without decoding it into an Entry: the stamp
// lines are parsed one at a time, in place, and each stamp is compared
// with its path's current state as soon as it is parsed. On the hook path
// a process is short-lived and never collects garbage, so every byte it
// allocates is memory the kernel maps for it, a page fault a page; a
// decoded Entry of npm's 400-plugin answer was 370 KB (the header copied
// into a string, then a slice of 1,600 stamps) for data that is looked at
// once.

// splitEntry splits the stored form of an entry into its header (the key
// line, then the stamp lines) and its value, both aliasing data, checking
// that the value has the length the first line gives.
func splitEntry(data []byte) (header, value []byte, err error) {
	rest, ok := bytes.CutPrefix(data, magic)
	if !ok {
		return nil, nil, errors.New("depcache: not an entry of format " + strconv.Itoa(format))
	}
	length, rest, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.ParseUint(string(length), 10, 63)
	if err != nil {
		return nil, nil, fmt.Errorf("depcache: bad value length %q", length)
	}
	// Quoting keeps line breaks out of the key and paths, so the first empty
	// line ends the header.
	end := bytes.Index(rest, []byte("\n\n"))
	if end < 0 {
		return nil, nil, errors.New("depcache: truncated entry")
	}
	header, value = rest[:end], rest[end+2:]
	if uint64(len(value)) != n {
		return nil, nil, fmt.Errorf("depcache: the value holds %d bytes, not the %d its entry gives: cut short or added to", len(value), n)
	}
	return header, value, nil
}

// splitHeader returns the key a header names and its stamp lines.
func splitHeader(header string) (key, lines string, err error) {
	line, lines, _ := strings.Cut(header, "\n")
	key, err = strconv.Unquote(line)
	if err != nil {
		return "", "", fmt.Errorf("depcache: bad key line: %w", err)
	}
	return key, lines, nil
}

// nextStamp parses the first of lines, numbered n, and returns the rest.
func nextStamp(lines string, n int) (Stamp, string, error) {
	line, rest, _ := strings.Cut(lines, "\n")
	s, err := parseStamp(line)
	if err != nil {
		return s, rest, fmt.Errorf("depcache: input %d: %w", n, err)
	}
	return s, rest, nil
}

// entryCheck is what a load asks of an entry's stamps besides freshness.
type entryCheck struct {
	// trust, when not nil, spares the stat of a stamp it returns true for.
	trust func(Stamp) bool
	// found, when not nil, is handed the stamps found fresh as the check
	// goes, a batch at a time, so that a check running beside this one
	// (list_deps' and active_plugins' on a pipelined hook) can trust them.
	found func([]Stamp)
	// decode, when not nil, is handed the value before the stamps are
	// checked and returns paths to look for among the recorded
	// directories (present ones: size not -1), each with its index in
	// what readEntry reports seen; or an error that makes the entry
	// unusable.
	decode func(value []byte) (map[string]int, error)
}

// MaxEntry caps a cache entry read back (256 MiB). Entries are written
// by Store and its kin, and hold a list_deps answer or offers with their
// inputs' stamps: a few MB at 50,000 dependencies. The cap and the
// regular-file check keep a FIFO or a device put in the cache directory
// from hanging the hook.
const MaxEntry = 256 << 20

// errStale marks an entry whose inputs changed: an ordinary miss.
var errStale = errors.New("an input changed")

// readEntry reads the entry under key and checks its key and, with ec,
// every input it records; it returns the value. A missing entry is
// fs.ErrNotExist, a stale one errStale; anything else is an entry that
// should not be there (corrupt, truncated, written by something else).
// seen reports, for each path ec.decode returned, whether it is a
// recorded directory.
func (c *Cache) readEntry(key string, ec entryCheck) (value []byte, seen []bool, err error) {
	data, err := pkgfile.ReadOwnFile(c.file(key), MaxEntry)
	if err != nil {
		return nil, nil, err
	}
	header, value, err := splitEntry(data)
	if err != nil {
		return nil, nil, err
	}
	// data is this load's alone and nothing writes it again (the value
	// handed out after the header is read-only to callers, and lies past
	// it), so the header is read in place: the key and the paths are
	// substrings of it, and stamps trusted later (Verified) keep it alive.
	k, lines, err := splitHeader(unsafe.String(unsafe.SliceData(header), len(header)))
	if err != nil {
		return nil, nil, err
	}
	if k != key {
		return nil, nil, errors.New("depcache: the entry holds another key")
	}
	var dirs map[string]int
	if ec.decode != nil {
		if dirs, err = ec.decode(value); err != nil {
			return nil, nil, err
		}
	}
	seen, err = ec.run(lines, dirs)
	if err != nil {
		return nil, nil, err
	}
	return value, seen, nil
}

// parallelStamps is how many stamps an entry needs before its check is
// split among the processors: below it, starting goroutines costs more
// than the stats it overlaps.
const parallelStamps = 512

// run checks every stamp line of lines and returns errStale at the first
// stale one or a parse error at the first bad one. Large entries are
// checked on every processor at once, in contiguous parts (a stat is a
// system call that waits on the file system's locks as much as on the
// processor).
func (ec entryCheck) run(lines string, dirs map[string]int) ([]bool, error) {
	seen := make([]bool, len(dirs))
	n := strings.Count(lines, "\n") + 1
	if lines == "" {
		n = 0
	}
	workers := min(runtime.GOMAXPROCS(0), n/(parallelStamps/2))
	if workers < 2 || n < parallelStamps {
		return seen, ec.part(lines, 1, dirs, seen, nil)
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		errs  = make([]error, workers)
		seens = make([][]bool, workers)
	)
	// Parts of about the same size in bytes, cut at line breaks, each
	// numbering its lines from where it starts, for errors. The last is
	// checked on this goroutine, whose stack has grown already.
	first := 1
	for w := range workers {
		part := lines
		if w < workers-1 {
			cut := len(lines) / (workers - w)
			if i := strings.IndexByte(lines[cut:], '\n'); i >= 0 {
				part, lines = lines[:cut+i], lines[cut+i+1:]
			} else {
				lines = ""
			}
		} else {
			lines = ""
		}
		seens[w] = make([]bool, len(dirs))
		n := first
		check := func() {
			if errs[w] = ec.part(part, n, dirs, seens[w], &stop); errs[w] != nil {
				stop.Store(true)
			}
		}
		if lines == "" {
			check()
			break
		}
		wg.Go(check)
		first += strings.Count(part, "\n") + 1
	}
	wg.Wait()
	// A part stopped by another reports errStale: the other's reason is
	// the one to give.
	var err error
	for _, e := range errs {
		if e != nil && (err == nil || err == errStale) {
			err = e
		}
	}
	if err != nil {
		return nil, err
	}
	for w := range workers {
		for i, ok := range seens[w] {
			seen[i] = seen[i] || ok
		}
	}
	return seen, nil
}

// part checks the stamp lines of lines, the first numbered first, marking
// in seen the recorded directories among dirs. stop, when not nil, is
// set by a part checked beside this one that has found the entry
// unusable; this one then stops.
func (ec entryCheck) part(lines string, first int, dirs map[string]int, seen []bool, stop *atomic.Bool) error {
	const batch = 64
	st := newStatter()
	defer st.close()
	var found []Stamp
	if ec.found != nil {
		found = make([]Stamp, 0, batch)
	}
	for n := first; lines != ""; n++ {
		if (n-first)%batch == 0 {
			if stop != nil && stop.Load() {
				return errStale
			}
			if len(found) > 0 {
				ec.found(found)
				found = found[:0]
			}
		}
		var s Stamp
		var err error
		s, lines, err = nextStamp(lines, n)
		if err != nil {
			return err
		}
		if s.Dir && s.Size >= 0 && dirs != nil {
			if i, ok := dirs[s.Path]; ok {
				seen[i] = true
			}
		}
		if ec.trust != nil && ec.trust(s) {
			continue
		}
		if st.take(s.Path) != s {
			return errStale
		}
		if ec.found != nil {
			found = append(found, s)
		}
	}
	if len(found) > 0 {
		ec.found(found)
	}
	return nil
}
