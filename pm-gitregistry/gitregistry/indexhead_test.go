package gitregistry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestIndexHeadRefusesDamage: the head the hook path reads alone (stamps,
// flagged entries, the kept answer) is refused on every truncation and
// every single-byte change of it, and readIndexHead reads the head and
// nothing of the entries.
func TestIndexHeadRefusesDamage(t *testing.T) {
	idx := sampleIndex()
	idx.Answer = answer{Name: "recs", Dir: "/cache/c", JSON: []byte(`[{"id":{"pm":"recs"}}]`)}
	data := encodeIndex(idx, []stamp{{Inode: 1, Mtime: 2}})
	_, rest, err := splitHead(data)
	if err != nil {
		t.Fatal(err)
	}
	end := len(data) - len(rest)
	got, _, err := decodeHead(data[:end], idx.Commit)
	if err != nil || string(got.Answer.JSON) != string(idx.Answer.JSON) || len(got.Entries) != 2 {
		t.Fatalf("head: %+v %v", got, err)
	}
	for n := range end {
		if _, _, err := decodeHead(data[:n], idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("head truncated to %d of %d bytes: %v, want it refused", n, end, err)
		}
	}
	for i := range end {
		bad := bytes.Clone(data[:end])
		bad[i] ^= 0x20
		if _, _, err := decodeHead(bad, idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("head byte %d changed: %v, want it refused", i, err)
		}
	}
	p := filepath.Join(t.TempDir(), "x.index")
	os.WriteFile(p, data, 0o644)
	read, err := readIndexHead(p)
	if err != nil || !bytes.Equal(read, data[:end]) {
		t.Fatalf("readIndexHead read %d bytes (%v), want the %d of the head", len(read), err, end)
	}
}
