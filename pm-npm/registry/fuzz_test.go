package registry

import (
	"crypto/sha1" //nolint:gosec // npm's dist.shasum
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzCheck verifies a fixed download against arbitrary dist fields: the
// check passes only when they really name one of its digests.
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
	})
}

// FuzzPick decodes arbitrary packuments and picks a version for arbitrary
// specs: never a panic, and any version picked is one the packument lists.
func FuzzPick(f *testing.F) {
	f.Add([]byte(`{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"version":"1.0.0"},"1.1.0":{"deprecated":"no"},"2.0.0-rc.1":{}}}`), "^1")
	f.Add([]byte(`{"name":"x","dist-tags":{"next":"9.9.9"},"versions":{"1.0.0":null}}`), "next")
	f.Add([]byte(`{"versions":{"../x":{}}}`), "*")
	f.Fuzz(func(t *testing.T, doc []byte, spec string) {
		p, err := decodePackument(doc)
		if err != nil {
			return
		}
		v, err := Pick(p, spec)
		if err != nil {
			return
		}
		if v == nil || p.Versions[v.Version] != v {
			t.Errorf("picked %+v, not a listed version", v)
		}
	})
}
