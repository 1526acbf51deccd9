// Package distinfo parses the files of a distribution's .dist-info
// directory: METADATA (core metadata, email-header format), entry_points.txt
// (INI) and RECORD (CSV), the same in a wheel and in site-packages.
package distinfo

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/pyname"
)

// Metadata is the core metadata this module uses.
type Metadata struct {
	// Name is the distribution name as written; Version as written.
	Name    string
	Version string
	// Summary is the one-line description ("" when absent or UNKNOWN).
	Summary        string
	RequiresPython string
	RequiresDist   []string
}

// Normalized returns the PEP 503 normalized name.
func (m Metadata) Normalized() string { return pyname.Normalize(m.Name) }

// maxMetadataLine bounds one line of a METADATA header.
const maxMetadataLine = 1 << 20

// ParseMetadata reads the header block of a METADATA or PKG-INFO file.
// Header names are case-insensitive; continuation lines are folded; the
// first of a repeated single-use field wins; the body is ignored.
func ParseMetadata(data []byte) (Metadata, error) {
	var m Metadata
	var key, val string
	flush := func() {
		if key == "" {
			return
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(key) {
		case "name":
			if m.Name == "" {
				m.Name = val
			}
		case "version":
			if m.Version == "" {
				m.Version = val
			}
		case "summary":
			if m.Summary == "" && val != "UNKNOWN" {
				m.Summary = val
			}
		case "requires-python":
			if m.RequiresPython == "" {
				m.RequiresPython = val
			}
		case "requires-dist":
			m.RequiresDist = append(m.RequiresDist, val)
		}
		key, val = "", ""
	}
	// Lines are cut from data in place: no scanner buffer per file (this
	// runs once per installed distribution).
	var lineErr error
	for rest := data; len(rest) > 0; {
		raw := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(raw) >= maxMetadataLine {
			lineErr = bufio.ErrTooLong
			break
		}
		line := strings.TrimRight(string(raw), "\r")
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			if key != "" {
				val += " " + strings.TrimSpace(line)
			}
			continue
		}
		flush()
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(k), v
	}
	flush()
	if lineErr != nil {
		return m, fmt.Errorf("METADATA: %w", lineErr)
	}
	m.Name = strings.ToValidUTF8(m.Name, "\uFFFD")
	m.Summary = strings.ToValidUTF8(m.Summary, "\uFFFD")
	if m.Name == "" {
		return m, errors.New("METADATA: no Name field")
	}
	if !pyname.Valid(m.Name) {
		return m, fmt.Errorf("METADATA: bad Name %q", m.Name)
	}
	if m.Version == "" {
		return m, errors.New("METADATA: no Version field")
	}
	return m, nil
}

// EntryPoint is one entry of entry_points.txt.
type EntryPoint struct {
	Name  string
	Value string
}

// Module returns the module part of the entry point's value ("pkg.sub" of
// "pkg.sub:attr [extra]").
func (e EntryPoint) Module() string {
	v, _, _ := strings.Cut(e.Value, "[")
	mod, _, _ := strings.Cut(v, ":")
	return strings.TrimSpace(mod)
}

// EntryPointsError is a line of entry_points.txt that does not parse.
type EntryPointsError struct {
	// Line is the 1-based line.
	Line int
	// Msg says what is wrong with it.
	Msg string
}

// Error returns "entry_points.txt:LINE: MSG".
func (e *EntryPointsError) Error() string {
	return fmt.Sprintf("entry_points.txt:%d: %s", e.Line, e.Msg)
}

// ParseEntryPoints reads entry_points.txt: INI sections naming groups,
// "name = value" lines, "#" and ";" comments. A line that does not parse
// is an *EntryPointsError.
func ParseEntryPoints(data []byte) (map[string][]EntryPoint, error) {
	groups := map[string][]EntryPoint{}
	group := ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, &EntryPointsError{Line: i + 1, Msg: "unclosed section header"}
			}
			group = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, &EntryPointsError{Line: i + 1, Msg: "expected name = value"}
		}
		if group == "" {
			return nil, &EntryPointsError{Line: i + 1, Msg: "entry outside a [group]"}
		}
		groups[group] = append(groups[group], EntryPoint{Name: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	return groups, nil
}

// RecordEntry is one row of RECORD.
type RecordEntry struct {
	// Path is slash-separated, relative to the installation root.
	Path string
	// Hash is "sha256=<urlsafe-base64-nopad>" or "".
	Hash string
	// Size is -1 when not recorded.
	Size int64
}

// ParseRecord reads a RECORD file.
func ParseRecord(data []byte) ([]RecordEntry, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	var out []RecordEntry
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("RECORD: %w", err)
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
				return nil, fmt.Errorf("RECORD: %s: bad size %q", rec[0], rec[2])
			}
			e.Size = n
		}
		out = append(out, e)
	}
}

// TopLevel returns the top-level directories a RECORD installs outside the
// dist-info and data directories ("../" entries, such as scripts, and
// absolute paths skipped).
func TopLevel(rec []RecordEntry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range rec {
		p := path.Clean(e.Path)
		first, rest, ok := strings.Cut(p, "/")
		if !ok || rest == "" || first == "" || first == ".." || strings.HasSuffix(first, ".dist-info") ||
			strings.HasSuffix(first, ".data") || first == "__pycache__" || seen[first] {
			continue
		}
		seen[first] = true
		out = append(out, first)
	}
	return out
}
