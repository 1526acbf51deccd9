package pypipm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pydist"
)

// Where a plugin root may be. A distribution's plugin roots come from where
// its files are: the site-packages directory it was installed into (or the
// cache directory it was unpacked into), checked after resolving symbolic
// links. What a package says about itself cannot move them: a
// direct_url.json shipped inside a wheel is installed by pip like any other
// file, so it is believed only for an editable install that the
// distribution's own installed files corroborate (a .pth file or an import
// finder in site-packages that points Python at the project directory).
// Such a project directory is allowed as a root, and the offer is announced
// with a warning naming it. Every other root outside is refused with a
// warning naming the distribution and the path.

// maxSmallFile bounds direct_url.json, RECORD and .pth files read to decide
// where a distribution's files are.
const maxSmallFile = 1 << 20

// readSmall reads a regular file of at most limit bytes; a link, a FIFO, a
// device or a larger file is an error. The Lstat refuses a link; the read
// is pkgfile's, so that a name swapped for a FIFO after the Lstat is still
// never opened for a blocking read (os.Open waited on it).
func readSmall(path string, limit int64) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return pkgfile.ReadFile(filepath.Dir(path), filepath.Base(path), limit)
}

// directURL is PEP 610's direct_url.json, the parts read here.
type directURL struct {
	URL     string `json:"url"`
	DirInfo *struct {
		Editable bool `json:"editable"`
	} `json:"dir_info"`
}

// editableProject returns the project directory of an editable install
// (PEP 610 direct_url.json with dir_info.editable true, a file: URL) when
// the distribution's installed files corroborate it. A direct_url.json
// naming a directory that is not so corroborated, or that is not editable
// (a local directory pip copied into site-packages), is ignored with a
// warning: the installed files are what the plugin is read from.
//
// It also returns the installed file that corroborates the install. Each
// direct_url.json ignored is a diagnostic of the request ctx belongs to.
func (p *PM) editableProject(ctx context.Context, in installed) (string, string, bool) {
	path := filepath.Join(in.distInfo, "direct_url.json")
	in.rec.Observe(path)
	data, err := readSmall(path, maxSmallFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", false
	}
	diag := func(msg string) pmserver.Diagnostic {
		return pmserver.Diagnostic{Message: msg, File: path, Package: idRef(in.id)}
	}
	if err != nil {
		p.warn(ctx, diag(fmt.Sprintf("direct_url.json cannot be read (%v); it is ignored and the files installed in site-packages are used", err)),
			"ignoring direct_url.json", "id", in.id, "path", path, "err", err)
		return "", "", false
	}
	var du directURL
	if err := json.Unmarshal(data, &du); err != nil {
		p.warn(ctx, diag("direct_url.json is not valid JSON; it is ignored and the files installed in site-packages are used"),
			"ignoring direct_url.json: not valid JSON", "id", in.id, "path", path, "err", jsonfile.Explain(path, data, err))
		return "", "", false
	}
	if du.DirInfo == nil {
		return "", "", false // an archive or VCS install: its files are in site-packages
	}
	u, err := url.Parse(du.URL)
	if err != nil || u.Scheme != "file" || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
		p.warn(ctx, diag("direct_url.json: its url is not a local directory; it is ignored and the files installed in site-packages are used"),
			"ignoring direct_url.json: its url is not a local directory", "id", in.id, "path", path)
		return "", "", false
	}
	dir := filepath.Clean(filepath.FromSlash(u.Path))
	if !du.DirInfo.Editable {
		p.warn(ctx, diag(fmt.Sprintf("direct_url.json names the source directory %s but not as an editable install; the files installed in %s are used", dir, in.site)),
			"not offering the source directory named by direct_url.json: it is not an editable install; the files installed in site-packages are used",
			"id", in.id, "dir", dir, "site_packages", in.site)
		return "", "", false
	}
	via, ok := p.pointsAt(in, dir)
	if !ok {
		p.warn(ctx, diag(fmt.Sprintf("direct_url.json claims an editable install of %s, but none of the .pth files or import finders the distribution installed points there; that directory is refused and the files installed in %s are used", dir, in.site)),
			"refusing the plugin root named by direct_url.json: it claims an editable install of a directory that none of the distribution's installed .pth files or import finders points at",
			"id", in.id, "dir", dir, "site_packages", in.site)
		return "", "", false
	}
	return dir, via, true
}

// pointsAt reports whether one of the files the distribution installed at
// the top of site-packages (per its RECORD) is a .pth file or an editable
// import finder naming dir (or a path under it), as setuptools, hatchling,
// flit, pdm and uv write for editable installs.
// It returns the name of that file. The files it reads are recorded in
// in.rec.
func (p *PM) pointsAt(in installed, dir string) (string, bool) {
	in.rec.Observe(filepath.Join(in.distInfo, "RECORD"))
	data, err := readSmall(filepath.Join(in.distInfo, "RECORD"), maxSmallFile*8)
	if err != nil {
		return "", false
	}
	rec, err := pydist.ParseRecord(data)
	if err != nil {
		return "", false
	}
	for _, e := range rec {
		name := e.Path
		if strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
			continue
		}
		if !strings.HasSuffix(name, ".pth") && !(strings.HasPrefix(name, "__editable__") && strings.HasSuffix(name, ".py")) {
			continue
		}
		in.rec.Observe(filepath.Join(in.site, name))
		body, err := readSmall(filepath.Join(in.site, name), maxSmallFile)
		if err != nil {
			continue
		}
		if namesDir(string(body), dir) {
			return name, true
		}
	}
	return "", false
}

// namesDir reports whether text contains dir as a whole path: followed by
// the end, a separator, a quote or a line end.
func namesDir(text, dir string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], dir)
		if k < 0 {
			return false
		}
		end := i + k + len(dir)
		if end == len(text) || strings.ContainsRune("/\\'\"\r\n", rune(text[end])) {
			return true
		}
		i += k + 1
	}
}

// allowedRoot checks a plugin root before anything is read from it: after
// resolving symbolic links it must lie inside the site-packages (or cache)
// directory the distribution's files are in, or inside a source tree that
// is trusted (an editable project corroborated by the installed files, a
// path dependency the workspace declares, an sdist unpacked in the cache).
// A root outside is refused with a warning naming the distribution and the
// path.
func (p *PM) allowedRoot(ctx context.Context, in installed, dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	var bases []string
	if in.site != "" {
		bases = append(bases, in.site)
	}
	if in.source != "" && (in.editable || in.distInfo == "") {
		bases = append(bases, in.source)
	}
	for _, b := range bases {
		rb, err := filepath.EvalSymlinks(b)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rb, real); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return true
		}
	}
	p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("plugin root %s (resolving to %s) lies outside the distribution's files (%s); it is refused", dir, real, strings.Join(bases, ", ")), Package: idRef(in.id)},
		"refusing a plugin root outside the distribution's files", "id", in.id, "root", dir, "resolves_to", real, "allowed", strings.Join(bases, " "))
	return false
}
