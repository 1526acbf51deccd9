package jsonscan

import "encoding/json"

// HeadMembers calls f with each top-level member of head, the start of a
// JSON object that may be cut short (the head of a line too long to read
// whole), its name as written (quotes and escapes in) and its value as
// written, in order, until f returns false. It stops, without calling f,
// at the first member the text cuts, and at anything that is not an
// object's members: what it hands over is whole, but not checked (a
// caller validates the values it takes). A number or a literal is known
// whole only when something follows it.
func HeadMembers(head []byte, f func(name []byte, value json.RawMessage) bool) {
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return
	}
	i = skipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		end := cutStringEnd(head, i)
		if end < 0 {
			return
		}
		name := head[i:end]
		i = skipSpace(head, end)
		if i >= len(head) || head[i] != ':' {
			return
		}
		i = skipSpace(head, i+1)
		if end = cutValueEnd(head, i); end < 0 || !f(name, json.RawMessage(head[i:end])) {
			return
		}
		i = skipSpace(head, end)
		if i >= len(head) || head[i] != ',' {
			return // the end of the object, or not JSON
		}
		i = skipSpace(head, i+1)
	}
}

// cutStringEnd is stringEnd for text that may end inside the string: -1
// then.
func cutStringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// cutValueEnd is valueEnd for text that may end inside the value: -1 then,
// and when nothing follows a number or a literal. Strings, objects and
// arrays are skipped by their quotes and brackets, unchecked.
func cutValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return cutStringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := cutStringEnd(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
			if j == i {
				return -1 // not a value
			}
			return j
		}
	}
	return -1
}
