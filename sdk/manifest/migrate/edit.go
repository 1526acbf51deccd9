// Package migrate rewrites plugin manifests and SKILL.md front matter
// written with keys Symposium has retired into the current schema. It edits
// the text in place, at the positions of the retired keys only, so comments,
// key order and formatting of everything else are kept byte for byte.
//
// Each rewrite follows the migration hint sdk/manifest gives for the retired
// key (docs/manifests.md §12). What has no mechanical translation is refused
// with a *RefusedError naming the line and the reason, and the file is left
// as it was.
package migrate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
)

// Change is one rewrite of a file, by whole lines.
type Change struct {
	// Line is the 1-based line in the original file where the change starts.
	Line int
	// Old is the original text of the lines changed (without the final
	// newline), and New what replaces it.
	Old, New string
}

// RefusedError reports a retired form that has no mechanical translation.
// The file it was found in must be left unchanged.
type RefusedError struct {
	// Line is the 1-based line of the retired form (0 when unknown).
	Line int
	// Reason says why, and what to write by hand.
	Reason string
	// Invalid is set when the file does not parse at all (so whether it
	// holds retired keys is unknown).
	Invalid bool
}

// Error returns "line N: reason".
func (e *RefusedError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return e.Reason
}

func refuse(src []byte, off int, format string, args ...any) *RefusedError {
	return &RefusedError{Line: lineOf(src, off), Reason: fmt.Sprintf(format, args...)}
}

// lineOf returns the 1-based line of byte offset off in src.
func lineOf(src []byte, off int) int {
	off = min(max(off, 0), len(src))
	return bytes.Count(src[:off], []byte("\n")) + 1
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// apply applies non-overlapping edits to src and describes them as changes
// by whole lines.
func apply(src []byte, edits []edit) ([]byte, []Change, error) {
	if len(edits) == 0 {
		return src, nil, nil
	}
	edits = slices.Clone(edits)
	slices.SortStableFunc(edits, func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.end - b.end
	})
	for i := 1; i < len(edits); i++ {
		if edits[i].start < edits[i-1].end {
			return nil, nil, fmt.Errorf("internal error: overlapping rewrites at byte %d", edits[i].start)
		}
	}
	var out bytes.Buffer
	pos := 0
	for _, e := range edits {
		out.Write(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(src[pos:])

	// Group the edits into spans of whole lines for the report.
	var changes []Change
	for i := 0; i < len(edits); {
		ls := lineStart(src, edits[i].start)
		le := max(lineEnd(src, edits[i].end), edits[i].end)
		j := i + 1
		for j < len(edits) && edits[j].start <= le {
			le = max(le, lineEnd(src, edits[j].end), edits[j].end)
			j++
		}
		var nb strings.Builder
		p := ls
		for _, e := range edits[i:j] {
			nb.Write(src[p:e.start])
			nb.WriteString(e.text)
			p = e.end
		}
		nb.Write(src[p:le])
		changes = append(changes, Change{
			Line: lineOf(src, ls),
			Old:  strings.TrimRight(string(src[ls:le]), "\r\n"),
			New:  strings.TrimRight(nb.String(), "\r\n"),
		})
		i = j
	}
	return out.Bytes(), changes, nil
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lineEnd returns the offset of the newline ending the line holding off
// (or len(src)). An offset just past a newline ends there.
func lineEnd(src []byte, off int) int {
	if off > 0 && src[off-1] == '\n' {
		return off - 1
	}
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i
}

// renameCrateCalls rewrites the retired predicate function crate(...) to
// depends-on(...) inside text (a predicate string as written in the file),
// returning edits relative to base. An identifier that merely ends in
// "crate" is left alone.
func renameCrateCalls(text string, base int) []edit {
	var edits []edit
	for i := 0; i+len(manifest.FuncRetiredCrate) <= len(text); {
		j := strings.Index(text[i:], manifest.FuncRetiredCrate)
		if j < 0 {
			break
		}
		at := i + j
		end := at + len(manifest.FuncRetiredCrate)
		i = end
		if at > 0 && isIdent(text[at-1]) {
			continue
		}
		k := end
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		if k < len(text) && text[k] == '(' {
			edits = append(edits, edit{base + at, base + end, manifest.FuncDependsOn})
		}
	}
	return edits
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
