package depcache_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestRawOffersRoundTrip: an encoded answer comes back byte for byte while
// its inputs are unchanged, and is a miss once one changes; keys name the
// params byte for byte.
func TestRawOffersRoundTrip(t *testing.T) {
	dir, stamps, offers := offersFixture(t)
	enc, err := json.Marshal(offers)
	if err != nil {
		t.Fatal(err)
	}
	c := depcache.New(t.TempDir())
	params := []byte(`{"deps":[{"pm":"npm","name":"a","version":"1.0.0"}]}`)
	key := depcache.RawOffersKey("test 1", []string{"/ws"}, params)
	if err := c.StoreRawOffers(key, stamps, enc); err != nil {
		t.Fatal(err)
	}
	got, ok := c.LoadRawOffers(key, nil)
	if !ok || string(got) != string(enc) {
		t.Fatalf("LoadRawOffers = %s, %v; want %s", got, ok, enc)
	}
	for _, other := range []string{
		depcache.RawOffersKey("test 1", []string{"/ws"}, []byte(`{"deps":[{"pm":"npm","name":"a","version":"1.0.0"}] }`)),
		depcache.RawOffersKey("test 1", []string{"/other"}, params),
		depcache.RawOffersKey("test 2", []string{"/ws"}, params),
		depcache.OffersKey("test 1", []string{"/ws"}, offerIDs(offers)),
	} {
		if other == key {
			t.Errorf("key %q collides", other)
		}
	}
	write(t, filepath.Join(dir, "node_modules", "a", "SYMPOSIUM.toml"), "")
	if got, ok := c.LoadRawOffers(key, nil); ok {
		t.Errorf("a plugin added in place, yet the encoded answer was served: %s", got)
	}
}

// TestRawOffersRoots: an encoded answer offering a root its inputs do not
// record, or that does not decode, is refused on store and ignored on
// load, however the entry was written.
func TestRawOffersRoots(t *testing.T) {
	_, stamps, offers := offersFixture(t)
	c := depcache.New(t.TempDir())
	key := depcache.RawOffersKey("test 1", nil, []byte(`{}`))
	for _, bad := range []string{
		`[{"id":{"pm":"npm","name":"a","version":"1.0.0"},"root":"/etc","manifest":{}}]`,
		`[{"root":"` + offers[0].Root + `/../a"}]`,
		`[{"root":"relative"}]`,
		`{"root":"` + offers[0].Root + `"}`,
		`[{"root":`,
	} {
		if err := c.StoreRawOffers(key, stamps, json.RawMessage(bad)); err == nil {
			t.Errorf("StoreRawOffers accepted %s", bad)
		}
		// Written by something else: the same entry with a forged value.
		if err := c.Store(key, stamps, []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.LoadRawOffers(key, nil); ok {
			t.Errorf("LoadRawOffers served the forged entry %s", got)
		}
	}
}

func offerIDs(offers []protocol.Offer) []protocol.PackageID {
	var ids []protocol.PackageID
	for _, o := range offers {
		ids = append(ids, o.ID)
	}
	return ids
}

// TestStoreEncodedDepsOutsideARequest: outside a request the answer cannot
// be encoded as the harness would send it, so nothing is stored and the
// reason is returned; a nil cache stores nothing and reports nothing.
func TestStoreEncodedDepsOutsideARequest(t *testing.T) {
	c := depcache.New(t.TempDir())
	deps := []protocol.PackageID{{PM: "npm", Name: "a", Version: "1.0.0"}}
	if err := c.StoreEncodedDeps(context.Background(), "k", nil, []byte("head\n"), deps); err == nil {
		t.Fatal("stored outside a request: want an error")
	}
	if _, ok := c.Load("k"); ok {
		t.Fatal("an entry was stored although encoding failed")
	}
	var nilCache *depcache.Cache
	if err := nilCache.StoreEncodedDeps(context.Background(), "k", nil, nil, deps); err != nil {
		t.Fatalf("nil cache: %v", err)
	}
}
