package manifest

import (
	"cmp"
	"slices"
	"strings"
)

// scanTOMLLines maps field paths (as in Problem.Field: `hooks[1].command`,
// `subcommand.greet.description`) to the 1-based line where each key, table
// header or array element starts. The TOML decoder does not report key
// positions, so this is a small scanner over a document the real decoder has
// already accepted; on anything it does not understand it stops and returns
// what it has.
func scanTOMLLines(data []byte) map[string]int {
	s := &lineScanner{src: data, line: 1, lines: map[string]int{}, arrays: map[string]int{}}
	s.document()
	return s.lines
}

type lineScanner struct {
	src    []byte
	pos    int
	line   int
	lines  map[string]int
	arrays map[string]int // array-of-tables path → number of elements seen
	cur    string
	bad    bool
}

func (s *lineScanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *lineScanner) advance() {
	if s.pos < len(s.src) {
		if s.src[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
}

func (s *lineScanner) record(path string) {
	if _, ok := s.lines[path]; !ok && path != "" {
		s.lines[path] = s.line
	}
}

// skipSpace skips blanks, and also newlines and comments when nl is set.
func (s *lineScanner) skipSpace(nl bool) {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t' || c == '\r':
			s.advance()
		case nl && c == '\n':
			s.advance()
		case nl && c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.advance()
			}
		default:
			return
		}
	}
}

func (s *lineScanner) document() {
	for !s.bad {
		s.skipSpace(true)
		if s.pos >= len(s.src) {
			return
		}
		start := s.pos
		if s.peek(0) == '[' {
			s.header()
		} else {
			s.keyValue(s.cur)
		}
		if s.pos == start {
			return // no progress: give up
		}
	}
}

func (s *lineScanner) header() {
	aot := s.peek(1) == '['
	s.advance()
	if aot {
		s.advance()
	}
	s.skipSpace(false)
	segs := s.key()
	if s.bad || len(segs) == 0 {
		s.bad = true
		return
	}
	s.skipSpace(false)
	for range 1 + boolInt(aot) {
		if s.peek(0) != ']' {
			s.bad = true
			return
		}
		s.advance()
	}
	if aot {
		parent := s.resolve("", segs[:len(segs)-1])
		key := joinPath(parent, segs[len(segs)-1])
		n := s.arrays[key]
		s.arrays[key] = n + 1
		s.record(key)
		s.cur = indexPath(key, n)
	} else {
		s.cur = s.resolve("", segs)
	}
	s.record(s.cur)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// resolve joins segments onto base, entering the last element of any array
// of tables on the way.
func (s *lineScanner) resolve(base string, segs []string) string {
	p := base
	for _, seg := range segs {
		p = joinPath(p, seg)
		if n, ok := s.arrays[p]; ok && n > 0 {
			p = indexPath(p, n-1)
		}
	}
	return p
}

func (s *lineScanner) keyValue(base string) {
	segs := s.key()
	if s.bad || len(segs) == 0 {
		s.bad = true
		return
	}
	p := base
	for _, seg := range segs {
		p = joinPath(p, seg)
		s.record(p)
	}
	s.skipSpace(false)
	if s.peek(0) != '=' {
		s.bad = true
		return
	}
	s.advance()
	s.skipSpace(false)
	s.value(p)
}

// key reads a dotted key.
func (s *lineScanner) key() []string {
	var segs []string
	for {
		s.skipSpace(false)
		var seg string
		switch c := s.peek(0); {
		case c == '"' || c == '\'':
			seg = s.quoted(c)
		case isBare(c):
			start := s.pos
			for isBare(s.peek(0)) {
				s.advance()
			}
			seg = string(s.src[start:s.pos])
		default:
			s.bad = true
			return nil
		}
		segs = append(segs, seg)
		s.skipSpace(false)
		if s.peek(0) != '.' {
			return segs
		}
		s.advance()
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// quoted reads a one-line quoted string and returns its content (escapes in
// basic strings are kept except \" and \\, which is enough for keys).
func (s *lineScanner) quoted(q byte) string {
	s.advance()
	var b strings.Builder
	for s.pos < len(s.src) {
		c := s.peek(0)
		switch {
		case c == q:
			s.advance()
			return b.String()
		case c == '\n':
			s.bad = true
			return b.String()
		case c == '\\' && q == '"':
			s.advance()
			b.WriteByte(s.peek(0))
			s.advance()
		default:
			b.WriteByte(c)
			s.advance()
		}
	}
	s.bad = true
	return b.String()
}

func (s *lineScanner) value(path string) {
	s.record(path)
	switch c := s.peek(0); c {
	case '"', '\'':
		if s.peek(1) == c && s.peek(2) == c {
			s.advance()
			s.advance()
			s.advance()
			for s.pos < len(s.src) {
				if s.peek(0) == '\\' && c == '"' {
					s.advance()
					s.advance()
					continue
				}
				if s.peek(0) == c && s.peek(1) == c && s.peek(2) == c {
					for s.peek(0) == c { // up to two quotes may end the content
						s.advance()
					}
					return
				}
				s.advance()
			}
			s.bad = true
			return
		}
		s.quoted(c)
	case '[':
		s.advance()
		for i := 0; !s.bad; i++ {
			s.skipSpace(true)
			if s.peek(0) == ']' {
				s.advance()
				return
			}
			start := s.pos
			s.value(indexPath(path, i))
			s.skipSpace(true)
			if s.peek(0) == ',' {
				s.advance()
			} else if s.peek(0) != ']' || s.pos == start {
				s.bad = true
			}
		}
	case '{':
		s.advance()
		for !s.bad {
			s.skipSpace(true)
			if s.peek(0) == '}' {
				s.advance()
				return
			}
			start := s.pos
			s.keyValue(path)
			s.skipSpace(true)
			if s.peek(0) == ',' {
				s.advance()
			} else if s.peek(0) != '}' || s.pos == start {
				s.bad = true
			}
		}
	default:
		start := s.pos
		for s.pos < len(s.src) && !strings.ContainsRune(",]}\n#\r \t", rune(s.peek(0))) {
			s.advance()
		}
		if s.pos == start {
			s.bad = true
		}
		// a date-time may contain one space between date and time
		if s.peek(0) == ' ' && s.pos-start == 10 && s.peek(1) >= '0' && s.peek(1) <= '9' {
			s.advance()
			for s.pos < len(s.src) && !strings.ContainsRune(",]}\n#\r \t", rune(s.peek(0))) {
				s.advance()
			}
		}
	}
}

// lookupLine returns the line of field or of its nearest recorded ancestor.
func lookupLine(lines map[string]int, field string) int {
	for field != "" {
		if l, ok := lines[field]; ok {
			return l
		}
		i := max(strings.LastIndexByte(field, '.'), strings.LastIndexByte(field, '['))
		if i <= 0 {
			break
		}
		field = field[:i]
	}
	if l, ok := lines[field]; ok {
		return l
	}
	return 0
}

// sortProblemsByLine orders problems by line (unknown lines last), keeping
// the existing order among equals.
func sortProblemsByLine(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = 1 << 30
		}
		if lb == 0 {
			lb = 1 << 30
		}
		return cmp.Compare(la, lb)
	})
}
