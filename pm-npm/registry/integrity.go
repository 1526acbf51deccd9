package registry

import (
	"crypto/sha1" //nolint:gosec // npm's legacy dist.shasum is sha1
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// IntegrityError is a download whose digest does not match the registry's.
type IntegrityError struct {
	Expected string
	Actual   string
}

// Error describes the mismatch.
func (e *IntegrityError) Error() string {
	return fmt.Sprintf("checksum mismatch: expected %s, got %s", e.Expected, e.Actual)
}

// ErrNoChecksum is returned when the registry offers neither integrity nor
// shasum for a version: such a download cannot be verified and is refused.
var ErrNoChecksum = errors.New("the registry gives no integrity or shasum for this version")

// algorithms in increasing strength, as ssri ranks them.
var algorithms = []string{"sha1", "sha256", "sha384", "sha512"}

// Verifier hashes a download with every algorithm npm may name, so the
// check can be made once the bytes are written.
type Verifier struct {
	hashes map[string]hash.Hash
	w      io.Writer
}

// NewVerifier returns a Verifier; write the download to it.
func NewVerifier() *Verifier {
	v := &Verifier{hashes: map[string]hash.Hash{
		"sha1": sha1.New(), "sha256": sha256.New(), "sha384": sha512.New384(), "sha512": sha512.New(),
	}}
	ws := make([]io.Writer, 0, len(v.hashes))
	for _, h := range v.hashes {
		ws = append(ws, h)
	}
	v.w = io.MultiWriter(ws...)
	return v
}

// Write hashes p.
func (v *Verifier) Write(p []byte) (int, error) { return v.w.Write(p) }

// Check compares the digests with dist: the strongest algorithm named in the
// SRI string integrity must match one of its values; only when integrity
// names no known algorithm is the sha1 hex shasum used. It returns an
// *IntegrityError on mismatch and ErrNoChecksum when there is nothing to
// check against.
func (v *Verifier) Check(d Dist) error {
	want := map[string][]string{}
	for _, tok := range strings.Fields(d.Integrity) {
		alg, digest, ok := strings.Cut(tok, "-")
		if !ok {
			continue
		}
		if i := strings.IndexByte(digest, '?'); i >= 0 {
			digest = digest[:i] // SRI options
		}
		if _, known := v.hashes[alg]; known {
			want[alg] = append(want[alg], digest)
		}
	}
	for i := len(algorithms) - 1; i >= 0; i-- {
		alg := algorithms[i]
		ds, ok := want[alg]
		if !ok {
			continue
		}
		got := base64.StdEncoding.EncodeToString(v.hashes[alg].Sum(nil))
		for _, d := range ds {
			if d == got {
				return nil
			}
		}
		return &IntegrityError{Expected: alg + "-" + ds[0], Actual: alg + "-" + got}
	}
	if s := strings.ToLower(strings.TrimSpace(d.Shasum)); s != "" {
		got := hex.EncodeToString(v.hashes["sha1"].Sum(nil))
		if s == got {
			return nil
		}
		return &IntegrityError{Expected: "sha1:" + s, Actual: "sha1:" + got}
	}
	return ErrNoChecksum
}
