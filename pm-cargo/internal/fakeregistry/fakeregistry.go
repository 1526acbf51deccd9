// Package fakeregistry is a crates.io look-alike on loopback for tests: it
// speaks cargo's sparse index protocol (config.json, index files at the
// 1/2/3/4+ character paths, one JSON line per version with cksum and yanked),
// serves real gzipped .crate archives whose sha256 is the index checksum, and
// answers the web API search (/api/v1/crates?q=).
//
// Real cargo resolves and fetches from it through source replacement; see
// WriteCargoConfig.
package fakeregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/registry"
)

// Crate is one published version.
type Crate struct {
	Name    string
	Version string
	Deps    []Dep
	Yanked  bool
	// Description is reported by search.
	Description string
	// Files are extra files of the .crate, by slash path relative to the
	// crate root. A "Cargo.toml" here replaces the generated manifest;
	// "src/lib.rs" is added when absent.
	Files map[string]string
	// Metadata is appended to the generated Cargo.toml verbatim (e.g. a
	// [package.metadata.symposium] table).
	Metadata string
	// Raw, when set, is served verbatim as the .crate (hostile archives in
	// tests); Files and Metadata are then ignored. The index checksum is
	// still its sha256.
	Raw []byte
	// Cksum, when set, is what the index claims as the checksum instead of
	// the real sha256 (a tampered download).
	Cksum string
}

// Dep is a dependency of a published version, as the index records it.
type Dep struct {
	// Name is the name the dependent uses (the rename, if Package is set).
	Name     string
	Req      string
	Kind     string // "normal" (default), "dev" or "build"
	Optional bool
	Target   string
	// Package is the real crate name when Name is a rename.
	Package string
}

type version struct {
	c      Crate
	crate  []byte
	cksum  string
	yanked bool
}

// Registry is a running fake registry.
type Registry struct {
	srv *httptest.Server

	mu       sync.Mutex
	crates   map[string][]*version // by lower-case name
	requests []string
	agents   []string
	down     bool
	status   int
	stall    chan struct{}
	stalled  chan struct{}
}

// New starts a registry on 127.0.0.1 with the given crates.
func New(crates ...Crate) (*Registry, error) {
	r := &Registry{crates: map[string][]*version{}}
	for _, c := range crates {
		if err := r.Add(c); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Listener.Close()
	r.srv.Listener = l
	r.srv.Start()
	return r, nil
}

// Close stops the server.
func (r *Registry) Close() { r.srv.Close() }

// URL is the server's base URL (the web API root).
func (r *Registry) URL() string { return r.srv.URL }

// IndexURL is the sparse index URL as cargo writes it, with the sparse+
// prefix.
func (r *Registry) IndexURL() string { return "sparse+" + r.srv.URL + "/index/" }

// SetDown makes every request fail with 503 until called with false.
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// SetStatus makes every request fail with the given HTTP status (0 restores
// normal service).
func (r *Registry) SetStatus(code int) {
	r.mu.Lock()
	r.status = code
	r.mu.Unlock()
}

// StallDownloads makes every later .crate download send its headers and
// the first half of the archive, then hang until release is closed (or the
// client goes away). Each stalled download sends one value on the returned
// channel once it is hanging.
func (r *Registry) StallDownloads(release chan struct{}) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stall = release
	r.stalled = make(chan struct{}, 64)
	return r.stalled
}

// Requests returns the request paths served so far.
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// UserAgents returns the User-Agent of each request served so far.
func (r *Registry) UserAgents() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.agents...)
}

