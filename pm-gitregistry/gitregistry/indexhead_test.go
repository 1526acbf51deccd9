package gitregistry

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// indexWithAnswer encodes the sample index with a kept answer and returns
// it, its encoding and where its head ends.
func indexWithAnswer(t *testing.T) (*index, []byte, int) {
	t.Helper()
	idx := sampleIndex()
	idx.Answer = answer{Name: "recs", Dir: "/cache/c", JSON: []byte(`[{"id":{"pm":"recs"}}]`)}
	data := encodeIndex(idx, []stamp{{Inode: 1, Mtime: 2}})
	_, rest, err := splitHead(data)
	if err != nil {
		t.Fatal(err)
	}
	return idx, data, len(data) - len(rest)
}

// TestIndexHeadRefusesDamage: the head the hook path reads alone (stamps,
// flagged entries, the kept answer's length and checksum) is refused on
// every truncation and every single-byte change of it, and readIndexHead
// reads the head and nothing of the answer or the entries.
func TestIndexHeadRefusesDamage(t *testing.T) {
	idx, data, end := indexWithAnswer(t)
	got, _, err := decodeHead(data[:end], idx.Commit)
	if err != nil || got.Answer.JSON != nil || got.Answer.Size != int64(len(idx.Answer.JSON)) ||
		got.Answer.Sum != crc32.Checksum(idx.Answer.JSON, castagnoli()) || len(got.Entries) != 2 {
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
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := readIndexHead(p)
	if err != nil || !bytes.Equal(read, data[:end]) {
		t.Fatalf("readIndexHead read %d bytes (%v), want the %d of the head", len(read), err, end)
	}
}

// TestIndexAnswerChecked: the kept answer sits between the head and the
// entries, checked by the checksum the head gives for it: decoding the
// whole index refuses every single-byte change of the answer and every
// truncation inside it, and otherwise returns the answer as kept.
func TestIndexAnswerChecked(t *testing.T) {
	idx, data, start := indexWithAnswer(t)
	rest := data[start:]
	if !bytes.HasPrefix(rest, idx.Answer.JSON) {
		t.Fatalf("the answer does not follow the head: %q", rest)
	}
	got, _, err := decodeIndex(data, idx.Commit)
	if err != nil || string(got.Answer.JSON) != string(idx.Answer.JSON) || len(got.Entries) != len(idx.Entries) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for i := start; i < start+len(idx.Answer.JSON); i++ {
		bad := bytes.Clone(data)
		bad[i] ^= 0x01
		if _, _, err := decodeIndex(bad, idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("answer byte %d changed: %v, want it refused", i-start, err)
		}
		if _, _, err := decodeIndex(data[:i], idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("index cut at answer byte %d: %v, want it refused", i-start, err)
		}
	}
}
