package cargopm

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Limits on a .crate archive, as cargo's own (512 MiB unpacked).
const (
	maxCrateUnpacked = 512 << 20
	maxCrateEntries  = 1 << 16
)

// errHostile marks content refused as hostile or malformed; callers turn it
// into -32014.
var errHostile = errors.New("invalid package content")

func hostile(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errHostile}, args...)...)
}

// auditCrate reads a .crate (a gzipped tar whose every entry lies under
// prefix, "<name>-<version>/") and refuses what cargo's packaging never
// produces but a hostile registry could: entries outside prefix, absolute
// names or ".." components, symbolic and hard links, devices, FIFOs, the
// same name twice (also when only the case differs, which collides on
// case-insensitive file systems) and more than maxCrateUnpacked bytes or
// maxCrateEntries entries (a decompression bomb).
func auditCrate(r io.Reader, prefix string) error {
	return auditCrateLimit(r, prefix, maxCrateUnpacked)
}

// auditCrateLimit is auditCrate with limit as the unpacked-size cap.
func auditCrateLimit(r io.Reader, prefix string, limit int64) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return hostile("not a gzip stream: %v", err)
	}
	gz.Multistream(false)
	// One byte over the cap is how a bomb shows.
	lr := &io.LimitedReader{R: gz, N: limit + 1}
	tr := tar.NewReader(lr)
	seen := map[string]string{}
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if lr.N <= 0 {
			return hostile("unpacks to more than %d bytes", limit)
		}
		if err != nil {
			return hostile("unreadable archive after %d entries: %v", n, err)
		}
		if n >= maxCrateEntries {
			return hostile("more than %d entries", maxCrateEntries)
		}
		name := h.Name
		if strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':') {
			return hostile("entry %q has an absolute path", name)
		}
		for _, c := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
			if c == ".." {
				return hostile("entry %q has a \"..\" component", name)
			}
		}
		if !strings.HasPrefix(name, prefix) && strings.TrimSuffix(name, "/")+"/" != prefix {
			return hostile("entry %q is not under %q", name, prefix)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA, tar.TypeDir:
		case tar.TypeSymlink:
			return hostile("entry %q is a symbolic link (to %q)", name, h.Linkname)
		case tar.TypeLink:
			return hostile("entry %q is a hard link (to %q)", name, h.Linkname)
		case tar.TypeChar, tar.TypeBlock:
			return hostile("entry %q is a device file", name)
		case tar.TypeFifo:
			return hostile("entry %q is a FIFO", name)
		default:
			return hostile("entry %q has unsupported type %q", name, h.Typeflag)
		}
		if h.Size < 0 {
			return hostile("entry %q has a negative size", name)
		}
		total += h.Size
		if total > limit {
			return hostile("entries add up to more than %d bytes", limit)
		}
		clean := path.Clean(name)
		key := strings.ToLower(clean)
		if prev, ok := seen[key]; ok {
			if prev == clean {
				return hostile("entry %q appears twice", name)
			}
			return hostile("entries %q and %q differ only in case", prev, clean)
		}
		seen[key] = clean
	}
}

// registryArchive returns the .crate cargo keeps for a source it unpacked
// under $CARGO_HOME/registry/src/<index>/<name>-<version>, or "" when dir is
// not such a source.
func registryArchive(dir string) string {
	idx := filepath.Dir(dir)
	src := filepath.Dir(idx)
	if filepath.Base(src) != "src" || filepath.Base(filepath.Dir(src)) != "registry" {
		return ""
	}
	return filepath.Join(filepath.Dir(src), "cache", filepath.Base(idx), filepath.Base(dir)+".crate")
}

// checkSource refuses a crate source whose content is hostile: for a
// registry source, its .crate as audited by auditCrate (cargo unpacks some
// hostile archives, skipping or keeping what it should not); for every
// source, links or special files among the files the plugin is read from.
// A verdict is kept per archive (path, size, mtime) for the process.
func (p *PM) checkSource(id protocol.PackageID, lc localCrate) error {
	if a := registryArchive(lc.Dir); a != "" {
		if fi, err := os.Stat(a); err == nil {
			key := fmt.Sprintf("%s\x00%d\x00%d", a, fi.Size(), fi.ModTime().UnixNano())
			p.mu.Lock()
			verdict, ok := p.audited[key]
			p.mu.Unlock()
			if !ok {
				f, err := os.Open(a)
				if err != nil {
					return fmt.Errorf("auditing %s: %w", a, err)
				}
				verdict = auditCrate(f, filepath.Base(lc.Dir)+"/")
				f.Close()
				p.mu.Lock()
				if p.audited == nil {
					p.audited = map[string]error{}
				}
				p.audited[key] = verdict
				p.mu.Unlock()
			}
			if verdict != nil {
				return protocol.ErrInvalidContent(id, fmt.Sprintf("%s: %v", a, strings.TrimPrefix(verdict.Error(), errHostile.Error()+": ")))
			}
		}
	}
	if err := checkPluginFiles(lc.Dir); err != nil {
		return protocol.ErrInvalidContent(id, strings.TrimPrefix(err.Error(), errHostile.Error()+": "))
	}
	return nil
}

// checkPluginFiles refuses, in the crate at dir, a Cargo.toml or
// SYMPOSIUM.toml that is not a regular file or a link to one inside the
// crate, and anything under skills/ that is a link leaving the crate or a
// special file (device, FIFO, socket).
func checkPluginFiles(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range []string{"Cargo.toml", fileLayer} {
		fi, err := root.Lstat(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return hostile("%s: %v", filepath.Join(dir, f), err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// A link is followed only while it stays in the crate.
			if fi, err = root.Stat(f); errors.Is(err, fs.ErrNotExist) {
				continue // dangling: as if absent
			} else if err != nil {
				return hostile("%s is a link out of the crate", filepath.Join(dir, f))
			}
		}
		if !fi.Mode().IsRegular() {
			return hostile("%s is not a regular file (%v)", filepath.Join(dir, f), fi.Mode().Type())
		}
	}
	return walkRoot(root, dir, "skills")
}

// walkRoot checks rel and everything below it inside root, without
// following links: a link must resolve inside the root, special files are
// refused.
func walkRoot(root *os.Root, dir, rel string) error {
	fi, err := root.Lstat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return hostile("%s: %v", filepath.Join(dir, rel), err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if _, err := root.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return hostile("%s is a link out of the crate", filepath.Join(dir, rel))
		}
		return nil // a link inside the crate; its target is checked where it lies
	case fi.IsDir():
		f, err := root.Open(rel)
		if err != nil {
			return hostile("%s: %v", filepath.Join(dir, rel), err)
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return hostile("%s: %v", filepath.Join(dir, rel), err)
		}
		for _, n := range names {
			if err := walkRoot(root, dir, rel+"/"+n); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode().IsRegular():
		return nil
	}
	return hostile("%s is a special file (%v)", filepath.Join(dir, rel), fi.Mode().Type())
}