// Add publishes a version (or replaces one with the same name and version).
func (r *Registry) Add(c Crate) error {
	if c.Name == "" || c.Version == "" {
		return fmt.Errorf("fakeregistry: crate needs a name and a version")
	}
	data := c.Raw
	if data == nil {
		var err error
		if data, err = buildCrate(c); err != nil {
			return err
		}
	}
	sum := sha256.Sum256(data)
	v := &version{c: c, crate: data, cksum: hex.EncodeToString(sum[:]), yanked: c.Yanked}
	if c.Cksum != "" {
		v.cksum = c.Cksum
	}
	key := strings.ToLower(c.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	vs := r.crates[key]
	for i, old := range vs {
		if old.c.Version == c.Version {
			vs[i] = v
			return nil
		}
	}
	r.crates[key] = append(vs, v)
	return nil
}

// Checksum returns the sha256 of a published .crate.
func (r *Registry) Checksum(name, ver string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.crates[strings.ToLower(name)] {
		if v.c.Version == ver {
			return v.cksum
		}
	}
	return ""
}

// WriteCargoConfig writes dir/config.toml replacing crates-io with this
// registry, so cargo run with CARGO_HOME=dir uses it.
func (r *Registry) WriteCargoConfig(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`[source.crates-io]
replace-with = "fake"

[source.fake]
registry = %q

[net]
retry = 0
`, r.IndexURL())
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644)
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.URL.RequestURI())
	r.agents = append(r.agents, req.UserAgent())
	down, status := r.down, r.status
	r.mu.Unlock()
	if down {
		http.Error(w, "registry is down", http.StatusServiceUnavailable)
		return
	}
	if status != 0 {
		http.Error(w, "injected failure", status)
		return
	}
	p := req.URL.Path
	switch {
	case p == "/index/config.json":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"dl": r.srv.URL + "/api/v1/crates", "api": r.srv.URL})
	case strings.HasPrefix(p, "/index/"):
		r.serveIndex(w, strings.TrimPrefix(p, "/index/"))
	case p == "/api/v1/crates":
		r.serveSearch(w, req)
	case strings.HasPrefix(p, "/api/v1/crates/") && strings.HasSuffix(p, "/download"):
		parts := strings.Split(strings.TrimPrefix(p, "/api/v1/crates/"), "/")
		if len(parts) != 3 {
			http.NotFound(w, req)
			return
		}
		r.serveDownload(w, req, parts[0], parts[1])
	default:
		http.NotFound(w, req)
	}
}

func (r *Registry) serveIndex(w http.ResponseWriter, path string) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	if registry.IndexPath(name) != strings.ToLower(path) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	r.mu.Lock()
	vs := append([]*version(nil), r.crates[strings.ToLower(name)]...)
	r.mu.Unlock()
	if len(vs) == 0 {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var buf bytes.Buffer
	for _, v := range vs {
		line, _ := json.Marshal(indexLine(v))
		buf.Write(line)
		buf.WriteByte('\n')
	}
	sum := sha256.Sum256(buf.Bytes())
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	w.Header().Set("Content-Type", "text/plain")
	w.Write(buf.Bytes())
}

type jsonDep struct {
	Name            string   `json:"name"`
	Req             string   `json:"req"`
	Features        []string `json:"features"`
	Optional        bool     `json:"optional"`
	DefaultFeatures bool     `json:"default_features"`
	Target          *string  `json:"target"`
	Kind            string   `json:"kind"`
	Registry        *string  `json:"registry"`
	Package         *string  `json:"package,omitempty"`
}

func indexLine(v *version) map[string]any {
	deps := []jsonDep{}
	for _, d := range v.c.Deps {
		jd := jsonDep{Name: d.Name, Req: d.Req, Features: []string{}, Optional: d.Optional, DefaultFeatures: true, Kind: d.Kind}
		if jd.Kind == "" {
			jd.Kind = "normal"
		}
		if d.Target != "" {
			t := d.Target
			jd.Target = &t
		}
		if d.Package != "" {
			p := d.Package
			jd.Package = &p
		}
		deps = append(deps, jd)
	}
	features := map[string][]string{}
	for _, d := range v.c.Deps {
		if d.Optional {
			features[d.Name] = []string{"dep:" + d.Name}
		}
	}
	return map[string]any{
		"name": v.c.Name, "vers": v.c.Version, "deps": deps, "cksum": v.cksum,
		"features": features, "yanked": v.yanked, "links": nil, "v": 2,
	}
}

func (r *Registry) serveDownload(w http.ResponseWriter, req *http.Request, name, ver string) {
	r.mu.Lock()
	var found *version
	for _, v := range r.crates[strings.ToLower(name)] {
		if v.c.Version == ver && v.c.Name == name {
			found = v
		}
	}
	stall, stalled := r.stall, r.stalled
	r.mu.Unlock()
	if found == nil {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(found.crate)))
	if stall != nil {
		half := len(found.crate) / 2
		w.Write(found.crate[:half])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case stalled <- struct{}{}:
		default:
		}
		select {
		case <-stall:
		case <-req.Context().Done():
			return
		}
		w.Write(found.crate[half:])
		return
	}
	w.Write(found.crate)
}

