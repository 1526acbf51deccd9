// Package fakeindex is a loopback Python package index for tests. It
// speaks the real simple repository API: PEP 691 JSON and PEP 503 HTML
// (negotiated on Accept), PEP 592 yanking, PEP 658/714 core metadata, and
// serves wheels built here with real METADATA, WHEEL, RECORD and
// entry_points.txt and their sha256 hashes, plus sdists. pip installs from
// it (see fakeindex_test.go).
package fakeindex

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Package is one release file the index serves.
type Package struct {
	Name    string
	Version string
	Summary string
	// Files are the wheel's (or sdist's) files outside dist-info, by
	// slash-separated path.
	Files map[string]string
	// EntryPoints is the entry_points.txt text ("" for none).
	EntryPoints string
	// Tag is the wheel's compatibility tag; "" means py3-none-any.
	Tag string
	// Sdist serves a .tar.gz source distribution instead of a wheel.
	Sdist bool
	// Yanked, when set, is the PEP 592 yank reason.
	Yanked string
	// Raw replaces the built archive bytes (for hostile archives);
	// Filename must then be set too.
	Raw      []byte
	Filename string
	// WrongHash makes the index advertise a hash that does not match.
	WrongHash bool
	// RequiresPython is advertised as data-requires-python.
	RequiresPython string
	// Truncate makes downloads of the file stop halfway (the connection is
	// dropped after half the advertised bytes).
	Truncate bool
}

// Index is a running fake index.
type Index struct {
	// URL is the simple API base, ending in "/simple/".
	URL string
	// HTMLOnly makes the index ignore the JSON Accept type (an old,
	// PEP 503-only index).
	HTMLOnly atomic.Bool
	// User and Password, when set, are required as HTTP basic auth.
	User, Password string

	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string][]file // normalized project -> files
	blobs    map[string][]byte // filename -> bytes
	meta     map[string][]byte // filename -> METADATA
	requests atomic.Int64
	// Down makes every request fail with 503.
	Down atomic.Bool
	// FailStatus, when not zero, is the HTTP status every request gets
	// (after authentication).
	FailStatus atomic.Int32
	// Stall makes file downloads send half their bytes, report the file
	// name on Stalled, then wait until the client goes away (the
	// connection is then dropped) or Unstall is called (the rest is sent).
	Stall atomic.Bool
	// Stalled receives the name of each file whose download stalled.
	Stalled chan string

	release     chan struct{}
	releaseOnce sync.Once
	closed      chan struct{}
	closeOnce   sync.Once
}

type file struct {
	truncate                          bool
	name, sha, yanked, requiresPython string
	hasMeta                           bool
	metaSHA                           string
}

