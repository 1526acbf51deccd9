// Package distinfo parses METADATA, the core metadata (email-header
// format) of a distribution's .dist-info directory, the same in a wheel
// and in site-packages. The files that say where a distribution's code
// lives (RECORD, top_level.txt, entry_points.txt) are read by sdk/pydist,
// which symposium-pm validate shares.
package distinfo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
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
