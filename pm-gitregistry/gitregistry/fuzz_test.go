package gitregistry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// FuzzRawManifest checks that any SYMPOSIUM.toml either is refused with an
// error or becomes a JSON object, without panicking.
func FuzzRawManifest(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/recommendations/*/SYMPOSIUM.toml")
	more, _ := filepath.Glob("testdata/recommendations/*/*/*/SYMPOSIUM.toml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name = 1979-05-27T07:32:00Z\n[[skills]]\nsource.path = 'x'\nwhen = 07:32:00\n"))
	f.Add([]byte("name = \"x\"\npredicates = \"one\"\n[subcommand.a]\ndescription = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, raw, _, err := rawManifest(data)
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("manifest %q became invalid JSON %s: %v", data, raw, err)
		}
	})
}

// FuzzRetiredSkill checks that any SKILL.md the strict parser refuses for
// its retired crates key either stays refused or becomes a manifest that
// encodes and carries the key, without panicking.
func FuzzRetiredSkill(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\ncrates: serde, tokio\n---\nbody\n"))
	f.Add([]byte("---\ncrates: serde\nname: a\ndescription: b\ndepends-on: x\n---\n"))
	f.Add([]byte("---\nname: a\ncrates: &c serde\ndescription: *c\n---\n"))
	f.Add([]byte("\n\n---\nname: a\ndescription: b\ncrates: \"\"\n---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := skill.Parse(data, true)
		if err == nil {
			return
		}
		m, sk := retiredSkill("dir", data, err)
		if m == nil {
			return
		}
		if sk == nil {
			t.Fatalf("%q: a manifest without its skill", data)
		}
		raw, err := m.WireJSON()
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil || v["crates"] == nil {
			t.Fatalf("%q became %s (%v): the retired key is lost", data, raw, err)
		}
	})
}

// FuzzParseIndex checks that any head or entries section of a persisted
// index (past its checksum) is refused or decodes without panicking, and
// that what decodes encodes back to an index that decodes the same.
func FuzzParseIndex(f *testing.F) {
	idx := sampleIndex()
	idx.Answer = answer{Name: "recs", Dir: "/cache/x", JSON: []byte(`[{"id":{}}]`)}
	good := encodeIndex(idx, []stamp{{Dir: "group", Inode: 3, Mtime: 4}})
	head, rest, err := splitHead(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(head)
	f.Add(rest[:len(rest)-4])
	f.Add(head[:len(head)-9])
	f.Add([]byte{7, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, eerr := parseEntries(body, idx.Commit)
		got, stamps, err := parseHead(body, idx.Commit)
		if err != nil {
			if eerr != nil {
				return
			}
			got, stamps = &index{Format: indexFormat, Commit: idx.Commit}, nil
		}
		if eerr == nil {
			got.Entries = entries
		}
		again := encodeIndex(got, stamps)
		back, backStamps, err := decodeIndex(again, idx.Commit)
		if err != nil {
			t.Fatalf("%q decoded, but its encoding does not: %v", body, err)
		}
		if len(back.Entries) != len(got.Entries) || len(backStamps) != len(stamps) || string(back.Answer.JSON) != string(got.Answer.JSON) {
			t.Fatalf("%q: round trip changed the index", body)
		}
	})
}