// Start starts an index on 127.0.0.1 serving pkgs.
func Start(pkgs ...Package) *Index {
	ix := &Index{files: map[string][]file{}, blobs: map[string][]byte{}, meta: map[string][]byte{},
		Stalled: make(chan string, 64), release: make(chan struct{}), closed: make(chan struct{})}
	ix.srv = httptest.NewUnstartedServer(http.HandlerFunc(ix.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakeindex: listen: %v", err))
	}
	ix.srv.Listener = l
	ix.srv.Start()
	ix.URL = ix.srv.URL + "/simple/"
	for _, p := range pkgs {
		ix.Add(p)
	}
	return ix
}

// Close stops the index, releasing stalled downloads first.
func (ix *Index) Close() {
	ix.closeOnce.Do(func() { close(ix.closed) })
	ix.srv.Close()
}

// Unstall stops stalling: downloads waiting halfway send the rest, later
// ones are served whole.
func (ix *Index) Unstall() {
	ix.Stall.Store(false)
	ix.releaseOnce.Do(func() { close(ix.release) })
}

// Requests reports how many requests the index has served.
func (ix *Index) Requests() int64 { return ix.requests.Load() }

// Add publishes a package file.
func (ix *Index) Add(p Package) {
	var data []byte
	var fname string
	var metaText []byte
	switch {
	case p.Raw != nil:
		data, fname = p.Raw, p.Filename
	case p.Sdist:
		data, fname = BuildSdist(p), fmt.Sprintf("%s-%s.tar.gz", pyname.WheelEscape(p.Name), p.Version)
	default:
		tag := p.Tag
		if tag == "" {
			tag = "py3-none-any"
		}
		data = BuildWheel(p)
		fname = fmt.Sprintf("%s-%s-%s.whl", pyname.WheelEscape(p.Name), p.Version, tag)
		metaText = metadata(p)
	}
	sum := sha256.Sum256(data)
	f := file{name: fname, sha: hex.EncodeToString(sum[:]), yanked: p.Yanked, requiresPython: p.RequiresPython, truncate: p.Truncate}
	if p.WrongHash {
		f.sha = strings.Repeat("0", 64)
	}
	if metaText != nil {
		ms := sha256.Sum256(metaText)
		f.hasMeta, f.metaSHA = true, hex.EncodeToString(ms[:])
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	n := pyname.Normalize(p.Name)
	ix.files[n] = append(ix.files[n], f)
	ix.blobs[fname] = data
	if metaText != nil {
		ix.meta[fname] = metaText
	}
}

// truncated reports whether downloads of filename are cut; ix.mu is held.
func (ix *Index) truncated(filename string) bool {
	for _, fs := range ix.files {
		for _, f := range fs {
			if f.name == filename {
				return f.truncate
			}
		}
	}
	return false
}

// stall sends half of data, reports name on Stalled and waits for the
// client to leave (the connection is dropped) or for Unstall (the rest
// is sent). ix.mu is not held.
func (ix *Index) stall(w http.ResponseWriter, r *http.Request, name string, data []byte) {
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.Write(data[:len(data)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case ix.Stalled <- name:
	default:
	}
	select {
	case <-ix.release:
		w.Write(data[len(data)/2:])
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	case <-ix.closed:
		panic(http.ErrAbortHandler)
	}
}

func metadata(p Package) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", p.Name, p.Version)
	if p.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", p.Summary)
	}
	if p.RequiresPython != "" {
		fmt.Fprintf(&b, "Requires-Python: %s\n", p.RequiresPython)
	}
	b.WriteString("\nLong description.\n")
	return b.Bytes()
}

// BuildWheel builds a wheel for p with a correct RECORD.
func BuildWheel(p Package) []byte {
	tag := p.Tag
	if tag == "" {
		tag = "py3-none-any"
	}
	di := fmt.Sprintf("%s-%s.dist-info", pyname.WheelEscape(p.Name), p.Version)
	files := map[string][]byte{}
	for k, v := range p.Files {
		files[k] = []byte(v)
	}
	files[di+"/METADATA"] = metadata(p)
	files[di+"/WHEEL"] = []byte(fmt.Sprintf("Wheel-Version: 1.0\nGenerator: fakeindex\nRoot-Is-Purelib: true\nTag: %s\n", tag))
	if p.EntryPoints != "" {
		files[di+"/entry_points.txt"] = []byte(p.EntryPoints)
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var record bytes.Buffer
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", di)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range append(names, di+"/RECORD") {
		w, err := zw.Create(n)
		if err != nil {
			panic(err)
		}
		if n == di+"/RECORD" {
			w.Write(record.Bytes())
		} else {
			w.Write(files[n])
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// BuildSdist builds a .tar.gz source distribution for p with PKG-INFO.
func BuildSdist(p Package) []byte {
	top := fmt.Sprintf("%s-%s", pyname.WheelEscape(p.Name), p.Version)
	files := map[string][]byte{"PKG-INFO": metadata(p)}
	for k, v := range p.Files {
		files[k] = []byte(v)
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: top + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write(files[n])
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

const jsonType = "application/vnd.pypi.simple.v1+json"

func (ix *Index) serve(w http.ResponseWriter, r *http.Request) {
	ix.requests.Add(1)
	if ix.Down.Load() {
		http.Error(w, "index down", http.StatusServiceUnavailable)
		return
	}
	if ix.User != "" {
		u, p, ok := r.BasicAuth()
		if !ok || u != ix.User || p != ix.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="fake"`)
			http.Error(w, "auth required", http.StatusUnauthorized)
			return
		}
	}
	if st := ix.FailStatus.Load(); st != 0 {
		http.Error(w, "forced failure", int(st))
		return
	}
	wantJSON := strings.Contains(r.Header.Get("Accept"), jsonType) && !ix.HTMLOnly.Load()
	w.Header().Set("Vary", "Accept")
	ix.mu.Lock()
	defer ix.mu.Unlock()
	switch {
	case r.URL.Path == "/simple/" || r.URL.Path == "/simple":
		names := make([]string, 0, len(ix.files))
		for n := range ix.files {
			names = append(names, n)
		}
		sort.Strings(names)
		if wantJSON {
			type proj struct {
				Name string `json:"name"`
			}
			ps := []proj{}
			for _, n := range names {
				ps = append(ps, proj{n})
			}
			w.Header().Set("Content-Type", jsonType)
			json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "projects": ps})
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.1\"><title>Simple index</title></head><body>\n")
		for _, n := range names {
			fmt.Fprintf(w, "<a href=\"/simple/%s/\">%s</a>\n", n, n)
		}
		fmt.Fprint(w, "</body></html>\n")
	case strings.HasPrefix(r.URL.Path, "/simple/"):
		raw := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		n := pyname.Normalize(raw)
		if raw != n || !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, "/simple/"+n+"/", http.StatusMovedPermanently)
			return
		}
		files, ok := ix.files[n]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if wantJSON {
			var out []map[string]any
			for _, f := range files {
				m := map[string]any{"filename": f.name, "url": "../../files/" + f.name,
					"hashes": map[string]string{"sha256": f.sha}, "size": len(ix.blobs[f.name])}
				if f.yanked != "" {
					m["yanked"] = f.yanked
				} else {
					m["yanked"] = false
				}
				if f.requiresPython != "" {
					m["requires-python"] = f.requiresPython
				}
				if f.hasMeta {
					m["core-metadata"] = map[string]string{"sha256": f.metaSHA}
					m["dist-info-metadata"] = map[string]string{"sha256": f.metaSHA}
				}
				out = append(out, m)
			}
			w.Header().Set("Content-Type", jsonType)
			json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": n, "files": out})
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>Links for %s</title></head><body><h1>Links for %s</h1>\n", n, n)
		for _, f := range files {
			attrs := ""
			if f.requiresPython != "" {
				attrs += fmt.Sprintf(" data-requires-python=\"%s\"", html.EscapeString(f.requiresPython))
			}
			if f.yanked != "" {
				attrs += fmt.Sprintf(" data-yanked=\"%s\"", html.EscapeString(f.yanked))
			}
			if f.hasMeta {
				attrs += fmt.Sprintf(" data-core-metadata=\"sha256=%s\" data-dist-info-metadata=\"sha256=%s\"", f.metaSHA, f.metaSHA)
			}
			fmt.Fprintf(w, "<a href=\"../../files/%s#sha256=%s\"%s>%s</a><br/>\n", f.name, f.sha, attrs, f.name)
		}
		fmt.Fprint(w, "</body></html>\n")
	case strings.HasPrefix(r.URL.Path, "/files/"):
		name := strings.TrimPrefix(r.URL.Path, "/files/")
		if base, ok := strings.CutSuffix(name, ".metadata"); ok {
			if m, ok := ix.meta[base]; ok {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(m)
				return
			}
		}
		data, ok := ix.blobs[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		if ix.Stall.Load() {
			ix.mu.Unlock()
			defer ix.mu.Lock() // runs before the deferred Unlock
			ix.stall(w, r, name, data)
			return
		}
		if ix.truncated(name) {
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.Write(data[:len(data)/2])
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
		w.Write(data)
	default:
		http.NotFound(w, r)
	}
}
