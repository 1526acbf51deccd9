package depcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"
)

// An active_plugins answer may also be persisted already encoded, as the
// PM sent it, under a key naming the request's params byte for byte
// (RawOffersKey): a hit then costs neither decoding the params nor
// decoding and encoding the offers. The stamps are the same as for
// StoreOffers, and so is the rule on roots: every offer's root must be a
// directory the answer records as read, checked on every load by decoding
// the roots alone.

// rawOffersFormat versions what a raw offers entry's value holds; it is
// part of every RawOffersKey.
const rawOffersFormat = "raw offers 1"

// RawOffersKey returns the key of an active_plugins answer persisted
// encoded: the PM's own versioned prefix, the context the answer depends on
// besides files (as for OffersKey), and the request's params exactly as
// received, by digest.
func RawOffersKey(prefix string, context []string, params []byte) string {
	h := sha256.New()
	for _, c := range context {
		fmt.Fprintf(h, "%d:%s", len(c), c)
	}
	h.Write([]byte{0})
	h.Write(params)
	return rawOffersFormat + "\x00" + prefix + "\x00" + hex.EncodeToString(h.Sum(nil))
}

// rootOnly is an offer as far as its root goes; it decodes the root
// exactly as protocol.Offer does.
type rootOnly struct {
	Root string `json:"root"`
}

// LoadRawOffers returns the encoded answer stored under key when every
// input it was read from is unchanged and every offer's root is a
// directory among those inputs, absolute and clean (see LoadOffers, which
// it follows in everything but decoding the answer). log may be nil.
func (c *Cache) LoadRawOffers(key string, log *slog.Logger) (json.RawMessage, bool) {
	e, err := c.loadEntry(key)
	if err == nil {
		if err = checkRawRoots(e.Value, e.Stamps); err == nil {
			return json.RawMessage(e.Value), true
		}
	}
	if log != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errStale) {
		log.Debug("ignoring an unusable cached active_plugins answer", "file", c.file(key), "err", err)
	}
	return nil, false
}

// checkRawRoots decodes the roots of the encoded offers and reports one
// that is not a recorded directory, absolute and clean (the rule of
// checkRoots, which it follows without building a set of every recorded
// directory: the offers are far fewer than the stamps).
func checkRawRoots(encoded []byte, stamps []Stamp) error {
	var roots []rootOnly
	if err := json.Unmarshal(encoded, &roots); err != nil {
		return fmt.Errorf("depcache: the cached offers do not decode: %w", err)
	}
	want := make(map[string]bool, len(roots))
	for i, r := range roots {
		if !filepath.IsAbs(r.Root) || filepath.Clean(r.Root) != r.Root {
			return fmt.Errorf("depcache: cached offer %d has root %q, which is not an absolute clean path", i+1, r.Root)
		}
		want[r.Root] = false
	}
	for _, s := range stamps {
		if seen, ok := want[s.Path]; ok && !seen && s.Dir && s.Size >= 0 {
			want[s.Path] = true
		}
	}
	for i, r := range roots {
		if !want[r.Root] {
			return fmt.Errorf("depcache: cached offer %d has root %q, which is not a directory the answer was read from", i+1, r.Root)
		}
	}
	return nil
}

// StoreRawOffers persists encoded, an active_plugins answer encoded
// exactly as the PM sends it, under key with the stamps of the inputs it
// was read from, atomically. As for StoreOffers, an answer with a root
// that is not a recorded directory, or read from an input changed within
// RacyWindow, is refused with an error.
func (c *Cache) StoreRawOffers(key string, stamps []Stamp, encoded json.RawMessage) error {
	if c == nil || c.dir == "" {
		return nil
	}
	if err := checkRawRoots(encoded, stamps); err != nil {
		return err
	}
	if err := racy(stamps, time.Now()); err != nil {
		return err
	}
	return c.Store(key, stamps, encoded)
}
