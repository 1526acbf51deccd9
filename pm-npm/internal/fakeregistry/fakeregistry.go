// Package fakeregistry is an npm registry on loopback for tests. It speaks
// the real protocol — full and abbreviated packuments (chosen by the Accept
// header), scoped names requested as "@scope%2fname" or "@scope/name",
// tarballs with sha512 integrity and sha1 shasum, and /-/v1/search — well
// enough that the real npm CLI installs from it.
package fakeregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1" //nolint:gosec // npm's dist.shasum
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Registry is a running fake registry.
type Registry struct {
	srv *httptest.Server

	mu       sync.Mutex
	pkgs     map[string]*pkg
	auth     string        // when set, the Authorization header every request needs
	fail     int           // when non-zero, every request gets this HTTP status
	release  chan struct{} // when non-nil, tarball responses stall until it closes
	stalled  chan string   // receives the path of every stalled tarball response
	requests atomic.Int64
	tarballs atomic.Int64
}

type pkg struct {
	name     string
	desc     string
	distTags map[string]string
	versions map[string]*version
}

type version struct {
	manifest map[string]any
	tgz      []byte
	// integrity and shasum as served (may be deliberately wrong).
	integrity, shasum string
	deprecated        string
}

// New starts a registry on 127.0.0.1; it stops when Close is called.
func New() *Registry {
	r := &Registry{pkgs: map[string]*pkg{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL returns the registry URL, ending in "/".
func (r *Registry) URL() string { return r.srv.URL + "/" }

// Close releases stalled responses and stops the server.
func (r *Registry) Close() {
	r.Unstall()
	r.srv.Close()
}

// Requests returns the number of requests served so far.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// TarballRequests returns the number of tarball requests served so far.
func (r *Registry) TarballRequests() int64 { return r.tarballs.Load() }

// RequireToken makes every request need "Authorization: Bearer token"
// ("" lifts the requirement).
func (r *Registry) RequireToken(token string) {
	if token == "" {
		r.RequireAuthorization("")
		return
	}
	r.RequireAuthorization("Bearer " + token)
}

// RequireAuthorization makes every request need exactly this Authorization
// header value, answering 401 otherwise ("" lifts the requirement).
func (r *Registry) RequireAuthorization(value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = value
}

// StallTarballs makes every tarball response from now on send the first
// half of the tarball and then hang until Unstall or Close is called or the
// client goes away (it never completes in that case). The path of each
// stalled response is sent on the returned channel once its first half is
// flushed to the client.
func (r *Registry) StallTarballs() <-chan string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.release == nil {
		r.release = make(chan struct{})
		r.stalled = make(chan string, 64)
	}
	return r.stalled
}

// Unstall lets stalled tarball responses finish and stops stalling new ones.
func (r *Registry) Unstall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.release != nil {
		close(r.release)
		r.release = nil
	}
}

// Fail makes every request answer with the HTTP status code (0 restores
// normal service).
func (r *Registry) Fail(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = status
}

// Version describes a version to publish.
type Version struct {
	Name    string
	Version string
	// Description goes in package.json and the packument.
	Description string
	// Dependencies are the version's dependencies (name → range).
	Dependencies map[string]string
	// Files are extra files under package/ (path → content). A
	// "package.json" here replaces the generated one.
	Files map[string]string
	// Deprecated, when set, marks the version deprecated.
	Deprecated string
	// Tag is the dist-tag to point at this version; "" means "latest" when
	// the version is the highest non-prerelease published so far.
	Tag string
	// Tarball, when set, is served instead of one built from Files.
	Tarball []byte
	// Integrity, when set, is served instead of the tarball's real one;
	// NoIntegrity serves no integrity (shasum only).
	Integrity   string
	NoIntegrity bool
}

// Publish adds a version.
func (r *Registry) Publish(v Version) {
	manifest := map[string]any{"name": v.Name, "version": v.Version}
	if v.Description != "" {
		manifest["description"] = v.Description
	}
	if len(v.Dependencies) > 0 {
		manifest["dependencies"] = v.Dependencies
	}
	tgz := v.Tarball
	if tgz == nil {
		files := map[string]string{}
		for k, c := range v.Files {
			files[k] = c
		}
		if _, ok := files["package.json"]; !ok {
			b, _ := json.MarshalIndent(manifest, "", "  ")
			files["package.json"] = string(b) + "\n"
		}
		tgz = Tarball(FilesToEntries("package/", files)...)
	}
	sum512 := sha512.Sum512(tgz)
	sum1 := sha1.Sum(tgz) //nolint:gosec
	ver := &version{
		manifest:   manifest,
		tgz:        tgz,
		integrity:  "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
		shasum:     hex.EncodeToString(sum1[:]),
		deprecated: v.Deprecated,
	}
	if v.Integrity != "" {
		ver.integrity = v.Integrity
	}
	if v.NoIntegrity {
		ver.integrity = ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pkgs[v.Name]
	if p == nil {
		p = &pkg{name: v.Name, distTags: map[string]string{}, versions: map[string]*version{}}
		r.pkgs[v.Name] = p
	}
	if v.Description != "" {
		p.desc = v.Description
	}
	p.versions[v.Version] = ver
	switch {
	case v.Tag != "":
		p.distTags[v.Tag] = v.Version
	case !strings.Contains(v.Version, "-"):
		if cur, ok := p.distTags["latest"]; !ok || lessVersion(cur, v.Version) {
			p.distTags["latest"] = v.Version
		}
	}
}

// lessVersion compares plain x.y.z versions numerically (enough for
// choosing the default latest tag).
func lessVersion(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.requests.Add(1)
	r.mu.Lock()
	auth, fail := r.auth, r.fail
	r.mu.Unlock()
	if fail != 0 {
		http.Error(w, "failing on purpose", fail)
		return
	}
	if auth != "" && req.Header.Get("Authorization") != auth {
		http.Error(w, `{"error":"authentication required"}`, http.StatusUnauthorized)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p, err := url.PathUnescape(req.URL.EscapedPath())
	if err != nil {
		http.NotFound(w, req)
		return
	}
	p = strings.TrimPrefix(p, "/")
	switch {
	case p == "-/v1/search":
		r.search(w, req)
	case strings.Contains(p, "/-/"):
		r.tarball(w, req, p)
	default:
		r.packument(w, req, p)
	}
}

func (r *Registry) packument(w http.ResponseWriter, req *http.Request, name string) {
	r.mu.Lock()
	p := r.pkgs[name]
	var doc map[string]any
	abbreviated := strings.Contains(req.Header.Get("Accept"), "application/vnd.npm.install-v1+json")
	if p != nil {
		doc = r.doc(p, req, abbreviated)
	}
	r.mu.Unlock()
	if p == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"Not found"}`))
		return
	}
	body, _ := json.Marshal(doc)
	if abbreviated {
		w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	_, _ = w.Write(body)
}

// doc builds the packument; the caller holds r.mu.
func (r *Registry) doc(p *pkg, req *http.Request, abbreviated bool) map[string]any {
	base := "http://" + req.Host + "/"
	vers := map[string]any{}
	times := map[string]any{"created": "2020-01-01T00:00:00.000Z", "modified": "2020-01-02T00:00:00.000Z"}
	for v, ver := range p.versions {
		m := map[string]any{}
		for k, x := range ver.manifest {
			m[k] = x
		}
		dist := map[string]any{"tarball": base + TarballPath(p.name, v), "shasum": ver.shasum}
		if ver.integrity != "" {
			dist["integrity"] = ver.integrity
		}
		m["dist"] = dist
		if ver.deprecated != "" {
			m["deprecated"] = ver.deprecated
		}
		if !abbreviated {
			m["_id"] = p.name + "@" + v
		}
		vers[v] = m
		times[v] = "2020-01-01T00:00:00.000Z"
	}
	doc := map[string]any{"name": p.name, "dist-tags": p.distTags, "versions": vers}
	if abbreviated {
		doc["modified"] = "2020-01-02T00:00:00.000Z"
	} else {
		doc["_id"] = p.name
		doc["time"] = times
		if p.desc != "" {
			doc["description"] = p.desc
		}
	}
	return doc
}

// TarballPath returns the path (without leading slash) where the registry
// serves name@version's tarball: "name/-/name-1.0.0.tgz",
// "@scope/name/-/name-1.0.0.tgz".
func TarballPath(name, version string) string {
	base := name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		base = name[i+1:]
	}
	return name + "/-/" + base + "-" + version + ".tgz"
}

func (r *Registry) tarball(w http.ResponseWriter, req *http.Request, p string) {
	r.tarballs.Add(1)
	name, _, _ := strings.Cut(p, "/-/")
	r.mu.Lock()
	var tgz []byte
	if pk := r.pkgs[name]; pk != nil {
		for v, ver := range pk.versions {
			if TarballPath(name, v) == p {
				tgz = ver.tgz
				break
			}
		}
	}
	release, stalled := r.release, r.stalled
	r.mu.Unlock()
	if tgz == nil {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(tgz)))
	if release != nil {
		half := len(tgz) / 2
		_, _ = w.Write(tgz[:half])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case stalled <- p:
		default: // nobody is counting
		}
		select {
		case <-release:
		case <-req.Context().Done():
			return
		}
		tgz = tgz[half:]
	}
	_, _ = w.Write(tgz)
}

func (r *Registry) search(w http.ResponseWriter, req *http.Request) {
	text := strings.ToLower(req.URL.Query().Get("text"))
	size, err := strconv.Atoi(req.URL.Query().Get("size"))
	if err != nil || size <= 0 || size > 250 {
		size = 20
	}
	type hit struct {
		Package map[string]any `json:"package"`
		Score   map[string]any `json:"score"`
	}
	var hits []hit
	r.mu.Lock()
	names := make([]string, 0, len(r.pkgs))
	for n := range r.pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := r.pkgs[n]
		if text != "" && !strings.Contains(strings.ToLower(n), text) && !strings.Contains(strings.ToLower(p.desc), text) {
			continue
		}
		pkgDoc := map[string]any{"name": n, "version": p.distTags["latest"], "date": "2020-01-01T00:00:00.000Z"}
		if p.desc != "" {
			pkgDoc["description"] = p.desc
		}
		hits = append(hits, hit{Package: pkgDoc, Score: map[string]any{"final": 1.0}})
		if len(hits) == size {
			break
		}
	}
	r.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"objects": hits, "total": len(hits), "time": time.Unix(0, 0).UTC().Format(time.RFC1123)})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Entry is one tar entry for Tarball.
type Entry struct {
	Name     string
	Body     string
	Type     byte // tar.TypeReg when zero
	Linkname string
	Mode     int64
}

// FilesToEntries turns path → content into regular-file entries under prefix.
func FilesToEntries(prefix string, files map[string]string) []Entry {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		out = append(out, Entry{Name: prefix + n, Body: files[n]})
	}
	return out
}

// Tarball builds a gzip'd tar of entries, exactly as given (so tests can
// build hostile archives).
func Tarball(entries ...Entry) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.Type
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.Mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.Name, Typeflag: typ, Linkname: e.Linkname, Mode: mode, ModTime: time.Unix(499162500, 0)}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.Body))
		}
		_ = tw.WriteHeader(h)
		if typ == tar.TypeReg {
			_, _ = tw.Write([]byte(e.Body))
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}
