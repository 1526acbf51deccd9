package depcache

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// FuzzRawRoots holds rawRoots, whichever way it reads an answer, to
// decoding it as protocol.Offer decodes a root: the same roots, or a
// failure where it fails.
func FuzzRawRoots(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, `[{"id":{"pm":"npm","name":"a","version":"1"},"root":"/w/a","manifest":{"root":"x"}}]`,
		`[{"root":"/a"},{"root":"/b\"c"},{}]`, `[{"Root":"/a"}]`, `[{"ROOT":"/a","root":"/b"}]`, `[{"r\u006fot":"/a"}]`,
		`[{"root":"/a","root":null}]`, `[{"root":"/a","root":"/b"}]`, `[{"root":1}]`, `[null]`, `[1]`, `{"root":"/a"}`,
		"[{\"ro\xc5\xbft\":\"/a\"}]", `[{"root":"\u00e9"}]`, "[{\"root\":\"\xff\"}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, encoded []byte) {
		got, err := rawRoots(encoded)
		var offers []rootOnly
		wantErr := json.Unmarshal(encoded, &offers)
		var want []string
		if wantErr == nil {
			want = make([]string, len(offers))
			for i, o := range offers {
				want[i] = o.Root
			}
		}
		if (err == nil) != (wantErr == nil) || !slices.Equal(got, want) {
			t.Fatalf("rawRoots(%q) = %q, %v; encoding/json gives %q, %v", encoded, got, err, want, wantErr)
		}
	})
}

// TestPlainRoots: what StoreRawOffers keeps is read without encoding/json;
// names it might match otherwise than as written are left to it.
func TestPlainRoots(t *testing.T) {
	if roots, ok := plainRoots([]byte(`[{"id":{"pm":"npm","name":"a"},"root":"/w/a","manifest":{"root":"/x"}},{"root":"/w/b"}]`)); !ok || !slices.Equal(roots, []string{"/w/a", "/w/b"}) {
		t.Errorf("plainRoots = %q, %v; want the two roots, read", roots, ok)
	}
	for _, s := range []string{`[{"Root":"/a"}]`, `[{"r\u006fot":"/a"}]`, "[{\"ro\xc5\xbft\":\"/a\"}]", `[null]`, `[{"root":1}]`} {
		if _, ok := plainRoots([]byte(s)); ok {
			t.Errorf("plainRoots read %s, which only encoding/json reads right", s)
		}
	}
}

// BenchmarkRawRoots measures reading the roots of a cached answer of 400
// offers (what every cached active_plugins hook does) by rawRoots, by
// sendableRoots (rawRoots after the checks of what the harness sends) and
// by encoding/json alone.
func BenchmarkRawRoots(b *testing.B) {
	var enc []byte
	enc = append(enc, '[')
	for i := range 400 {
		if i > 0 {
			enc = append(enc, ',')
		}
		name := fmt.Sprintf("pkg-%04d", i)
		enc = fmt.Appendf(enc, `{"id":{"pm":"npm","name":%q,"version":"1.0.0"},"root":"/home/user/project/node_modules/%s","manifest":{"name":%q,"skills":[{"source":{"path":"skills"}}]}}`, name, name, name)
	}
	enc = append(enc, ']')
	b.Run("rawRoots", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if roots, err := rawRoots(enc); err != nil || len(roots) != 400 {
				b.Fatal(len(roots), err)
			}
		}
	})
	b.Run("sendableRoots", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if roots, err := sendableRoots(enc); err != nil || len(roots) != 400 {
				b.Fatal(len(roots), err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			var offers []rootOnly
			if err := json.Unmarshal(enc, &offers); err != nil || len(offers) != 400 {
				b.Fatal(len(offers), err)
			}
		}
	})
}

// TestSendableRoots: offers the harness would refuse to send as they are
// (not an array first to last, more than one line, not UTF-8) are
// unusable, however well they decode.
func TestSendableRoots(t *testing.T) {
	for _, tc := range []struct {
		encoded string
		ok      bool
	}{
		{`[{"root":"/a"}]`, true},
		{`[]`, true},
		{"[{\"root\":\"/a\"},\n{\"root\":\"/b\"}]", false},
		{` [{"root":"/a"}]`, false},
		{`null`, false},
		{"[{\"root\":\"/a\",\"name\":\"\xff\"}]", false},
	} {
		_, err := sendableRoots([]byte(tc.encoded))
		if (err == nil) != tc.ok {
			t.Errorf("sendableRoots(%q): %v, want usable %v", tc.encoded, err, tc.ok)
		}
	}
}
