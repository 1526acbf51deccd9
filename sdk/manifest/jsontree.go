package manifest

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jsonTreeMaxDepth is how deeply arrays and objects may nest before the fast
// parser gives up (encoding/json, which then decides, allows 10,000). Wire
// manifests nest a handful of levels; the bound keeps the recursion short.
const jsonTreeMaxDepth = 512

// parseJSONTree is DecodeJSON's fast path: a strict RFC 8259 parser that
// turns one JSON document straight into the normalized tree d.manifest reads,
// the tree that json.Decoder with UseNumber, a check that only whitespace
// follows the value, and normalizeJSON give for the same input:
// map[string]any (a member whose value is null is absent; of duplicate
// names the last wins), []any (never nil, nulls in it kept as nil), string,
// bool, and numbers as jsonNumber converts their text. The top-level value
// may be of any kind; null is (nil, true).
//
// It reports ok false, and DecodeJSON then runs encoding/json so that every
// error and every edge case stays as encoding/json makes it, on:
//   - any syntax error, including a byte order mark, an empty document and
//     anything but JSON whitespace after the value;
//   - invalid UTF-8 inside a string (encoding/json turns it into U+FFFD),
//     including the UTF-8 encoding of a surrogate;
//   - a \u escape of a UTF-16 surrogate, unless it is a high half followed
//     at once by the \u escape of a low half (encoding/json turns each stray
//     half into U+FFFD);
//   - arrays and objects nested deeper than jsonTreeMaxDepth.
//
// Strings without escapes share one copy of the document (made once), so
// the tree keeps that copy alive as long as any of them.
func parseJSONTree(data []byte) (v any, ok bool) {
	p := jsonParser{data: data, text: string(data)}
	p.skipSpace()
	v, ok = p.value()
	if !ok {
		return nil, false
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, false
	}
	return v, true
}

// jsonParser is the state of one parseJSONTree call.
type jsonParser struct {
	data  []byte
	text  string // string(data)
	pos   int
	depth int
	buf   []byte // the unescaped bytes of the string being parsed
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses the value at p.pos (after any whitespace).
func (p *jsonParser) value() (any, bool) {
	if p.pos >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		return s, true
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

// object parses an object, p.pos being at its '{'.
func (p *jsonParser) object() (any, bool) {
	if p.depth++; p.depth > jsonTreeMaxDepth {
		return nil, false
	}
	p.pos++
	p.skipSpace()
	t := map[string]any{}
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return nil, false
			}
			name, ok := p.str()
			if !ok {
				return nil, false
			}
			p.skipSpace()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return nil, false
			}
			p.pos++
			p.skipSpace()
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			if v == nil {
				delete(t, name) // null: absent, even after an earlier value
			} else {
				t[name] = v
			}
			p.skipSpace()
			if p.pos >= len(p.data) {
				return nil, false
			}
			c := p.data[p.pos]
			p.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				return nil, false
			}
			p.skipSpace()
		}
	}
	p.depth--
	return t, true
}

// array parses an array, p.pos being at its '['.
func (p *jsonParser) array() (any, bool) {
	if p.depth++; p.depth > jsonTreeMaxDepth {
		return nil, false
	}
	p.pos++
	p.skipSpace()
	out := []any{} // never nil, as encoding/json makes it
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for {
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			out = append(out, v)
			p.skipSpace()
			if p.pos >= len(p.data) {
				return nil, false
			}
			c := p.data[p.pos]
			p.pos++
			if c == ']' {
				break
			}
			if c != ',' {
				return nil, false
			}
			p.skipSpace()
		}
	}
	p.depth--
	return out, true
}

// number parses a number, p.pos being at its first byte, and converts its
// text as normalize converts a json.Number.
func (p *jsonParser) number() (any, bool) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		return nil, false
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return nil, false
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return nil, false
		}
	}
	return jsonNumber(p.text[start:p.pos]), true
}

// digits skips the decimal digits at p.pos and returns how many there were.
func (p *jsonParser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// str parses a string, p.pos being at its opening quote. A string without
// escapes is a slice of p.text; one with escapes is built in p.buf.
func (p *jsonParser) str() (string, bool) {
	p.pos++
	start := p.pos
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return p.text[start : p.pos-1], true
		case c == '\\':
			p.buf = append(p.buf[:0], p.data[start:p.pos]...)
			return p.escapedStr()
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			p.pos++
		default:
			if !p.utf8Rune() {
				return "", false
			}
		}
	}
	return "", false
}

// utf8Rune skips the multi-byte UTF-8 sequence at p.pos, reporting false
// when it is not a valid one (surrogates included).
func (p *jsonParser) utf8Rune() bool {
	r, size := utf8.DecodeRune(p.data[p.pos:])
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	p.pos += size
	return true
}

// escapedStr goes on with a string at its first backslash, its text so far
// in p.buf.
func (p *jsonParser) escapedStr() (string, bool) {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(p.buf), true
		case c == '\\':
			if !p.escape() {
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			p.buf = append(p.buf, c)
			p.pos++
		default:
			start := p.pos
			if !p.utf8Rune() {
				return "", false
			}
			p.buf = append(p.buf, p.data[start:p.pos]...)
		}
	}
	return "", false
}

// escape appends to p.buf what the escape at p.pos (its backslash) stands
// for.
func (p *jsonParser) escape() bool {
	if p.pos+1 >= len(p.data) {
		return false
	}
	var c byte
	switch p.data[p.pos+1] {
	case '"':
		c = '"'
	case '\\':
		c = '\\'
	case '/':
		c = '/'
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return false
		}
		if utf16.IsSurrogate(r) {
			// Only a high half followed at once by an escaped low half.
			lo, ok := p.hex4()
			if !ok {
				return false
			}
			if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
				return false
			}
		}
		p.buf = utf8.AppendRune(p.buf, r)
		return true
	default:
		return false
	}
	p.buf = append(p.buf, c)
	p.pos += 2
	return true
}

// hex4 reads a \uXXXX escape at p.pos and returns its code unit.
func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 6 || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos+2 : p.pos+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.pos += 6
	return r, true
}