func (r *Registry) serveSearch(w http.ResponseWriter, req *http.Request) {
	q := strings.ToLower(req.URL.Query().Get("q"))
	per := 10
	if n, err := strconv.Atoi(req.URL.Query().Get("per_page")); err == nil && n > 0 && n <= 100 {
		per = n
	}
	type hit struct {
		Name        string  `json:"name"`
		MaxVersion  string  `json:"max_version"`
		Description *string `json:"description"`
	}
	r.mu.Lock()
	var hits []hit
	for _, vs := range r.crates {
		name := vs[0].c.Name
		if !strings.Contains(strings.ToLower(name), q) && !strings.Contains(strings.ReplaceAll(strings.ToLower(name), "_", "-"), strings.ReplaceAll(q, "_", "-")) {
			continue
		}
		var best *version
		for _, v := range vs {
			if v.yanked {
				continue
			}
			if best == nil || lessVersion(best.c.Version, v.c.Version) {
				best = v
			}
		}
		if best == nil {
			continue
		}
		h := hit{Name: name, MaxVersion: best.c.Version}
		// The crate's description is its latest published one.
		for _, v := range vs {
			if v.c.Description != "" {
				d := v.c.Description
				h.Description = &d
			}
		}
		hits = append(hits, h)
	}
	r.mu.Unlock()
	sort.Slice(hits, func(i, j int) bool { return hits[i].Name < hits[j].Name })
	total := len(hits)
	if len(hits) > per {
		hits = hits[:per]
	}
	if hits == nil {
		hits = []hit{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"crates": hits, "meta": map[string]any{"total": total}})
}

// lessVersion orders plain x.y.z versions numerically (pre-releases after
// their base, good enough for the fake's max_version).
func lessVersion(a, b string) bool {
	pa, pb := strings.SplitN(a, "-", 2), strings.SplitN(b, "-", 2)
	na, nb := strings.Split(pa[0], "."), strings.Split(pb[0], ".")
	for i := 0; i < len(na) && i < len(nb); i++ {
		x, _ := strconv.Atoi(na[i])
		y, _ := strconv.Atoi(nb[i])
		if x != y {
			return x < y
		}
	}
	if len(pa) != len(pb) {
		return len(pa) == 2 // a pre-release sorts before its release
	}
	return a < b
}

// buildCrate makes the gzipped tarball cargo expects: every file under
// "<name>-<version>/", deterministic so the checksum is stable.
func buildCrate(c Crate) ([]byte, error) {
	files := map[string]string{}
	for k, v := range c.Files {
		files[k] = v
	}
	if _, ok := files["Cargo.toml"]; !ok {
		files["Cargo.toml"] = manifestFor(c)
	}
	if _, ok := files["src/lib.rs"]; !ok {
		files["src/lib.rs"] = ""
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	prefix := c.Name + "-" + c.Version + "/"
	mtime := time.Unix(1700000000, 0)
	for _, n := range names {
		body := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: prefix + n, Mode: 0o644, Size: int64(len(body)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func manifestFor(c Crate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[package]\nname = %q\nversion = %q\nedition = \"2021\"\n", c.Name, c.Version)
	if c.Description != "" {
		fmt.Fprintf(&b, "description = %q\n", c.Description)
	}
	tables := map[string][]Dep{}
	for _, d := range c.Deps {
		t := "dependencies"
		switch d.Kind {
		case "dev":
			t = "dev-dependencies"
		case "build":
			t = "build-dependencies"
		}
		if d.Target != "" {
			t = fmt.Sprintf("target.%q.%s", d.Target, t)
		}
		tables[t] = append(tables[t], d)
	}
	keys := make([]string, 0, len(tables))
	for k := range tables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n[%s]\n", k)
		for _, d := range tables[k] {
			fmt.Fprintf(&b, "%s = { version = %q", d.Name, d.Req)
			if d.Optional {
				b.WriteString(", optional = true")
			}
			if d.Package != "" {
				fmt.Fprintf(&b, ", package = %q", d.Package)
			}
			b.WriteString(" }\n")
		}
	}
	if c.Metadata != "" {
		b.WriteString("\n" + c.Metadata + "\n")
	}
	return b.String()
}
