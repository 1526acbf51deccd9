package host

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// resultSeeds are results a PM may write, plainly and otherwise.
var resultSeeds = []string{
	`[]`, `null`, `[{"id":{"pm":"npm","name":"a","version":"1.0.0"},"root":"/w/node_modules/a","manifest":{"name":"a","skills":[{"source":{"path":"skills"}}]}}]`,
	`[{"id":{"pm":"npm","name":"a"},"root":"/r"}]`, `[{"manifest":null,"root":null,"id":null}]`, `[{"ID":{"PM":"x"},"Root":"/r"}]`,
	`[{"id":{"pm":"a"},"id":{"name":"b"}}]`, `[{"id":{"pm":1}}]`, `[{"root":"/a\"b\u00e9"}]`, `[null]`, `[1]`, `{"id":{}}`, `"x"`,
	`[{"id":{"pm":"npm","name":"a","version":"1"},"extra":true}]`, `[{"pm":"npm","name":"a","version":"1"},{"pm":"x","pm":"y"}]`,
	` [ { "id" : { "pm" : "a" } , "manifest" : [ 1 ] } ] `, `[{"manifest":"m"},{}]`, `[{"manifest":null}]`,
}

// FuzzDecodeChecked holds decodeChecked to json.Unmarshal on valid JSON,
// for both results it reads itself: the same value, or the same failure.
func FuzzDecodeChecked(f *testing.F) {
	for _, s := range resultSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // decodeChecked is only given checked results
		}
		var offers, wantOffers []protocol.Offer
		err, wantErr := decodeChecked(raw, &offers), json.Unmarshal(raw, &wantOffers)
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(offers, wantOffers) {
			t.Fatalf("offers from %q: %#v, %v; json.Unmarshal gives %#v, %v", raw, offers, err, wantOffers, wantErr)
		}
		var ids, wantIDs []protocol.PackageID
		err, wantErr = decodeChecked(raw, &ids), json.Unmarshal(raw, &wantIDs)
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(ids, wantIDs) {
			t.Fatalf("ids from %q: %#v, %v; json.Unmarshal gives %#v, %v", raw, ids, err, wantIDs, wantErr)
		}
	})
}

// TestDecodeCheckedFastPath: plainly written results are read by the fast
// paths (not left to json.Unmarshal), and the others are not.
func TestDecodeCheckedFastPath(t *testing.T) {
	if _, ok := decodeOffers([]byte(resultSeeds[2])); !ok {
		t.Errorf("a plain offer list was not read by the fast path")
	}
	if _, ok := decodeIDs([]byte(`[{"pm":"npm","name":"a","version":"1"},{"name":null}]`)); !ok {
		t.Errorf("a plain id list was not read by the fast path")
	}
	for _, s := range []string{`[{"ID":{"PM":"x"}}]`, `[{"id":{"pm":"a"},"id":{"name":"b"}}]`, `[null]`, `[{"id":{"pm":"a","x":1}}]`} {
		if _, ok := decodeOffers([]byte(s)); ok {
			t.Errorf("decodeOffers took %s, which only json.Unmarshal reads right", s)
		}
	}
}

// BenchmarkDecodeOffers measures reading a PM's answer of 400 offers, each
// with a small manifest, by decodeChecked and by json.Unmarshal.
func BenchmarkDecodeOffers(b *testing.B) {
	offers := make([]protocol.Offer, 400)
	for i := range offers {
		name := fmt.Sprintf("pkg-%04d", i)
		offers[i] = protocol.Offer{ID: protocol.PackageID{PM: "npm", Name: name, Version: "1.0.0"}, Root: "/home/user/project/node_modules/" + name,
			Manifest: json.RawMessage(`{"name":"` + name + `","skills":[{"source":{"path":"skills"}}]}`)}
	}
	raw, err := json.Marshal(offers)
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func([]byte, any) error{"checked": decodeChecked, "unmarshal": json.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var got []protocol.Offer
				if err := decode(raw, &got); err != nil || len(got) != len(offers) {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}
