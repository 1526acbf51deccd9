// Package pydist reads the files of an installed Python distribution's
// .dist-info directory that say where its code lives: RECORD,
// top_level.txt and entry_points.txt. The pypi PM finds a distribution's
// plugins with it, and symposium-pm validate checks a distribution with
// it, so that the two agree on which directories are plugin roots and on
// what makes a file unusable.
//
// Every file is read through sdk/pkgfile: a regular file inside the
// dist-info directory, reached by no link out of it, up to a size cap.
package pydist

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// The files of a .dist-info directory this package reads.
const (
	RecordFile      = "RECORD"
	TopLevelFile    = "top_level.txt"
	EntryPointsFile = "entry_points.txt"
)

// MaxRecord bounds a RECORD read: it lists every file of the distribution,
// tens of thousands in some. top_level.txt and entry_points.txt are read up
// to pkgfile.MaxManifest.
const MaxRecord = 16 << 20

// RecordEntry is one row of RECORD.
type RecordEntry struct {
	// Path is slash-separated, relative to the installation root.
	Path string
	// Hash is "sha256=<urlsafe-base64-nopad>" or "".
	Hash string
	// Size is -1 when not recorded.
	Size int64
}

// ParseRecord reads a RECORD file (CSV: path, hash, size). A row that is
// not CSV, or whose size is not a non-negative number, fails the whole
// file: a RECORD that does not parse whole is not used at all.
func ParseRecord(data []byte) ([]RecordEntry, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	var out []RecordEntry
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", RecordFile, err)
		}
		if len(rec) == 0 || rec[0] == "" {
			continue
		}
		e := RecordEntry{Path: rec[0], Size: -1}
		if len(rec) > 1 {
			e.Hash = rec[1]
		}
		if len(rec) > 2 && rec[2] != "" {
			n, err := strconv.ParseInt(rec[2], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: %s: bad size %q", RecordFile, rec[0], rec[2])
			}
			e.Size = n
		}
		out = append(out, e)
	}
}

// TopLevel returns, in order and once each, the top-level directories a
// RECORD installs inside site-packages: the first component of every path
// with more than one, except the *.dist-info, *.data and __pycache__
// directories, "../" entries (scripts and the like) and absolute paths.
func TopLevel(rec []RecordEntry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range rec {
		first, rest, ok := strings.Cut(path.Clean(e.Path), "/")
		if !ok || rest == "" || first == "" || first == ".." || first == "__pycache__" ||
			strings.HasSuffix(first, ".dist-info") || strings.HasSuffix(first, ".data") || seen[first] {
			continue
		}
		seen[first] = true
		out = append(out, first)
	}
	return out
}

// Tops is what ReadTopLevel found.
type Tops struct {
	// Names are the distribution's top-level import packages, each one
	// local path component, in order and once each.
	Names []string
	// Listed reports whether RECORD or top_level.txt could be read.
	Listed bool
	// RecordErr is why RECORD could not be read, when it exists and could
	// not; the names then come from top_level.txt.
	RecordErr error
	// TopLevelErr is why top_level.txt could not be read, when it was
	// needed, exists and could not.
	TopLevelErr error
}

// ReadTopLevel lists the top-level import packages of the distribution
// whose .dist-info directory is distInfo: those its RECORD installs
// (TopLevel), else, when RECORD is absent, unreadable, does not parse whole
// or installs none, the names in top_level.txt.
func ReadTopLevel(distInfo string) Tops {
	var t Tops
	data, err := pkgfile.ReadFile(distInfo, RecordFile, MaxRecord)
	switch {
	case err == nil:
		t.Listed = true
		if rec, err := ParseRecord(data); err == nil {
			for _, name := range TopLevel(rec) {
				if filepath.IsLocal(name) {
					t.Names = append(t.Names, name)
				}
			}
			if len(t.Names) > 0 {
				return t
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		t.RecordErr = err
	}
	data, err = pkgfile.ReadFile(distInfo, TopLevelFile, pkgfile.MaxManifest)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.TopLevelErr = err
		}
		return t
	}
	t.Listed = true
	seen := map[string]bool{}
	for _, name := range strings.Fields(string(data)) {
		if name != "." && filepath.IsLocal(name) && !strings.ContainsAny(name, `/\`) && !seen[name] {
			seen[name] = true
			t.Names = append(t.Names, name)
		}
	}
	return t
}
