// Package npmreg is a loopback npm registry for tests. It speaks the part
// of the registry protocol npm install uses: GET /<name> answers the
// packument (every version's package.json with dist.tarball, dist.shasum and
// dist.integrity, plus dist-tags), GET /<name>/-/<file>.tgz the tarball.
// Packages are published from tarballs as npm pack makes them.
package npmreg

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// Registry is a running loopback registry.
type Registry struct {
	srv *httptest.Server

	mu       sync.Mutex
	packages map[string]*packument
	tarballs map[string][]byte
	// Requests counts the requests served, by path.
	requests map[string]int
	// stall, when set, holds tarball downloads until it is closed.
	stall   chan struct{}
	arrived chan struct{}
	once    sync.Once // closes arrived

}

// Stall makes every tarball download wait until release is called (or the
// client goes away); arrived is closed when the first one comes in. It lets
// a test interrupt an install at a known point.
func (r *Registry) Stall() (arrived <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stall, r.arrived = make(chan struct{}), make(chan struct{})
	r.once = sync.Once{}
	var once sync.Once
	stall := r.stall
	return r.arrived, func() { once.Do(func() { close(stall) }) }
}

type packument struct {
	Name     string                     `json:"name"`
	DistTags map[string]string          `json:"dist-tags"`
	Versions map[string]json.RawMessage `json:"versions"`
	Time     map[string]string          `json:"time"`
}

// New starts a registry on 127.0.0.1.
func New() *Registry {
	r := &Registry{packages: map[string]*packument{}, tarballs: map[string][]byte{}, requests: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the registry's base URL, ending in '/', for npm's registry setting.
func (r *Registry) URL() string { return r.srv.URL + "/" }

// Close stops the registry.
func (r *Registry) Close() { r.srv.Close() }

// Requests returns how many requests the path got.
func (r *Registry) Requests(p string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[p]
}

// Publish adds the package version in tgz (a tarball whose package.json is at
// package/package.json) and points dist-tags.latest at it.
func (r *Registry) Publish(tgz []byte) error {
	manifest, err := packageJSON(tgz)
	if err != nil {
		return fmt.Errorf("publishing: %w", err)
	}
	var meta map[string]any
	if err := json.Unmarshal(manifest, &meta); err != nil {
		return fmt.Errorf("publishing: package.json: %w", err)
	}
	name, _ := meta["name"].(string)
	version, _ := meta["version"].(string)
	if name == "" || version == "" {
		return errors.New("publishing: package.json needs name and version")
	}
	file := path.Base(name) + "-" + version + ".tgz"
	sha := sha1.Sum(tgz)
	sum := sha512.Sum512(tgz)
	meta["_id"] = name + "@" + version
	meta["dist"] = map[string]string{
		"tarball":   r.srv.URL + "/" + name + "/-/" + file,
		"shasum":    hex.EncodeToString(sha[:]),
		"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
	}
	doc, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	if p == nil {
		p = &packument{Name: name, DistTags: map[string]string{}, Versions: map[string]json.RawMessage{}, Time: map[string]string{}}
		r.packages[name] = p
	}
	p.Versions[version] = doc
	p.DistTags["latest"] = version
	p.Time[version] = time.Now().UTC().Format(time.RFC3339)
	r.tarballs["/"+name+"/-/"+file] = tgz
	return nil
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	// Scoped names arrive as /@scope%2fname.
	p, err := url.PathUnescape(req.URL.EscapedPath())
	if err != nil || req.Method != http.MethodGet {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests[p]++
	tgz, isTarball := r.tarballs[p]
	pkg := r.packages[strings.TrimPrefix(p, "/")]
	var doc []byte
	if pkg != nil {
		doc, _ = json.Marshal(pkg)
	}
	stall, arrived := r.stall, r.arrived
	r.mu.Unlock()
	if isTarball && stall != nil {
		r.once.Do(func() { close(arrived) })
		select {
		case <-stall:
		case <-req.Context().Done():
			return
		}
	}
	switch {
	case isTarball:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(tgz)
	case doc != nil:
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"Not found"}`)
	}
}

// packageJSON reads package/package.json out of an npm tarball.
func packageJSON(tgz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(strings.NewReader(string(tgz)))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, errors.New("no package/package.json in the tarball")
		}
		if err != nil {
			return nil, err
		}
		if h.Name == "package/package.json" {
			return io.ReadAll(io.LimitReader(tr, 1<<20))
		}
	}
}
