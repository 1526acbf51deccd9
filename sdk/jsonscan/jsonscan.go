// Package jsonscan checks and walks JSON without decoding it. Valid
// reports what json.Valid reports, 2.5 to 3 times as fast; Members,
// RawMembers and Elements hand over an object's members or an array's
// elements as written, in place, without decoding them; DecodeString
// decodes one JSON string as json.Unmarshal does, and AppendString encodes
// one as json.Marshal does, both without encoding/json when the string is
// plain (PlainString says whether it is); MayBeField says whether
// encoding/json could take a member's name for a struct field's, for a
// reader that takes only exact names.
//
// Use it instead of encoding/json for large answers read once, where time
// and allocations count (the list_deps and active_plugins answers of the
// hook path): check the whole answer once with Valid, or take it from
// somewhere that already did, then walk it in place and decode only the
// members wanted. Each function states what it requires of its input:
// Valid, DecodeString and AppendString take anything, while Members,
// RawMembers and Elements require valid JSON, checked first by Valid,
// since they find where a value ends by skipping over it, not by checking
// it. For small documents, or for decoding a whole document into Go
// values, encoding/json is simpler and just as good.
package jsonscan

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Members calls f with the name and the value, as written, of each
// member of raw, in order, and reports whether raw is a JSON object. raw
// must be valid JSON, as Valid reports it: the members are found by
// skipping over values, not by checking them. A name that appears twice is
// passed twice; the caller keeps the last, as decoding into a map does.
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
	if body, ok := PlainString(raw); ok {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// PlainString reports whether raw is a JSON string written plainly:
// quoted, with no escape, quote or control character inside, in valid
// UTF-8 (no space around it). Such a string decodes to exactly what is
// written between its quotes, which PlainString returns, a slice of raw.
// Anything else, even a string json.Unmarshal decodes, gives false.
func PlainString(raw []byte) (body []byte, ok bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return nil, false
	}
	body = raw[1 : n-1]
	for _, b := range body {
		if b == '\\' || b == '"' || b < 0x20 {
			return nil, false
		}
	}
	if !utf8.Valid(body) {
		return nil, false
	}
	return body, true
}

// MayBeField reports whether encoding/json could decode the member whose
// name is written as name (quotes included, as RawMembers passes it) into
// a struct field named field (plain ASCII): when name is field in any
// case, or is written with an escape or a byte outside ASCII, which
// encoding/json decodes and folds (Unicode's folding included) before it
// matches. A caller that reads only the members it names exactly leaves
// a document with such a name to encoding/json.
func MayBeField(name []byte, field string) bool {
	if len(name) < 2 {
		return true
	}
	inner := name[1 : len(name)-1]
	for _, b := range inner {
		if b == '\\' || b >= utf8.RuneSelf {
			return true
		}
	}
	return strings.EqualFold(string(inner), field)
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

// stringEnd returns the index just past the JSON string starting at b[i]
// (len(b) when b ends inside it).
func stringEnd(b []byte, i int) int {
	if end := cutStringEnd(b, i); end >= 0 {
		return end
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
