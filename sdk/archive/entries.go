package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"strings"
)

// Type is what a listed entry (an [Entry]) is.
type Type int

const (
	// Regular is a regular file, written with mode 0644.
	Regular Type = iota
	// Executable is a regular file written with mode 0755.
	Executable
	// Dir is a directory.
	Dir
	// Symlink is a symbolic link whose content is its target. It is
	// refused unless [Options.Links] is [KeepLinksInside].
	Symlink
	// Placeholder is an entry that is checked and counted against
	// [Limits.MaxEntries] but never written nor claimed (a git submodule).
	Placeholder
)

func (t Type) String() string {
	switch t {
	case Regular:
		return "file"
	case Executable:
		return "executable file"
	case Dir:
		return "directory"
	case Symlink:
		return "symbolic link"
	case Placeholder:
		return "placeholder"
	}
	return fmt.Sprintf("entry type %d", int(t))
}

// LinkPolicy says what [ExtractEntries] does with symbolic links.
type LinkPolicy int

const (
	// RefuseLinks refuses a tree holding a symbolic link (the default,
	// and the only policy for tar and zip archives).
	RefuseLinks LinkPolicy = iota
	// KeepLinksInside creates symbolic links after every other entry and
	// keeps only those that resolve, through any chain of links, to a
	// regular file inside the root. The others (absolute, empty or
	// over-long targets, targets leaving the root, dangling links, links to
	// directories, loops) are removed and reported to [Options.OnDrop].
	KeepLinksInside
)

// Entry is one member of a listed tree, as a version control system's tree
// listing gives it.
type Entry struct {
	// Name is the entry's slash-separated path relative to the root. It
	// must be canonical (no empty or "." component, no trailing slash) and
	// its directory must have been listed, as a [Dir], before it.
	Name string
	// Type is what the entry is.
	Type Type
	// Size is the content's exact size in bytes (files and links): it is
	// checked against the caps before the content is read, and content of
	// another length refuses the tree.
	Size int64
	// Open opens the content of a file or link.
	Open func() (io.ReadCloser, error)
	// Reuse, when set on a file, is tried before Open: it may place the
	// file at name below root itself (as a hard link to an identical file
	// the caller wrote before) and report true; false (with nothing
	// placed) falls back to Open. It is trusted to place exactly the
	// entry's content, Size bytes, which count against the caps as
	// written bytes do.
	Reuse func(root *os.Root, name string) bool
}

// Result tells what [ExtractEntries] wrote.
type Result struct {
	// Entries is the number of entries counted against MaxEntries.
	Entries int
	// Files is the number of regular files; Reused of them were placed by
	// Entry.Reuse.
	Files, Reused int
	// Bytes is the size of every regular file; Written the part of it
	// written (not reused).
	Bytes, Written int64
	// Links is the number of symbolic links kept.
	Links int
}

// SourceError reports a failure of the entry source rather than of the
// tree's content or of writing: the listing failed, or a file's content
// could not be read.
type SourceError struct {
	// Entry is the entry's name, or "" for the listing.
	Entry string
	// Err is the source's error.
	Err error
}

// Error names the entry and the cause.
func (e *SourceError) Error() string {
	if e.Entry == "" {
		return "listing the tree: " + e.Err.Error()
	}
	return fmt.Sprintf("reading %q: %v", e.Entry, e.Err)
}

// Unwrap returns the source's error.
func (e *SourceError) Unwrap() error { return e.Err }

// link is a symbolic link kept for creation after every other entry.
type link struct{ rel, target string }

// ExtractEntries writes the listed tree entries into root under the same
// rules and caps as an archive's (see the package doc), plus these, as
// a listing can satisfy them: names are canonical, directories come
// before what they hold, and a directory or file the file system already
// holds (a name it takes for another) is refused as a collision. The ratio
// cap does not apply (a listing has no compressed size): MaxBytes caps the
// files' bytes and MaxFile each file. With a nil root it checks the names,
// types and declared sizes only, reading no content.
//
// Failures of the tree are [*Error]; failures of the source are
// [*SourceError]; failures writing are returned wrapped with the path
// written. On failure everything written is removed.
func ExtractEntries(ctx context.Context, entries iter.Seq2[Entry, error], root *os.Root, opts Options) (Result, error) {
	x := newExtraction(root, opts)
	x.strict = true
	res, err := x.listed(ctx, entries)
	if err != nil {
		x.cleanup()
		return Result{}, err
	}
	return res, nil
}

