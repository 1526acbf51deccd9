package tomlfile

import (
	"bytes"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// UnmarshalTables decodes a document made mostly of one array of tables
// ([[key]], as Cargo.lock, uv.lock and poetry.lock hold their packages)
// one table at a time: each [[key]] table, with the [key.sub] tables that
// follow it, is decoded alone into an E, and the rest of the document (what
// comes before the first table, and any other table) into rest, a pointer.
// Decoding the whole document at once keeps track of every key of every
// table until the end; one table at a time, only of one.
//
// It reports false when the document cannot be read that way: a piece that
// does not decode alone (a header line inside a multi-line string splits
// the document where it should not, and leaves a string open), a [key.sub]
// table after another table, key defined outside the [[key]] tables.
// Each element is decoded from its own bytes: what E holds does not share
// memory with data. The
// caller then decodes the whole document, which gives the same answer or
// the error to report (FuzzUnmarshalTables holds the two to the same
// result).
func UnmarshalTables[E any](data []byte, key string, rest any) ([]E, bool) {
	var (
		out     []E
		others  []byte // the document without the [[key]] tables
		start   = -1   // the offset of the current [[key]] table, or -1
		inTable bool
	)
	elem := []byte("[[" + key + "]]")
	out = make([]E, 0, bytes.Count(data, elem)) // not grown table by table
	sub := []byte("[" + key + ".")
	subArray := []byte("[[" + key + ".")
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		var one map[string][]E
		if err := toml.Unmarshal(data[start:end], &one); err != nil || len(one) != 1 || len(one[key]) != 1 {
			return false
		}
		out = append(out, one[key][0])
		start = -1
		return true
	}
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off + 1
		}
		line := bytes.TrimLeft(data[off:end], " \t")
		if len(line) > 0 && line[0] == '[' {
			switch {
			case bytes.HasPrefix(line, elem) && headerEnds(line[len(elem):]):
				if !flush(off) {
					return nil, false
				}
				start, inTable = end-len(line), true
			case bytes.HasPrefix(line, sub) || bytes.HasPrefix(line, subArray):
				if !inTable {
					return nil, false
				}
			case foldsToHeader(line, key):
				// [[Package]] decodes into the same field as [[package]]:
				// left to the whole-document decoder.
				return nil, false
			default:
				if !flush(off) {
					return nil, false
				}
				inTable = false
			}
		}
		if !inTable {
			others = append(others, data[off:end]...)
		}
		off = end
	}
	if !flush(len(data)) {
		return nil, false
	}
	// The key set outside its tables (key = [...], a dotted key.x = 1)
	// would be merged with them by the whole-document decoder, or refused.
	var keys map[string]any
	if err := toml.Unmarshal(others, &keys); err != nil {
		return nil, false
	}
	for k := range keys {
		if strings.EqualFold(k, key) {
			return nil, false
		}
	}
	if err := toml.Unmarshal(others, rest); err != nil {
		return nil, false
	}
	return out, true
}

// headerEnds reports whether what follows a table header on its line is
// only white space and an optional comment.
func headerEnds(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '#' || (rest[0] == '\r' && len(rest) > 1 && rest[1] == '\n')
}

// foldsToHeader reports whether a header line names key (or a table under
// it) in another case.
func foldsToHeader(line []byte, key string) bool {
	name := bytes.TrimLeft(line, "[ \t")
	return len(name) >= len(key) && bytes.EqualFold(name[:len(key)], []byte(key))
}
