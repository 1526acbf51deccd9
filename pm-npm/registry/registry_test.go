package registry

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
)

func packument() *Packument {
	p := &Packument{Name: "x", DistTags: map[string]string{"latest": "1.5.0", "next": "2.0.0-rc.1", "bogus": "9.9.9"}, Versions: map[string]*Version{}}
	for _, v := range []string{"0.9.0", "1.0.0", "1.4.0", "1.5.0", "1.6.0", "2.0.0-rc.1", "3.0.0"} {
		p.Versions[v] = &Version{Version: v}
	}
	p.Versions["3.0.0"].Deprecated = []byte(`"broken"`)
	p.Versions["1.6.0"].Deprecated = []byte(`""`) // empty: not deprecated
	return p
}

func TestPick(t *testing.T) {
	for spec, want := range map[string]string{
		"":         "1.5.0", // latest wins when it satisfies
		"*":        "1.5.0",
		"latest":   "1.5.0",
		"next":     "2.0.0-rc.1",
		"^1":       "1.5.0", // latest satisfies ^1 although 1.6.0 is higher
		">=1.5.1":  "1.6.0",
		"^3":       "3.0.0", // deprecated, but the only match
		">=1":      "1.5.0",
		">1.5.0":   "1.6.0", // 3.0.0 is deprecated: avoided while another fits
		"1.0.0":    "1.0.0",
		"~0.9":     "0.9.0",
		"^2.0.0-0": "2.0.0-rc.1",
	} {
		got, err := Pick(packument(), spec)
		if err != nil || got.Version != want {
			t.Errorf("Pick(%q) = %v, %v; want %s", spec, got, err, want)
		}
	}
	for _, spec := range []string{"^4", "nosuchtag", "bogus"} {
		if _, err := Pick(packument(), spec); !errors.Is(err, ErrNoMatch) {
			t.Errorf("Pick(%q): %v, want ErrNoMatch", spec, err)
		}
	}
}

func TestVerifier(t *testing.T) {
	data := []byte("tarball bytes")
	s512 := sha512.Sum512(data)
	s256 := sha256.Sum256(data)
	s1 := sha1.Sum(data)
	sri512 := "sha512-" + base64.StdEncoding.EncodeToString(s512[:])
	sri256 := "sha256-" + base64.StdEncoding.EncodeToString(s256[:])
	check := func(d Dist) error {
		v := NewVerifier()
		v.Write(data)
		return v.Check(d)
	}
	var ie *IntegrityError
	for name, tc := range map[string]struct {
		d  Dist
		ok bool
	}{
		"sha512":                  {Dist{Integrity: sri512}, true},
		"several, strongest wins": {Dist{Integrity: "sha1-bogus " + sri512}, true},
		"strongest wrong":         {Dist{Integrity: sri256 + " sha512-AAAA"}, false},
		"sri options":             {Dist{Integrity: sri512 + "?foo"}, true},
		"shasum fallback":         {Dist{Shasum: hex.EncodeToString(s1[:])}, true},
		"shasum wrong":            {Dist{Shasum: "00"}, false},
		"integrity over shasum":   {Dist{Integrity: "sha512-AAAA", Shasum: hex.EncodeToString(s1[:])}, false},
	} {
		err := check(tc.d)
		if tc.ok != (err == nil) || (!tc.ok && !errors.As(err, &ie)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := check(Dist{}); !errors.Is(err, ErrNoChecksum) {
		t.Errorf("no checksum: %v", err)
	}
}

func TestPackumentURL(t *testing.T) {
	if got := PackumentURL("https://r.example/", "@scope/name"); got != "https://r.example/@scope%2fname" {
		t.Errorf("scoped: %s", got)
	}
}

type noEnv struct{}

func (noEnv) Lookup(string) (string, bool) { return "", false }
func (noEnv) Environ() []string            { return nil }

func TestClientAgainstFake(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "@s/pkg", Version: "1.0.0", Description: "scoped"})
	cfg := npmrc.Load("", envWith{"npm_config_registry": reg.URL(), "HOME": t.TempDir()})
	c, err := New(cfg, noEnv{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Packument(context.Background(), "@s/pkg")
	if err != nil || p.Versions["1.0.0"] == nil || p.Versions["1.0.0"].Dist.Integrity == "" {
		t.Fatalf("packument: %+v %v", p, err)
	}
	v := NewVerifier()
	if err := c.Download(context.Background(), p.Versions["1.0.0"].Dist.Tarball, v); err != nil {
		t.Fatal(err)
	}
	if err := v.Check(p.Versions["1.0.0"].Dist); err != nil {
		t.Error(err)
	}
	if _, err := c.Packument(context.Background(), "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

type envWith map[string]string

func (e envWith) Lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }
func (e envWith) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

// TestDigestKeys: a verified tarball's key is "<alg>-<hex>" of the
// algorithm it was verified with, one of the keys DigestKeys gives for the
// dist; values Verify could never match (malformed base64, a wrong length)
// name no key, and another tarball's digest is not among them.
func TestDigestKeys(t *testing.T) {
	data := []byte("tarball bytes")
	s512 := sha512.Sum512(data)
	s1 := sha1.Sum(data)
	other := sha512.Sum512([]byte("other bytes"))
	sri512 := "sha512-" + base64.StdEncoding.EncodeToString(s512[:])
	key512 := "sha512-" + hex.EncodeToString(s512[:])
	key1 := "sha1-" + hex.EncodeToString(s1[:])
	for name, tc := range map[string]struct {
		d    Dist
		key  string
		keys []string
	}{
		"sha512":          {Dist{Integrity: sri512}, key512, []string{key512}},
		"several values":  {Dist{Integrity: "sha512-" + base64.StdEncoding.EncodeToString(other[:]) + " " + sri512 + "?opt sha512-!!"}, key512, []string{"sha512-" + hex.EncodeToString(other[:]), key512}},
		"weaker ignored":  {Dist{Integrity: "sha1-" + base64.StdEncoding.EncodeToString(s1[:]) + " " + sri512}, key512, []string{key512}},
		"shasum":          {Dist{Shasum: " " + strings.ToUpper(hex.EncodeToString(s1[:]))}, key1, []string{key1}},
		"unpadded base64": {Dist{Integrity: strings.TrimRight(sri512, "=")}, "", nil},
	} {
		v := NewVerifier()
		v.Write(data)
		key, err := v.Verify(tc.d)
		if key != tc.key || (err == nil) != (tc.key != "") {
			t.Errorf("%s: Verify = %q, %v; want %q", name, key, err, tc.key)
		}
		if got := DigestKeys(tc.d); !slices.Equal(got, tc.keys) {
			t.Errorf("%s: DigestKeys = %q, want %q", name, got, tc.keys)
		}
		for _, k := range tc.keys {
			if !ValidDigestKey(k) {
				t.Errorf("%s: %q is not a valid key", name, k)
			}
		}
	}
	for _, k := range []string{"", "sha512-", "md5-" + hex.EncodeToString(s1[:]), "sha1-" + hex.EncodeToString(s512[:]), "sha1-" + strings.ToUpper(hex.EncodeToString(s1[:])), "sha1-../" + hex.EncodeToString(s1[:])[3:]} {
		if ValidDigestKey(k) {
			t.Errorf("ValidDigestKey(%q) = true", k)
		}
	}
}
