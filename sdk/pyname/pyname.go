// Package pyname handles Python distribution names: PEP 503 normalization
// and PEP 508 validity.
package pyname

import "strings"

// Normalize returns the PEP 503 normalized form of name: lower case, with
// every run of "-", "_" and "." replaced by a single "-".
func Normalize(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	sep := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_' || c == '.':
			sep = true
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if sep {
			if b.Len() > 0 {
				b.WriteByte('-')
			}
			sep = false
		}
		b.WriteByte(c)
	}
	if sep && b.Len() > 0 {
		b.WriteByte('-')
	}
	return b.String()
}

// Valid reports whether name is a valid PEP 508 distribution name: ASCII
// letters and digits, with ".", "-" and "_" allowed inside.
func Valid(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if alnum {
			continue
		}
		if (c == '.' || c == '-' || c == '_') && i > 0 && i < len(name)-1 {
			continue
		}
		return false
	}
	return true
}

// WheelEscape returns name as it appears in wheel and dist-info file names:
// runs of "-", "_" and "." replaced by "_", lower case.
func WheelEscape(name string) string {
	return strings.ReplaceAll(Normalize(name), "-", "_")
}