func (x *extraction) listed(ctx context.Context, entries iter.Seq2[Entry, error]) (Result, error) {
	var res Result
	var links []link
	budget := x.budget(-1)
	dirs := map[string]bool{".": true} // directories listed so far
	for e, err := range entries {
		if err != nil {
			if IsContent(err) {
				return res, err
			}
			return res, &SourceError{Err: err}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := x.count(); err != nil {
			return res, err
		}
		if err := x.checkName(e.Name); err != nil {
			return res, err
		}
		if e.Name == "." || path.Clean(e.Name) != e.Name {
			return res, x.fail(e.Name, "is not a canonical path (an empty or \".\" component, or a trailing slash)")
		}
		if d := path.Dir(e.Name); !dirs[d] {
			return res, x.fail(e.Name, "comes before its directory %q is listed", d)
		}
		k := kindFile
		switch e.Type {
		case Placeholder:
			continue
		case Dir:
			k = kindDir
		case Regular, Executable:
			if e.Size < 0 {
				return res, x.fail(e.Name, "has a negative size")
			}
			if x.lim.MaxFile > 0 && e.Size > x.lim.MaxFile {
				return res, x.fail(e.Name, "is %d bytes, over the cap of %d bytes for one file", e.Size, x.lim.MaxFile)
			}
			if res.Bytes+e.Size > budget {
				return res, x.fail(e.Name, "brings the files' size past %d bytes, over the cap", budget)
			}
		case Symlink:
			if x.opts.Links != KeepLinksInside {
				return res, x.fail(e.Name, "is a symbolic link; links are not allowed in packages")
			}
		default:
			return res, x.fail(e.Name, "has %s, which this package does not know", e.Type)
		}
		rel, err := x.place(e.Name, k)
		if err != nil {
			return res, err
		}
		if k == kindDir {
			dirs[e.Name] = true
		}
		if rel == "" {
			continue
		}
		switch e.Type {
		case Dir:
			if err := x.mkdirStrict(rel); err != nil {
				return res, err
			}
		case Symlink:
			if x.root == nil {
				continue
			}
			if e.Size > maxPathBytes || e.Size < 0 {
				x.drop(e.Name, fmt.Sprintf("its target is %d bytes, over %d", e.Size, maxPathBytes))
				continue
			}
			target, err := x.readLink(e)
			if err != nil {
				return res, err
			}
			links = append(links, link{rel, target})
		default:
			res.Files++
			res.Bytes += e.Size
			if x.root == nil {
				continue
			}
			if e.Reuse != nil {
				x.note(rel)
				if e.Reuse(x.root, rel) {
					res.Reused++
					continue
				}
			}
			if err := x.writeEntry(rel, e); err != nil {
				return res, err
			}
			res.Written += e.Size
		}
	}
	res.Entries = x.entries
	res.Links = x.links(links)
	return res, nil
}

// drop reports an entry left out.
func (x *extraction) drop(name, reason string) {
	if x.opts.OnDrop != nil {
		x.opts.OnDrop(name, reason)
	}
}

// mkdirStrict creates the listed directory rel, whose parent exists.
func (x *extraction) mkdirStrict(rel string) error {
	if x.root == nil {
		return nil
	}
	x.note(rel)
	if err := x.root.Mkdir(rel, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return x.collides(rel)
		}
		return fmt.Errorf("creating %s: %w", x.where(rel), err)
	}
	return nil
}

// readLink reads a link's target.
func (x *extraction) readLink(e Entry) (string, error) {
	if e.Open == nil {
		return "", &SourceError{Entry: e.Name, Err: errors.New("no content")}
	}
	rc, err := e.Open()
	if err != nil {
		return "", &SourceError{Entry: e.Name, Err: err}
	}
	defer rc.Close()
	b, err := io.ReadAll(&exactReader{r: rc, left: e.Size, x: x, name: e.Name})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// writeEntry writes the file e at rel from its content.
func (x *extraction) writeEntry(rel string, e Entry) error {
	if e.Open == nil {
		return &SourceError{Entry: e.Name, Err: errors.New("no content")}
	}
	rc, err := e.Open()
	if err != nil {
		return &SourceError{Entry: e.Name, Err: err}
	}
	defer rc.Close()
	return x.write(rel, &exactReader{r: rc, left: e.Size, x: x, name: e.Name}, e.Type == Executable)
}

// exactReader yields exactly left bytes of r: content of another length is
// the tree's fault (*Error); read failures are the source's (*SourceError).
type exactReader struct {
	r    io.Reader
	left int64
	x    *extraction
	name string
}

func (r *exactReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		var one [1]byte
		if n, _ := r.r.Read(one[:]); n > 0 {
			return 0, r.x.fail(r.name, "has more content than its declared size")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.left -= int64(n)
	switch {
	case err == io.EOF && r.left > 0:
		return n, r.x.fail(r.name, "has less content than its declared size")
	case err == io.EOF:
		return n, nil
	case err != nil:
		return n, &SourceError{Entry: r.name, Err: err}
	}
	return n, nil
}

// links creates the kept symbolic links, then removes every one that does
// not resolve, through any chain of links, to a regular file inside the
// root; it returns how many stay.
func (x *extraction) links(ls []link) int {
	made := ls[:0]
	for _, l := range ls {
		if l.target == "" || strings.ContainsRune(l.target, 0) || strings.HasPrefix(l.target, "/") || strings.Contains(l.target, `\`) || (len(l.target) > 1 && l.target[1] == ':') {
			x.drop(l.rel, fmt.Sprintf("its target %q leaves the root", l.target))
			continue
		}
		x.note(l.rel)
		if err := x.root.Symlink(l.target, l.rel); err != nil {
			x.drop(l.rel, fmt.Sprintf("it cannot be created: %v", err))
			continue
		}
		made = append(made, l)
	}
	for changed := true; changed; {
		changed = false
		kept := made[:0]
		for _, l := range made {
			fi, err := x.root.Stat(l.rel) // fails when resolution escapes the root
			if err == nil && fi.Mode().IsRegular() {
				kept = append(kept, l)
				continue
			}
			reason := fmt.Sprintf("its target %q does not resolve to a file inside the root", l.target)
			if err != nil {
				reason += ": " + err.Error()
			}
			x.drop(l.rel, reason)
			_ = x.root.Remove(l.rel)
			changed = true
		}
		made = kept
	}
	return len(made)
}
