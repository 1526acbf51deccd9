package gitregistry

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func sampleIndex() *index {
	return &index{Format: indexFormat, Commit: strings.Repeat("ab", 20), Entries: []entry{
		{Path: "rust", Kind: "plugin", Name: "rust", Manifest: json.RawMessage(`{"name":"rust"}`), Skills: []string{"one", "two"}},
		{Path: "group/web/vue", Kind: "skill", Name: "vue", Description: "Vue things", Manifest: json.RawMessage(`{"name":"vue","skills":[{"source":{"path":"."}}]}`)},
		{Path: "broken", Kind: "plugin", Problem: "SYMPOSIUM.toml: line 1: invalid TOML"},
		{Path: "legacy", Kind: "plugin", Name: "legacy", Manifest: json.RawMessage(`{"crates":["x"]}`), Note: "retired key"},
	}}
}

func TestIndexFileRoundTrip(t *testing.T) {
	idx := sampleIndex()
	stamps := []stamp{{Dir: "", Inode: 7, Mtime: 1e18}, {Dir: "group/web", Inode: 1 << 40, Mtime: -5}}
	data := encodeIndex(idx, stamps)
	got, gotStamps, err := decodeIndex(data, idx.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotStamps, stamps) {
		t.Errorf("stamps %v, want %v", gotStamps, stamps)
	}
	if got.Commit != idx.Commit || got.Problem != idx.Problem || len(got.Entries) != len(idx.Entries) {
		t.Fatalf("decoded %+v", got)
	}
	for i, e := range got.Entries {
		w := idx.Entries[i]
		if e.Path != w.Path || e.Kind != w.Kind || e.Name != w.Name || e.Description != w.Description ||
			string(e.Manifest) != string(w.Manifest) || e.Problem != w.Problem || e.Note != w.Note || !slices.Equal(e.Skills, w.Skills) {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if _, _, err := decodeIndex(data, strings.Repeat("cd", 20)); !errors.Is(err, errBadIndex) {
		t.Errorf("index of another commit: %v", err)
	}
}

// TestIndexFileRefusesDamage: every truncation and every single-byte change
// of a persisted index is refused, never decoded into entries.
func TestIndexFileRefusesDamage(t *testing.T) {
	idx := sampleIndex()
	data := encodeIndex(idx, []stamp{{Inode: 1, Mtime: 2}})
	for n := range len(data) {
		if _, _, err := decodeIndex(data[:n], idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("truncated to %d of %d bytes: %v, want it refused", n, len(data), err)
		}
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x20
		if _, _, err := decodeIndex(bad, idx.Commit); !errors.Is(err, errBadIndex) {
			t.Fatalf("byte %d changed: %v, want it refused", i, err)
		}
	}
}

// TestIndexFileRefusesImpossibleCounts: a persisted index whose checksums
// hold but whose stamp, flagged-entry or entry count is more than the
// bytes left can hold is refused without allocating for the count (2^28
// stamps took 8 GiB) and without panicking (a count past 2^63 made a
// negative length).
func TestIndexFileRefusesImpossibleCounts(t *testing.T) {
	commit := strings.Repeat("ab", 20)
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	// file wraps a head and an entries section in their checksums.
	file := func(head, entries []byte) []byte {
		b := append([]byte(indexMagic), binary.BigEndian.AppendUint64(nil, uint64(len(head)))...)
		b = append(b, head...)
		b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
		b = append(b, entries...)
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(entries, castagnoli()))
	}
	// head has stamps and flagged counts, then an empty answer.
	head := func(stamps, flagged uint64) []byte {
		b := binary.AppendUvarint(nil, indexFormat)
		b = str(b, commit)
		b = str(b, "")
		b = binary.AppendUvarint(b, stamps)
		b = binary.AppendUvarint(b, flagged)
		b = str(str(b, ""), "")
		b = binary.AppendUvarint(b, 0)
		return binary.BigEndian.AppendUint32(b, 0)
	}
	entries := func(n uint64) []byte { return binary.AppendUvarint(str(nil, commit), n) }
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"stamps 2^28", file(head(1<<28-1, 0), entries(0))},
		{"stamps past 2^63", file(head(1<<63+1, 0), entries(0))},
		{"flagged 2^28", file(head(0, 1<<28-1), entries(0))},
		{"flagged past 2^63", file(head(0, 1<<63+1), entries(0))},
		{"entries 2^28", file(head(0, 0), entries(1<<28-1))},
		{"entries past 2^63", file(head(0, 0), entries(1<<63+1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := decodeIndex(tc.data, commit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, errBadIndex) {
				t.Errorf("decodeIndex = %v, want it refused", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("decoding a %d-byte index allocated %d bytes", len(tc.data), n)
			}
		})
	}
}

// TestDamagedIndexIsRebuilt: a persisted index that was truncated or
// corrupted on disk is detected, and the index is built again from the
// commit's tree and persisted anew; what was damaged is never served.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"last byte lost", func(b []byte) []byte { return b[:len(b)-1] }},
		{"manifest changed", func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"name":"rust-guidance"`), []byte(`"name":"rust-guidancE"`))
		}},
		{"empty", func([]byte) []byte { return nil }},
		{"garbage", func([]byte) []byte { return []byte("{\"format\":5}\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			p, _ := newPM(t, Config{URL: f.url}, cache, nil)
			if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
				t.Fatal(err)
			}
			want, err := p.ActivePlugins(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := p.cache.Path()
			p.Close()
			side, _ := filepath.Glob(filepath.Join(dir, "commits", f.commit+".index*"))
			if len(side) != 1 {
				t.Fatalf("persisted indexes: %v", side)
			}
			b, err := os.ReadFile(side[0])
			if err != nil {
				t.Fatal(err)
			}
			bad := tc.damage(b)
			if bytes.Equal(bad, b) {
				t.Fatal("the damage changed nothing")
			}
			if err := os.WriteFile(side[0], bad, 0o644); err != nil {
				t.Fatal(err)
			}

			q, logs := newPM(t, Config{URL: f.url}, cache, nil)
			got, err := q.ActivePlugins(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("after damage: %v, want %v", offerNames(got), offerNames(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || string(got[i].Manifest) != string(want[i].Manifest) || got[i].Root != want[i].Root {
					t.Errorf("offer %d served from the damaged index: %+v, want %+v", i, got[i], want[i])
				}
			}
			if !strings.Contains(logs.String(), "index") {
				t.Errorf("no warning about the index:\n%s", logs)
			}
			// The index was persisted again, intact.
			again, err := os.ReadFile(side[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := decodeIndex(again, f.commit); err != nil {
				t.Errorf("index not rebuilt: %v", err)
			}
		})
	}
}
