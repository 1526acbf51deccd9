package tomlfile

import (
	"bufio"
	"bytes"
	"io"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// UnmarshalTables decodes a document made mostly of one array of tables
// ([[key]], key a bare key, as Cargo.lock, uv.lock and poetry.lock hold
// their packages) one table at a time: each [[key]] table, with the
// [key.sub] tables that follow it, is decoded alone into an E, and the rest
// of the document (what comes before the first table, and any other table)
// into rest, a pointer. Decoding the whole document at once keeps track of
// every key of every table until the end; one table at a time, only of
// one. What the elements hold does not share memory with data.
//
// It reports false when the document cannot be read that way: a piece that
// does not decode alone (a header line inside a multi-line string splits
// the document where it should not, and leaves a string open), a [key.sub]
// table after another table, key defined outside the [[key]] tables. The
// caller then decodes the whole document, which gives the same answer or
// the error to report (FuzzUnmarshalTables holds the two to the same
// result).
func UnmarshalTables[E any](data []byte, key string, rest any) ([]E, bool) {
	out, ok, _ := UnmarshalTablesFrom[E](bytes.NewReader(data), key, rest, bytes.Count(data, []byte("[["+key+"]]")))
	return out, ok
}

// ReadTables is UnmarshalTablesFrom for a document that can be read again:
// when it cannot be decoded a table at a time, it reads r again from the
// start and returns the whole document as whole (tables nil), for the
// caller to decode at once. An error is one of r's.
func ReadTables[E any](r io.ReadSeeker, key string, rest any) (tables []E, whole []byte, err error) {
	tables, ok, err := UnmarshalTablesFrom[E](r, key, rest, 0)
	if err != nil || ok {
		return tables, nil, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	whole, err = io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	return nil, whole, nil
}

// UnmarshalTablesFrom is UnmarshalTables reading the document from r, a
// line at a time: only one table and the rest of the document are in
// memory at once, never the whole document. sizeHint is the number of
// tables expected (0 if unknown). An error is one of r's; false without an
// error is a document to decode whole.
func UnmarshalTablesFrom[E any](r io.Reader, key string, rest any, sizeHint int) ([]E, bool, error) {
	out := make([]E, 0, sizeHint)
	ok, err := eachTable(r, key, rest, func(e E) { out = append(out, e) })
	if err != nil || !ok {
		return nil, ok, err
	}
	return out, true, nil
}

// ReadTablesFunc is ReadTables handing each [[key]] table to fn as soon as
// it is decoded, in the document's order, instead of collecting them: a
// caller that converts each table into what it keeps, and drops the rest,
// never holds every decoded table at once. rest is decoded at the end.
//
// When whole is non-nil, the document could not be read a table at a time
// (see UnmarshalTables): fn may already have received some of its tables,
// which the caller must discard, and whole is the document read again
// from the start, for the caller to decode at once. An error is one of r's.
func ReadTablesFunc[E any](r io.ReadSeeker, key string, rest any, fn func(E)) (whole []byte, err error) {
	ok, err := eachTable(r, key, rest, fn)
	if err != nil || ok {
		return nil, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// eachTable reads the document from r a line at a time and hands each
// [[key]] table, decoded alone into an E, to fn; the rest of the document
// is decoded into rest at the end. It reports false (fn having received
// some tables, perhaps) for a document to decode whole.
func eachTable[E any](r io.Reader, key string, rest any, fn func(E)) (bool, error) {
	if !bareKey(key) {
		return false, nil
	}
	// Each table is decoded into struct { Tables []E `toml:"<key>"` },
	// made once.
	wrapper := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Tables", Type: reflect.TypeFor[[]E](), Tag: reflect.StructTag(`toml:"` + key + `"`),
	}}))
	tables := wrapper.Elem().Field(0)
	var (
		others  []byte // the document without the [[key]] tables
		piece   []byte // the current [[key]] table, reused
		inTable bool
	)
	elem := []byte("[[" + key + "]]")
	sub := []byte("[" + key + ".")
	subArray := []byte("[[" + key + ".")
	flush := func() bool {
		if !inTable {
			return true
		}
		tables.Set(reflect.Zero(tables.Type()))
		if err := toml.Unmarshal(piece, wrapper.Interface()); err != nil || tables.Len() != 1 {
			return false
		}
		fn(tables.Index(0).Interface().(E))
		piece = piece[:0]
		return true
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, assembled
	for {
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, raw...)
			continue
		}
		if err != nil && err != io.EOF {
			return false, err
		}
		if long != nil {
			raw = append(long, raw...)
			long = nil
		}
		if len(raw) > 0 {
			line := bytes.TrimLeft(raw, " \t")
			if len(line) > 0 && line[0] == '[' {
				switch {
				case bytes.HasPrefix(line, elem) && headerEnds(line[len(elem):]):
					if !flush() {
						return false, nil
					}
					inTable = true
					raw = line
				case bytes.HasPrefix(line, sub) || bytes.HasPrefix(line, subArray):
					if !inTable {
						return false, nil
					}
				case foldsToHeader(line, key):
					// [[Package]] decodes into the same field as
					// [[package]]: left to the whole-document decoder.
					return false, nil
				default:
					if !flush() {
						return false, nil
					}
					inTable = false
				}
			}
			if inTable {
				piece = append(piece, raw...)
			} else {
				others = append(others, raw...)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if !flush() {
		return false, nil
	}
	// The key set outside its tables (key = [...], a dotted key.x = 1)
	// would be merged with them by the whole-document decoder, or refused.
	var keys map[string]any
	if err := toml.Unmarshal(others, &keys); err != nil {
		return false, nil
	}
	for k := range keys {
		if strings.EqualFold(k, key) {
			return false, nil
		}
	}
	if err := toml.Unmarshal(others, rest); err != nil {
		return false, nil
	}
	return true, nil
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

// bareKey reports whether key is a TOML bare key (A-Za-z0-9_-), the only
// kind UnmarshalTables splits on.
func bareKey(key string) bool {
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return key != ""
}
