// Package venv reads what is installed in a Python virtual environment:
// the *.dist-info directories of its site-packages, their METADATA,
// entry_points.txt, RECORD and direct_url.json.
package venv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/distinfo"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Env is a located virtual environment.
type Env struct {
	// Root is the environment's directory (holding pyvenv.cfg).
	Root string
	// SitePackages are its site-packages directories (usually one).
	SitePackages []string
}

// Candidates returns the directories to look for a project's virtual
// environment in, in order: <workspace>/.venv, <workspace>/venv, then
// $VIRTUAL_ENV.
func Candidates(workspace string, getenv func(string) string) []string {
	c := []string{filepath.Join(workspace, ".venv"), filepath.Join(workspace, "venv")}
	if v := getenv("VIRTUAL_ENV"); v != "" {
		c = append(c, v)
	}
	return c
}

// Find returns the first candidate that is a virtual environment with a
// site-packages directory, or nil.
func Find(workspace string, getenv func(string) string) *Env {
	for _, dir := range Candidates(workspace, getenv) {
		if e := Open(dir); e != nil {
			return e
		}
	}
	return nil
}

// Open returns the environment at dir, or nil when dir has no
// site-packages directory.
func Open(dir string) *Env {
	var sites []string
	if runtime.GOOS == "windows" {
		sites = append(sites, filepath.Join(dir, "Lib", "site-packages"))
	}
	for _, lib := range []string{"lib", "lib64"} {
		ents, err := os.ReadDir(filepath.Join(dir, lib))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "python") || strings.HasPrefix(e.Name(), "pypy") {
				sites = append(sites, filepath.Join(dir, lib, e.Name(), "site-packages"))
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range sites {
		st, err := os.Stat(s)
		if err != nil || !st.IsDir() {
			continue
		}
		real, err := filepath.EvalSymlinks(s)
		if err != nil {
			real = s
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil
	}
	return &Env{Root: dir, SitePackages: out}
}

// PythonVersion reads the interpreter version from <root>/pyvenv.cfg
// ("version = 3.11.7" as venv writes it, "version_info = 3.11.7.final.0"
// as virtualenv does), or returns "". The file is read with
// pkgfile.ReadUserFile up to pkgfile.MaxManifest (a FIFO or a device is
// "" at once).
func PythonVersion(root string) string {
	data, err := pkgfile.ReadUserFile(filepath.Join(root, "pyvenv.cfg"), pkgfile.MaxManifest)
	if err != nil {
		return ""
	}
	found := ""
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "version", "version_info":
			parts := strings.Split(v, ".")
			if len(parts) > 3 {
				parts = parts[:3]
			}
			if found == "" || k == "version" {
				found = strings.Join(parts, ".")
			}
		}
	}
	return found
}

// Dist is one installed distribution.
type Dist struct {
	// Name is the PEP 503 normalized name, Version the installed version.
	Name    string
	Version string
	// Summary is the METADATA summary.
	Summary string
	// Site is the site-packages directory; DistInfo the .dist-info path.
	Site     string
	DistInfo string
}

