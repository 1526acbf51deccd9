package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// checkOffer checks an offer pm made as ValidateOffer documents, without
// opening its root when it need not: a plugin that will not be enabled is
// never walked, so most offers need only know that the root is a directory
// and that each source.path stays inside it. A source.path of one component
// that is not a symbolic link is settled by one lstat of root/<component>
// (which also shows the root to be a directory), through ps (nil: of the
// whole path); any other path (several
// components, a link, an error other than absence) is resolved inside the
// root opened as an os.Root (by openRoot, os.OpenRoot but in tests), once
// per offer. The reasons, and the order in
// which they win, are those of checking inside an opened root: the root
// first, then the manifest, then each skill group in turn.
func checkOffer(of protocol.Offer, src Source, pm string, openRoot func(string) (*os.Root, error), ps *pathStats) (*manifest.Plugin, string) {
	if of.ID.PM != pm {
		return nil, fmt.Sprintf("offered by pm %s under another pm's name %q", pm, of.ID.PM)
	}
	if !filepath.IsAbs(of.Root) {
		return nil, fmt.Sprintf("root %q is not an absolute path", of.Root)
	}
	if filepath.Clean(of.Root) != of.Root {
		// The checks below name paths by joining them to the root, which
		// drops "x/.." on paper where the kernel resolves it through
		// whatever x is (a link, a file): they would check another
		// directory than the one opened.
		return nil, fmt.Sprintf("root %q is not a clean path (it should read %q)", of.Root, filepath.Clean(of.Root))
	}
	pr := rootProbe{dir: of.Root, openRoot: openRoot}
	defer pr.close()
	plugin, reason := validateManifest(of, src)
	if plugin == nil {
		if !pr.isDir() {
			return nil, pr.reason()
		}
		return nil, reason
	}
	for _, g := range plugin.Skills {
		if g.Path == "" {
			continue
		}
		c, ok := localPath(g.Path)
		if !ok {
			if !pr.isDir() {
				return nil, pr.reason()
			}
			return nil, fmt.Sprintf("source.path %q escapes the plugin root", g.Path)
		}
		if c == "." {
			continue // the root itself
		}
		if !strings.Contains(c, "/") && pr.root == nil {
			link, err := ps.lstat(filepath.Join(of.Root, c))
			switch {
			case err == nil && !link:
				pr.known, pr.dir0 = true, true
				continue
			case errors.Is(err, fs.ErrNotExist):
				continue // absent: nothing to escape with (the root is checked below)
			case errors.Is(err, syscall.ENOTDIR):
				pr.known, pr.dir0 = true, false
				return nil, pr.reason()
			}
		}
		root := pr.open()
		if root == nil {
			return nil, pr.reason()
		}
		if err := contained(root, g.Path); err != nil {
			return nil, err.Error()
		}
	}
	if !pr.isDir() {
		return nil, pr.reason()
	}
	return plugin, ""
}

// rootProbe learns whether an offer's root is a directory at the least
// cost: from what a look inside it showed, or by one stat, or by opening it
// as an os.Root when a path must be resolved inside it.
type rootProbe struct {
	dir         string
	known, dir0 bool // dir0: the root is a directory, once known
	root        *os.Root
	openRoot    func(string) (*os.Root, error)
}

func (p *rootProbe) isDir() bool {
	if !p.known {
		fi, err := os.Stat(p.dir)
		p.known, p.dir0 = true, err == nil && fi.IsDir()
	}
	return p.dir0
}

// open opens the root once (OpenRoot refuses what is not a directory).
func (p *rootProbe) open() *os.Root {
	if p.root == nil && (!p.known || p.dir0) {
		r, err := p.openRoot(p.dir)
		p.known, p.dir0, p.root = true, err == nil, r
	}
	return p.root
}

func (p *rootProbe) reason() string {
	return fmt.Sprintf("root %s is not an existing directory", p.dir)
}

func (p *rootProbe) close() {
	if p.root != nil {
		p.root.Close()
	}
}

// validateManifest decodes and validates the offer's manifest for the
// source's origin.
func validateManifest(of protocol.Offer, src Source) (*manifest.Plugin, string) {
	raw := of.Manifest
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	m, err := manifest.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Sprintf("manifest does not decode: %v", err)
	}
	plugin, problems := manifest.Validate(m, manifest.ValidateOptions{Origin: origin(src), DefaultName: of.ID.Name})
	for _, pr := range problems {
		if !pr.Warning {
			return nil, "manifest: " + pr.Error()
		}
	}
	if plugin == nil {
		return nil, "manifest is invalid"
	}
	return plugin, ""
}

// lstatWhole reports whether path is a symbolic link, by os.Lstat.
func lstatWhole(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	return fi.Mode()&fs.ModeSymlink != 0, nil
}
