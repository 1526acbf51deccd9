package depcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
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
// it follows in everything but decoding the answer), and the answer is
// one line of UTF-8 holding a JSON array, as the PM harness sends an
// answer encoded in advance. log may be nil.
func (c *Cache) LoadRawOffers(key string, log *slog.Logger) (json.RawMessage, bool) {
	value, err := c.loadEntry(key, sendableRoots)
	if err == nil {
		return json.RawMessage(value), true
	}
	if log != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errStale) {
		log.Debug("ignoring an unusable cached active_plugins answer", "file", c.file(key), "err", err)
	}
	return nil, false
}

// sendableRoots is rawRoots for offers the PM harness will send as they
// are: an answer encoded in advance must be one line of valid UTF-8
// holding a JSON array, or the harness refuses it. Anything else is
// neither stored nor, when found in the cache directory, loaded, so that
// the answer is computed again rather than refused on every hook.
func sendableRoots(encoded []byte) ([]string, error) {
	if len(encoded) < 2 || encoded[0] != '[' || encoded[len(encoded)-1] != ']' {
		return nil, errors.New("depcache: the cached offers are not a JSON array")
	}
	if bytes.IndexByte(encoded, '\n') >= 0 || !utf8.Valid(encoded) {
		return nil, errors.New("depcache: the cached offers are not one line of UTF-8")
	}
	return rawRoots(encoded)
}

// rawRoots decodes the roots of the encoded offers, and nothing else. A
// valid answer written plainly (see plainRoots), which is what StoreRawOffers
// keeps, is read without encoding/json's reflection over every offer;
// anything else is decoded as protocol.Offer decodes it.
func rawRoots(encoded []byte) ([]string, error) {
	if jsonscan.Valid(encoded) {
		if roots, ok := plainRoots(encoded); ok {
			return roots, nil
		}
	}
	var offers []rootOnly
	if err := json.Unmarshal(encoded, &offers); err != nil {
		return nil, fmt.Errorf("depcache: the cached offers do not decode: %w", err)
	}
	roots := make([]string, len(offers))
	for i, o := range offers {
		roots[i] = o.Root
	}
	return roots, nil
}

// plainRoots reads the roots of encoded, valid JSON, when it is an array of
// objects none of whose members but "root" could be taken for a root by
// encoding/json, which matches names without regard to case: a name with
// an escape or a byte outside ASCII, or "root" in other case, is left to
// it. A repeated "root" keeps the last, and a null leaves the root as it
// was, as encoding/json does.
func plainRoots(encoded []byte) ([]string, bool) {
	var roots []string
	ok := jsonscan.Elements(encoded, func(v json.RawMessage) bool {
		root, good := "", true
		isObject := jsonscan.RawMembers(v, func(name []byte, value json.RawMessage) {
			switch {
			case string(name) == `"root"`:
				if string(value) != "null" {
					var ok bool
					root, ok = jsonscan.DecodeString(value)
					good = good && ok
				}
			case jsonscan.MayBeField(name, "root"):
				good = false
			}
		})
		roots = append(roots, root)
		return isObject && good
	})
	if ok && roots == nil {
		roots = []string{}
	}
	return roots, ok
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
	roots, err := sendableRoots(encoded)
	if err != nil {
		return err
	}
	if err := checkRecordedRoots(roots, stamps); err != nil {
		return err
	}
	return c.Store(key, stamps, encoded)
}
