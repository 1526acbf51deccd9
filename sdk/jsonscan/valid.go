package jsonscan

// maxNesting is how deeply arrays and objects may nest in a document Valid
// accepts: encoding/json's own limit.
const maxNesting = 10000

// Valid reports whether data is one valid JSON value, optionally
// surrounded by whitespace: exactly what json.Valid reports, which
// FuzzValid holds it to (it does not check UTF-8, and refuses nesting
// deeper than encoding/json does). It reads each byte once, in plain
// loops rather than encoding/json's state machine of a call per byte,
// which makes it several times faster on the answers every hook checks
// before reading them in place.
func Valid(data []byte) bool {
	var stack []byte // the closer of each open container
	i := skipSpace(data, 0)
	for {
		// A value starts at data[i].
		if i >= len(data) {
			return false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if len(stack) >= maxNesting {
				return false
			}
			if i = skipSpace(data, i+1); i < len(data) && data[i] == closer {
				i++ // empty: the value ends here
				break
			}
			stack = append(stack, closer)
			if closer == '}' {
				i = member(data, i)
			}
			if i < 0 {
				return false
			}
			continue
		case c == '"':
			i = stringEndValid(data, i)
		case c == '-' || c >= '0' && c <= '9':
			i = numberEnd(data, i)
		case c == 't':
			i = literalEnd(data, i, "true")
		case c == 'f':
			i = literalEnd(data, i, "false")
		case c == 'n':
			i = literalEnd(data, i, "null")
		default:
			return false
		}
		if i < 0 {
			return false
		}
		// A value ended just before data[i]: close what it ends, up to
		// where the next value starts.
		for {
			i = skipSpace(data, i)
			if len(stack) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			closer := stack[len(stack)-1]
			if data[i] == closer {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return false
			}
			if i = skipSpace(data, i+1); closer == '}' {
				i = member(data, i)
			}
			if i < 0 {
				return false
			}
			break
		}
	}
}

// member reads an object member's name and colon starting at data[i] and
// returns where its value starts, or -1.
func member(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = stringEndValid(data, i); i < 0 {
		return -1
	}
	if i = skipSpace(data, i); i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
}

// stringEndValid returns the index just past the valid JSON string
// starting at data[i], or -1: no control character, and every escape one
// of JSON's.
func stringEndValid(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// numberEnd returns the index just past the valid JSON number starting at
// data[i], or -1.
func numberEnd(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digitsEnd(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if j := digitsEnd(data, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if j := digitsEnd(data, i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

// digitsEnd returns the index of the first byte at or after i that is not
// a decimal digit.
func digitsEnd(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// literalEnd returns the index just past lit at data[i], or -1.
func literalEnd(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
