// Package verifiedtree records which cached tree each package source
// verified, so that one host cache can serve workspaces configured for
// different sources without handing one workspace a tree only another
// source vouched for.
//
// A PM caches each downloaded archive unpacked under the digest it was
// verified with: <version dir>/<digest>/. Two sources (a private registry
// and the public one, say) may publish different archives under one name
// and version, so each archive keeps its own tree, and beside the trees a
// pointer file per source scope, <prefix><ScopeKey(urls...)>, names the
// digest of the tree that scope last verified. What never asks a source
// (an offline fetch, the hook path) serves only the tree the configured
// scope's pointer names (Lookup).
//
// The pointer is written atomically (Write) and read bounded, and the
// digest it holds is used as a directory name only once it is one path
// element (Parse) that the PM's own check accepts.
package verifiedtree

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// MaxPointer caps the size of a pointer file read, and of a digest.
const MaxPointer = 256

// ScopeKey names the sources urls (in order: a primary index first, then
// the extra ones) in pointer file names: 32 lower-case hex digits of the
// sha256 of the URLs (each preceded by its length), each with its user information (credentials) left
// out, its host lower-cased and its path's trailing slashes trimmed. A URL
// that does not parse enters as written. The key of the same sources
// with other credentials is the same; the URLs cannot be recovered from
// it.
func ScopeKey(urls ...string) string {
	h := sha256.New()
	for _, raw := range urls {
		writeURL(h, raw)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// writeURL writes raw, normalized as ScopeKey says, to h, preceded by its
// length: a URL holding a newline is never taken for two.
func writeURL(h hash.Hash, raw string) {
	if u, err := url.Parse(raw); err == nil {
		u.User = nil
		u.Host = strings.ToLower(u.Host)
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = strings.TrimRight(u.RawPath, "/")
		raw = u.String()
	}
	fmt.Fprintf(h, "%d:%s\n", len(raw), raw)
}

// Parse returns the digest a pointer file's content names: the content
// without surrounding white space, when it can name a directory beside
// the pointer: one path element of at most MaxPointer bytes, made of
// lower-case ASCII letters, digits and '-' only, not starting with '-'
// (so never ".", "..", a hidden name, a path, or two names that one
// case-insensitive file system takes for one). The PM checks the digest's own
// form besides (valid, in Lookup).
func Parse(data []byte) (string, bool) {
	s := strings.TrimSpace(string(data))
	if s == "" || len(s) > MaxPointer || s[0] == '-' {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return "", false
		}
	}
	return s, true
}

// Lookup returns the tree dir/<digest> that the pointer file dir/pointer
// names, when its digest passes Parse and valid and the tree is a
// directory. It reads the pointer bounded (MaxPointer), as a file inside
// dir (no link out of it), and records the pointer (present or not) and
// the tree in rec (nil records nothing): an answer derived from the
// lookup is stale once either changes. It never writes.
func Lookup(rec *depcache.Recorder, dir, pointer string, valid func(string) bool) (string, bool) {
	data, err := rec.ReadPackageFile(filepath.Join(dir, pointer), MaxPointer)
	if err != nil {
		return "", false
	}
	digest, ok := Parse(data)
	if !ok || !valid(digest) {
		return "", false
	}
	tree := filepath.Join(dir, digest)
	if !rec.ObserveDir(tree) {
		return "", false
	}
	return tree, true
}

// ErrInvalidDigest is wrapped by Write's error for a digest Parse refuses.
var ErrInvalidDigest = errors.New("not a digest that can name a directory")

// Write records that the scope of the pointer file dir/pointer verified
// the tree dir/<digest>: it writes the pointer atomically
// (atomicfile.WriteFile), unless it already names digest, and reports
// whether it wrote it (an unchanged pointer leaves answers derived from it
// valid). Write it once the tree is in place. Its error names the path.
func Write(dir, pointer, digest string) (bool, error) {
	path := filepath.Join(dir, pointer)
	if d, ok := Parse([]byte(digest)); !ok || d != digest {
		return false, fmt.Errorf("verifiedtree: recording %q in %s: %w", digest, path, ErrInvalidDigest)
	}
	if data, err := pkgfile.ReadFile(dir, pointer, MaxPointer); err == nil {
		if d, ok := Parse(data); ok && d == digest {
			return false, nil
		}
	}
	if err := atomicfile.WriteFile(path, []byte(digest+"\n"), 0o644); err != nil {
		return false, fmt.Errorf("verifiedtree: recording the verified digest in %s: %w", path, err)
	}
	return true, nil
}
