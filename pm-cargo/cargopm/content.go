package cargopm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// auditCrate reads a .crate (a gzipped tar whose every entry lies under
// the directory top, "<name>-<version>") of size bytes and refuses, under
// the SDK's archive rules, what cargo's packaging never produces but a
// hostile registry could: entries outside top, absolute names or ".."
// components, symbolic and hard links, devices, FIFOs, the same name twice
// (also when only the case differs, which collides on case-insensitive
// file systems) and decompression bombs. Nothing is written: cargo unpacks
// the crate itself. name names the archive in errors.
func auditCrate(ctx context.Context, r io.Reader, size int64, name, top string, lim archive.Limits) error {
	return archive.ExtractTarGz(ctx, r, size, nil, archive.Options{Name: name, Top: top, Limits: lim})
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
				// Opened as pkgfile does: a FIFO in the .crate's place
				// is refused at once (os.Open waited for a writer).
				f, size, err := pkgfile.OpenUserFile(a, archive.DefaultLimits.MaxBytes)
				if errors.Is(err, pkgfile.ErrNotRegular) || errors.Is(err, pkgfile.ErrTooLarge) {
					return protocol.ErrInvalidContent(id, err.Error())
				}
				if err != nil {
					return protocol.ErrResource("auditing "+id.String(), err)
				}
				verdict = auditCrate(context.Background(), f, size, a, filepath.Base(lc.Dir), archive.DefaultLimits)
				f.Close()
				if verdict != nil && !archive.IsContent(verdict) {
					// Reading the archive failed: the machine's fault, not
					// the crate's, and not a verdict to keep.
					return protocol.ErrResource("auditing "+id.String(), verdict)
				}
				p.mu.Lock()
				if p.audited == nil {
					p.audited = map[string]error{}
				}
				p.audited[key] = verdict
				p.mu.Unlock()
			}
			if verdict != nil {
				return protocol.ErrInvalidContent(id, verdict.Error())
			}
		}
	}
	if err := checkPluginFiles(lc.Dir); err != nil {
		return protocol.ErrInvalidContent(id, err.Error())
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
			return fmt.Errorf("%s: %v", filepath.Join(dir, f), err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// A link is followed only while it stays in the crate.
			if fi, err = root.Stat(f); errors.Is(err, fs.ErrNotExist) {
				continue // dangling: as if absent
			} else if err != nil {
				return fmt.Errorf("%s is a link out of the crate", filepath.Join(dir, f))
			}
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%v)", filepath.Join(dir, f), fi.Mode().Type())
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
		return fmt.Errorf("%s: %v", filepath.Join(dir, rel), err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if _, err := root.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is a link out of the crate", filepath.Join(dir, rel))
		}
		return nil // a link inside the crate; its target is checked where it lies
	case fi.IsDir():
		f, err := root.Open(rel)
		if err != nil {
			return fmt.Errorf("%s: %v", filepath.Join(dir, rel), err)
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", filepath.Join(dir, rel), err)
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
	return fmt.Errorf("%s is a special file (%v)", filepath.Join(dir, rel), fi.Mode().Type())
}
