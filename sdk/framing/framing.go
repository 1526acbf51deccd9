// Package framing reads newline-delimited JSON-RPC messages with a bound on
// their size, and finds the routing part (id, method) of a message without
// trusting it to be complete. Both ends of the PM protocol use it: the PM
// harness in pmserver and the process manager in host. It also checks and
// walks JSON without decoding it, for the large answers of the hook path:
// Valid (json.Valid's answer, faster), then, on valid JSON, Members,
// RawMembers and Elements (an object's members or an array's elements as
// written) and DecodeString; AppendString encodes a string as json.Marshal
// does.
package framing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"unicode/utf8"
)

// DefaultMaxMessage is the default bound on one message: 64 MiB.
const DefaultMaxMessage = 64 << 20

// headSize is how much of an oversize message is kept for diagnostics.
const headSize = 512

// TooLongError reports a line longer than the reader's bound. The line was
// consumed and discarded; Head holds its first bytes.
type TooLongError struct {
	Size int64 // bytes in the line, without the newline
	Max  int
	Head []byte
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Max)
}

// ID returns the JSON-RPC id found in the head of the message, or nil.
func (e *TooLongError) ID() json.RawMessage { return FindID(e.Head) }

// Reader reads newline-terminated messages of at most Max bytes.
type Reader struct {
	br           *bufio.Reader
	max          int
	unterminated bool
}

// Unterminated reports whether the last line Next returned was cut short by
// the end of input rather than ended by a newline: from a peer that died in
// the middle of a message, or a final request typed without a newline.
func (r *Reader) Unterminated() bool { return r.unterminated }

// NewReader returns a Reader on r that refuses lines longer than max bytes
// (DefaultMaxMessage when max <= 0).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line, without its line terminator, in a
// fresh slice. A final line without a newline is returned before io.EOF. A
// line longer than the bound is discarded and reported as *TooLongError;
// reading may continue after it.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

func (r *Reader) line() ([]byte, error) {
	r.unterminated = false
	var buf []byte
	var size int64
	var head []byte
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			chunk = chunk[:len(chunk)-1]
			err = nil
			size += int64(len(chunk))
			if !tooLong && size > int64(r.max) {
				tooLong, head = true, keepHead(buf, chunk)
			}
			if tooLong {
				return nil, &TooLongError{Size: size, Max: r.max, Head: head}
			}
			return append(buf, chunk...), nil
		}
		size += int64(len(chunk))
		if !tooLong && size > int64(r.max) {
			tooLong, head = true, keepHead(buf, chunk)
			buf = nil
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if tooLong {
				return nil, &TooLongError{Size: size, Max: r.max, Head: head}
			}
			if len(buf) > 0 {
				r.unterminated = true
				return buf, nil
			}
			return nil, io.EOF
		case err != nil:
			return nil, err
		}
	}
}

func keepHead(buf, chunk []byte) []byte {
	h := make([]byte, 0, headSize)
	h = append(h, buf[:min(len(buf), headSize)]...)
	if n := headSize - len(h); n > 0 {
		h = append(h, chunk[:min(len(chunk), n)]...)
	}
	return h
}

var idPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|null)`)
})

// FindID returns the raw JSON-RPC id in the first "id" member of msg's
// prefix, or nil when there is none. It does not parse the whole message, so
// it works on truncated messages.
func FindID(msg []byte) json.RawMessage {
	m := idPattern().FindSubmatch(msg[:min(len(msg), headSize)])
	if m == nil {
		return nil
	}
	return json.RawMessage(m[1])
}

// Envelope is the part of a JSON-RPC message used for routing.
type Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
}

// IsCall reports whether e is a well-formed request that expects a response
// carrying its id: version "2.0", a method, and a string or number id.
func (e Envelope) IsCall() bool {
	if e.JSONRPC != "2.0" || e.Method == "" || len(e.ID) == 0 {
		return false
	}
	switch e.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// Envelopes decodes the routing part of msg, a message or a batch. It
// returns nil for a message that is not valid JSON.
func Envelopes(msg []byte) []Envelope {
	trimmed := bytes.TrimLeft(msg, " \t")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []Envelope
		if json.Unmarshal(trimmed, &batch) != nil {
			return nil
		}
		return batch
	}
	var e Envelope
	if json.Unmarshal(trimmed, &e) != nil {
		return nil
	}
	return []Envelope{e}
}

// IDKey returns a map key for a raw id; null and absent ids give "".
func IDKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, id) != nil {
		return string(id)
	}
	return buf.String()
}

// Members calls f with the name and the value, as written, of each
// member of raw, in order, and reports whether raw is a JSON object. raw
// must be valid JSON: the members are found by skipping over values, not by
// checking them. A name that appears twice is passed twice; the caller
// keeps the last, as decoding into a map does.
func Members(raw []byte, f func(name string, value json.RawMessage)) bool {
	ok := true
	return RawMembers(raw, func(name []byte, value json.RawMessage) {
		if !ok {
			return // a name that did not decode ends the walk
		}
		var s string
		if s, ok = DecodeString(name); ok {
			f(s, value)
		}
	}) && ok
}

// RawMembers is Members with each name as written, its quotes included and
// its escapes left in: what a caller that only looks for names it knows,
// written plainly, compares without decoding (and without allocating) each
// one. A name with an escape never equals such a name as written.
func RawMembers(raw []byte, f func(name []byte, value json.RawMessage)) bool {
	i, empty, ok := open(raw, '{', '}')
	if !ok || empty {
		return ok
	}
	for i < len(raw) && raw[i] == '"' {
		end := stringEnd(raw, i)
		name := raw[i:end]
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		end = valueEnd(raw, i)
		if end <= i {
			return false
		}
		f(name, json.RawMessage(raw[i:end]))
		var more bool
		if i, more, ok = next(raw, end, '}'); !more {
			return ok
		}
	}
	return false
}

// Elements calls f with each element of raw, as written, in order, and
// reports whether raw is a JSON array. As for Members, raw must be valid
// JSON. f returning false stops the walk, and Elements then reports false.
func Elements(raw []byte, f func(value json.RawMessage) bool) bool {
	i, empty, ok := open(raw, '[', ']')
	if !ok || empty {
		return ok
	}
	for i < len(raw) {
		end := valueEnd(raw, i)
		if end <= i || !f(json.RawMessage(raw[i:end])) {
			return false
		}
		var more bool
		if i, more, ok = next(raw, end, ']'); !more {
			return ok
		}
	}
	return false
}

// open reads the start of the object or array that opener begins in b
// (ok): the index of its first member or element, or that closer follows
// at once (empty).
func open(b []byte, opener, closer byte) (i int, empty, ok bool) {
	i = skipSpace(b, 0)
	if i >= len(b) || b[i] != opener {
		return i, false, false
	}
	i = skipSpace(b, i+1)
	return i, i < len(b) && b[i] == closer, true
}

// next reads what follows a member or an element that ends at end, in an
// object or array that closer ends: the index of the next one when a comma
// follows (more), or whether closer follows (ok), the container then read
// to its end.
func next(b []byte, end int, closer byte) (i int, more, ok bool) {
	i = skipSpace(b, end)
	switch {
	case i >= len(b):
		return i, false, false
	case b[i] == closer:
		return i, false, true
	case b[i] == ',':
		return skipSpace(b, i+1), true, true
	}
	return i, false, false
}

// DecodeString decodes the JSON value raw as json.Unmarshal into a string
// does, and reports whether that succeeded (a JSON null, which leaves the
// string alone, gives "" and true, as it does). A string written without
// escapes or control characters, in valid UTF-8, is taken as written,
// without encoding/json's validation pass and allocations: nearly every
// member name, package name and version is such a string.
func DecodeString(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		body, plain := raw[1:n-1], true
		for _, b := range body {
			if b == '\\' || b == '"' || b < 0x20 {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(body) {
			return string(body), true
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// AppendString appends s as json.Marshal encodes a string, byte for byte:
// quoted, with '"' and '\\' escaped by a backslash, when it holds only
// printable ASCII besides (what names, versions, paths and messages
// almost always are); anything else through encoding/json itself, so every
// other escape (HTML characters, control characters, U+2028, invalid
// UTF-8) stays exactly its. It is DecodeString's inverse.
func AppendString[S ~string | ~[]byte](b []byte, s S) []byte {
	n := len(b)
	b = append(b, '"')
	last := 0 // s[last:i] is yet to be appended
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(append(b, s[last:i]...), '\\', c)
			last = i + 1
		case c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&':
			q, _ := json.Marshal(string(s)) // a string always encodes
			return append(b[:n], q...)
		}
	}
	b = append(b, s[last:]...)
	return append(b, '"')
}

// skipSpace returns the index of the first byte at or after i in b that is
// not JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the valid JSON value starting at
// b[i], or i when none starts there.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return i
	}
	j := i // a number, true, false or null: up to the next delimiter
	for j < len(b) {
		switch b[j] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			return j
		}
		j++
	}
	return j
}
