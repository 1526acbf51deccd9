package packagelock

import (
	"runtime"
	"testing"
)

// TestParseAllocatesLessThanTheDocument checks that parsing a large
// lockfile in npm's shape copies only what it keeps: the bytes allocated
// (the kept strings and the map, with its growth) stay near the document's
// size (it used to copy the whole document into one string as well, and
// allocated twice its size here).
func TestParseAllocatesLessThanTheDocument(t *testing.T) {
	data := genLock(t, 5000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := Parse(data)
	runtime.ReadMemStats(&after)
	if err != nil || len(l.Packages) != 5001 {
		t.Fatalf("%v, %d packages", err, len(l.Packages))
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(data))*5/4; got > limit {
		t.Errorf("parsing a %d-byte lockfile allocated %d bytes, want at most %d", len(data), got, limit)
	}
	// The decoded strings do not share the caller's buffer.
	name := l.Packages["node_modules/pkg-00001"].Version
	for i := range data {
		data[i] = 'x'
	}
	if l.Packages["node_modules/pkg-00001"].Version != name || name != "1.0.0" {
		t.Errorf("version %q changed with the input buffer", l.Packages["node_modules/pkg-00001"].Version)
	}
}

// TestParseSizesTheMapOnce checks that the packages map of a large
// lockfile is made at its size, not grown a table at a time (each growth
// allocates the table again and rehashes it): parsing allocates less
// than three quarters of the document, where growing the map took more
// than all of it.
func TestParseSizesTheMapOnce(t *testing.T) {
	data := genLock(t, 20000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := Parse(data)
	runtime.ReadMemStats(&after)
	if err != nil || len(l.Packages) != 20001 {
		t.Fatalf("%v, %d packages", err, len(l.Packages))
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(data))*3/4; got > limit {
		t.Errorf("parsing a %d-byte lockfile allocated %d bytes, want at most %d", len(data), got, limit)
	}
}