// Dists lists the distributions installed in e, reading only the header of
// each METADATA file. A dist-info directory without readable metadata is
// skipped. When two site-packages hold the same name, the first wins.
func (e *Env) Dists() ([]Dist, error) {
	var out []Dist
	seen := map[string]bool{}
	for _, site := range e.SitePackages {
		ents, err := os.ReadDir(site)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", site, err)
		}
		for _, ent := range ents {
			if !ent.IsDir() || !strings.HasSuffix(ent.Name(), ".dist-info") {
				continue
			}
			di := filepath.Join(site, ent.Name())
			m, err := ReadMetadata(di)
			if err != nil {
				continue
			}
			n := m.Normalized()
			if seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, Dist{Name: n, Version: m.Version, Summary: m.Summary, Site: site, DistInfo: di})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Lookup returns the installed distribution named name (any spelling).
func (e *Env) Lookup(name string) (Dist, bool) {
	found, _ := e.LookupAll([]string{name})
	d, ok := found[pyname.Normalize(name)]
	return d, ok
}

// Passed is a candidate .dist-info directory LookupAll passed over: its
// directory name matches a wanted distribution, but its METADATA cannot be
// read (absent while an installer is still writing it, say) or names
// another project.
type Passed struct {
	// Name is the wanted distribution the directory name matched,
	// normalized.
	Name string
	// DistInfo is the .dist-info directory.
	DistInfo string
	// Err says why it was passed over: the error reading METADATA, or
	// that METADATA names another project.
	Err error
}

// LookupAll finds the installed distributions among names, reading each
// site-packages directory once and only the METADATA of candidates. The
// result is keyed by normalized name. It also returns the candidates it
// passed over (nil when none), in the order met: a caller recording its
// inputs records them, since a METADATA written or fixed later changes
// the answer.
func (e *Env) LookupAll(names []string) (map[string]Dist, []Passed) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[pyname.Normalize(n)] = true
	}
	out := map[string]Dist{}
	var passed []Passed
	for _, site := range e.SitePackages {
		ents, err := os.ReadDir(site)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			base, ok := strings.CutSuffix(ent.Name(), ".dist-info")
			if !ok || !ent.IsDir() {
				continue
			}
			// The directory name pre-filters ("name-version", the name
			// escaped by modern installers, raw with dashes by old ones);
			// the METADATA name decides.
			n := ""
			if dn, _, ok := strings.Cut(base, "-"); ok && want[pyname.Normalize(dn)] {
				n = pyname.Normalize(dn)
			} else if i := strings.LastIndex(base, "-"); i > 0 && want[pyname.Normalize(base[:i])] {
				n = pyname.Normalize(base[:i])
			}
			if n == "" {
				continue
			}
			if _, done := out[n]; done {
				continue
			}
			di := filepath.Join(site, ent.Name())
			m, err := ReadMetadata(di)
			if err == nil && m.Normalized() != n {
				err = fmt.Errorf("METADATA names %q", m.Name)
			}
			if err != nil {
				passed = append(passed, Passed{Name: n, DistInfo: di, Err: err})
				continue
			}
			out[n] = Dist{Name: n, Version: m.Version, Summary: m.Summary, Site: site, DistInfo: di}
		}
	}
	return out, passed
}

// maxMetadataHeader bounds how much of a METADATA file is read.
const maxMetadataHeader = 1 << 20

// ReadMetadata reads the header of <distInfo>/METADATA: a regular file
// inside distInfo (never a FIFO or a device, no link out of it), of which
// at most maxMetadataHeader bytes are read.
func ReadMetadata(distInfo string) (distinfo.Metadata, error) {
	f, err := pkgfile.Open(distInfo, "METADATA")
	if err != nil {
		return distinfo.Metadata{}, err
	}
	defer f.Close()
	header, err := readHeader(f, maxMetadataHeader)
	if err != nil {
		return distinfo.Metadata{}, fmt.Errorf("%s: reading METADATA: %w", distInfo, err)
	}
	m, err := distinfo.ParseMetadata(header)
	if err != nil {
		return m, fmt.Errorf("%s: %w", distInfo, err)
	}
	return m, nil
}

// readHeader reads r up to the blank line ending an email-style header
// (what follows is the description, often most of the file), at most limit
// bytes, into one buffer sized to a typical header: no reader buffer per
// file.
func readHeader(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, 2048)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), limit-len(buf)))
		}
		from := max(0, len(buf)-2)
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if bytes.HasPrefix(buf, []byte("\n")) || bytes.HasPrefix(buf, []byte("\r\n")) ||
			bytes.Contains(buf[from:], []byte("\n\n")) || bytes.Contains(buf[from:], []byte("\n\r\n")) {
			return buf, nil
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// SourceTree returns the local directory an editable or local-directory
// install came from (PEP 610 direct_url.json with a file: URL and
// dir_info), or "". direct_url.json is the installed package's: it is
// read with pkgfile.ReadFile inside the dist-info, up to
// pkgfile.MaxManifest, and a link out of it, a FIFO or a device is "".
func (d Dist) SourceTree() string {
	data, err := pkgfile.ReadFile(d.DistInfo, "direct_url.json", pkgfile.MaxManifest)
	if err != nil {
		return ""
	}
	var du struct {
		URL     string          `json:"url"`
		DirInfo json.RawMessage `json:"dir_info"`
	}
	if json.Unmarshal(data, &du) != nil || du.DirInfo == nil {
		return ""
	}
	u, err := url.Parse(du.URL)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}
