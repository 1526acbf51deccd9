package registry

import (
	"crypto/sha1" //nolint:gosec // npm's dist.shasum
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// FuzzCheck verifies a fixed download against arbitrary dist fields: the
// check passes only when they really name one of its digests, and then the
// key Verify gives it (its cache directory) is one DigestKeys(dist) names.
func FuzzCheck(f *testing.F) {
	payload := []byte("the tarball bytes")
	s512 := sha512.Sum512(payload)
	s256 := sha256.Sum256(payload)
	s1 := sha1.Sum(payload) //nolint:gosec
	good := []string{
		"sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
		"sha256-" + base64.StdEncoding.EncodeToString(s256[:]),
		"sha1-" + base64.StdEncoding.EncodeToString(s1[:]),
	}
	f.Add(good[0], "")
	f.Add(good[2]+" "+good[0]+"?opt", "")
	f.Add("sha1-"+base64.StdEncoding.EncodeToString(s1[:])+" sha512-AAAA", hex.EncodeToString(s1[:]))
	f.Add("md5-xyz", hex.EncodeToString(s1[:]))
	f.Add("", "")
	f.Fuzz(func(t *testing.T, integrity, shasum string) {
		v := NewVerifier()
		v.Write(payload)
		err := v.Check(Dist{Integrity: integrity, Shasum: shasum})
		if err != nil {
			return
		}
		named := strings.EqualFold(strings.TrimSpace(shasum), hex.EncodeToString(s1[:]))
		for _, g := range good {
			named = named || strings.Contains(integrity, g)
		}
		if !named {
			t.Errorf("integrity %q, shasum %q accepted for a download they do not describe", integrity, shasum)
		}
		d := Dist{Integrity: integrity, Shasum: shasum}
		key, err := v.Verify(d)
		if err != nil || !ValidDigestKey(key) || !slices.Contains(DigestKeys(d), key) {
			t.Errorf("integrity %q, shasum %q: Verify gave key %q (%v), not one of DigestKeys %q", integrity, shasum, key, err, DigestKeys(d))
		}
	})
}

// FuzzPick decodes arbitrary packuments and picks a version for arbitrary
// specs: never a panic, any version picked is one the packument lists, and
// a version picked is canonical (the form a cache directory is named by).
func FuzzPick(f *testing.F) {
	f.Add([]byte(`{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"version":"1.0.0"},"1.1.0":{"deprecated":"no"},"2.0.0-rc.1":{}}}`), "^1")
	f.Add([]byte(`{"name":"x","dist-tags":{"next":"9.9.9"},"versions":{"1.0.0":null}}`), "next")
	f.Add([]byte(`{"versions":{"../x":{}}}`), "*")
	f.Add([]byte(`{"versions":{" 1.0.0":{},"1.0.1\n":{},"v1.0.2":{},"1.0.3+b":{}}}`), "^1")
	f.Add([]byte(`{"dist-tags":{"latest":" 1.0.0"},"versions":{" 1.0.0":{}}}`), "latest")
	f.Fuzz(func(t *testing.T, doc []byte, spec string) {
		p, err := decodePackument(doc)
		if err != nil {
			return
		}
		v, err := Pick(p, spec)
		if err != nil {
			return
		}
		listed := false
		for _, lv := range p.Versions {
			listed = listed || lv == v
		}
		if v == nil || !listed {
			t.Errorf("picked %+v, not a listed version", v)
			return
		}
		if c, ok := CanonicalVersion(v.Version); ok && c != v.Version {
			t.Errorf("picked version %q, not canonical (%q)", v.Version, c)
		}
	})
}
