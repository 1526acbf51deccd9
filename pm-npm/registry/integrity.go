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
	"slices"
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
	_, err := v.Verify(d)
	return err
}

// Verify checks the digests against dist as Check does and returns, on a
// match, the digest that matched as a DigestKey: the key the verified
// tarball is cached under, one of DigestKeys(d).
func (v *Verifier) Verify(d Dist) (string, error) {
	alg, want := expected(d)
	switch alg {
	case "":
		return "", ErrNoChecksum
	case shasumAlgorithm:
		got := hex.EncodeToString(v.hashes["sha1"].Sum(nil))
		if want[0] == got {
			return "sha1-" + got, nil
		}
		return "", &IntegrityError{Expected: "sha1:" + want[0], Actual: "sha1:" + got}
	}
	sum := v.hashes[alg].Sum(nil)
	got := base64.StdEncoding.EncodeToString(sum)
	for _, d := range want {
		if d == got {
			return DigestKey(alg, sum), nil
		}
	}
	return "", &IntegrityError{Expected: alg + "-" + want[0], Actual: alg + "-" + got}
}

// shasumAlgorithm is what expected returns when dist.shasum, not
// dist.integrity, is what a download is verified against.
const shasumAlgorithm = "shasum"

// expected returns the algorithm a download is verified with against d
// and the digests it may have: the values of the strongest algorithm named
// in the SRI string d.Integrity (base64, SRI options dropped), or
// shasumAlgorithm and d.Shasum (hex, lower case) when the integrity names
// no known algorithm, or "" when there is nothing to verify against.
func expected(d Dist) (string, []string) {
	want := map[string][]string{}
	for _, tok := range strings.Fields(d.Integrity) {
		alg, digest, ok := strings.Cut(tok, "-")
		if !ok {
			continue
		}
		if i := strings.IndexByte(digest, '?'); i >= 0 {
			digest = digest[:i] // SRI options
		}
		if slices.Contains(algorithms, alg) {
			want[alg] = append(want[alg], digest)
		}
	}
	for i := len(algorithms) - 1; i >= 0; i-- {
		if ds, ok := want[algorithms[i]]; ok {
			return algorithms[i], ds
		}
	}
	if s := strings.ToLower(strings.TrimSpace(d.Shasum)); s != "" {
		return shasumAlgorithm, []string{s}
	}
	return "", nil
}

// DigestKey names a tarball by the digest it was verified with:
// "<algorithm>-<digest in lower-case hex>" (sha512-9f86…), a name fit for
// a directory, unlike SRI's base64.
func DigestKey(alg string, sum []byte) string {
	return alg + "-" + hex.EncodeToString(sum)
}

// digestSizes is the length in bytes of each algorithm's digest.
var digestSizes = map[string]int{"sha1": sha1.Size, "sha256": sha256.Size, "sha384": sha512.Size384, "sha512": sha512.Size}

// DigestKeys returns the DigestKeys a tarball verified against d may
// have: one for each well-formed value Verify compares with (the strongest
// algorithm of the integrity, else the shasum), none when d gives nothing
// to verify against. A cached tree under one of these keys is a tarball d
// describes; one under any other key is not.
func DigestKeys(d Dist) []string {
	alg, want := expected(d)
	var out []string
	for _, w := range want {
		if alg == shasumAlgorithm {
			if b, err := hex.DecodeString(w); err == nil && len(b) == sha1.Size {
				out = append(out, DigestKey("sha1", b))
			}
			continue
		}
		// Verify compares the standard base64 of the digest with the
		// value as written: only a value that is exactly that names it.
		b, err := base64.StdEncoding.DecodeString(w)
		if err == nil && len(b) == digestSizes[alg] && base64.StdEncoding.EncodeToString(b) == w {
			out = append(out, DigestKey(alg, b))
		}
	}
	return out
}

// ValidDigestKey reports whether key is a DigestKey: a known algorithm and
// a digest of its length in lower-case hex.
func ValidDigestKey(key string) bool {
	alg, digest, ok := strings.Cut(key, "-")
	if !ok || digestSizes[alg] == 0 || len(digest) != 2*digestSizes[alg] {
		return false
	}
	for _, r := range digest {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}
