//go:build linux

package npmpm

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// openCounter counts, with inotify, the files and directories opened under
// a tree: every directory in it is watched, and each open is counted once
// (a file by its directory's watch, a directory by its own).
type openCounter struct {
	fd       int
	sentinel string
	done     chan struct{}
	opens    int
	overflow bool
}

// watchOpens starts counting the opens under root; the count is final once
// stop returns.
func watchOpens(t *testing.T, root string) *openCounter {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	c := &openCounter{fd: fd, sentinel: ".opens-sentinel", done: make(chan struct{})}
	if err := os.WriteFile(filepath.Join(root, c.sentinel), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		_, err = syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN)
		return err
	})
	if err != nil {
		syscall.Close(fd)
		t.Skip("cannot watch the tree:", err)
	}
	go c.read()
	return c
}

func (c *openCounter) read() {
	defer close(c.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(c.fd, buf)
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			name := string(bytes.TrimRight(nameBytes, "\x00"))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&syscall.IN_Q_OVERFLOW != 0:
				c.overflow = true
			case name == c.sentinel:
				return
			case ev.Mask&syscall.IN_ISDIR != 0 && name != "":
				// A directory opened, seen from its parent: counted by
				// its own watch.
			case ev.Mask&syscall.IN_OPEN != 0:
				c.opens++
			}
		}
	}
}

// stop opens the sentinel, waits for the reader to see it, and returns the
// number of opens counted.
func (c *openCounter) stop(t *testing.T, root string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, c.sentinel))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	<-c.done
	syscall.Close(c.fd)
	if c.overflow {
		t.Fatalf("more opens than inotify's queue holds (%d counted)", c.opens)
	}
	return c.opens
}

// TestActivePluginsOpensLinear: a cold (uncached) active_plugins opens
// O(dependencies + members) files and directories in the workspace,
// counted by the kernel (every open, not only those through diskReader):
// the package.json of each member and of each installed copy it looks at,
// the node_modules and scope listings, and each plugin's layers and skills.
// The bound holds at a small size and at 1,000 members × 300 dependencies,
// where a search per member × dependency would open hundreds of thousands.
func TestActivePluginsOpensLinear(t *testing.T) {
	const perUnit = 5 // opens allowed per dependency plus member (about 4 at 30 × 30, 2 at 1,000 × 300)
	for _, size := range []struct{ members, deps int }{{30, 30}, {1000, 300}} {
		if testing.Short() && size.members > 100 {
			continue
		}
		ws := t.TempDir()
		ids := genMonorepo(t, ws, size.members, size.deps)
		p, _ := newPM(t, ws, nil)
		p.cacheRoot = "" // cold: nothing persisted, nothing loaded
		counter := watchOpens(t, ws)
		offers, err := p.ActivePlugins(context.Background(), ids)
		opens := counter.stop(t, ws)
		if err != nil {
			t.Fatal(err)
		}
		if len(offers) != size.deps/10+1 {
			t.Errorf("%d members × %d deps: %d offers, want %d", size.members, size.deps, len(offers), size.deps/10+1)
		}
		limit := perUnit * (size.deps + size.members)
		t.Logf("%d members × %d deps: %d opens (limit %d)", size.members, size.deps, opens, limit)
		if opens > limit {
			t.Errorf("%d members × %d deps: active_plugins opened %d files and directories in the workspace, more than %d × (deps + members) = %d",
				size.members, size.deps, opens, perUnit, limit)
		}
	}
}
