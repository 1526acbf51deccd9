// Package marker parses and evaluates PEP 508 environment markers
// (`python_version < "3.10" and sys_platform == "linux"`) the way the
// packaging library does, over an environment that may leave variables
// unknown: evaluation is three-valued, and a comparison involving an
// unknown variable is Unknown rather than a guess.
package marker

import (
	"fmt"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// Value is the result of an evaluation: False, True or Unknown.
type Value int8

// The three values, combined with Kleene's logic (False and Unknown is
// False; True or Unknown is True).
const (
	False Value = iota
	True
	Unknown
)

// String returns "false", "true" or "unknown".
func (v Value) String() string {
	switch v {
	case False:
		return "false"
	case True:
		return "true"
	}
	return "unknown"
}

// Env is a marker environment: variable name (python_version,
// sys_platform, ...) to value. A variable that is absent is unknown.
type Env map[string]string

// Variables are the PEP 508 environment variable names.
var Variables = []string{
	"python_version", "python_full_version", "os_name", "sys_platform",
	"platform_release", "platform_system", "platform_version", "platform_machine",
	"platform_python_implementation", "implementation_name", "implementation_version", "extra",
}

// aliases are the legacy spellings packaging still reads.
var aliases = map[string]string{
	"os.name": "os_name", "sys.platform": "sys_platform", "platform.version": "platform_version",
	"platform.machine": "platform_machine", "platform.python_implementation": "platform_python_implementation",
	"python_implementation": "platform_python_implementation",
}

// MaxLength bounds a marker's text; MaxDepth its parenthesis nesting.
const (
	MaxLength = 64 << 10
	MaxDepth  = 64
)

// Marker is a parsed marker expression.
type Marker struct {
	text string
	root node
}

type node interface{ eval(Env) Value }

type orNode []node
type andNode []node

type cmpNode struct {
	lhs, rhs operand
	op       string
}

type operand struct {
	variable string // normalized name, or ""
	literal  string
}

// operands returns the two sides' values as packaging takes them: the
// environment's value of a variable on the left, and the right side as
// written (a variable there is its own name); or, with a literal on the
// left, the environment's value of whatever the right side names (a
// literal there is looked up as a variable, which packaging fails on when
// it names none). Written the usual way, a variable against a literal,
// either way round, that is each side's value.
func (n cmpNode) operands(env Env) (l, r string, ok bool) {
	if n.lhs.variable != "" {
		l, ok = env[n.lhs.variable]
		r = n.rhs.literal
		if n.rhs.variable != "" {
			r = n.rhs.variable
		}
		return l, r, ok
	}
	key := n.rhs.variable
	if key == "" {
		key = n.rhs.literal
	}
	r, ok = env[key]
	return n.lhs.literal, r, ok
}

func (n orNode) eval(env Env) Value {
	out := False
	for _, c := range n {
		switch c.eval(env) {
		case True:
			return True
		case Unknown:
			out = Unknown
		}
	}
	return out
}

func (n andNode) eval(env Env) Value {
	out := True
	for _, c := range n {
		switch c.eval(env) {
		case False:
			return False
		case Unknown:
			out = Unknown
		}
	}
	return out
}

func (n cmpNode) eval(env Env) Value {
	l, r, ok := n.operands(env)
	if !ok {
		return Unknown
	}
	if n.lhs.variable == "extra" || n.rhs.variable == "extra" {
		// Extra names compare normalized, as packaging does.
		l, r = normalizeExtra(l), normalizeExtra(r)
	}
	switch n.op {
	case "in":
		return of(strings.Contains(r, l))
	case "not in":
		return of(!strings.Contains(r, l))
	}
	if clause := n.op + r; !strings.Contains(r, ",") && versions.ValidatePEP440Specifier(clause) == nil {
		if _, err := versions.CanonicalPEP440(l); err != nil {
			return Unknown // packaging raises here
		}
		ok, err := versions.FilterPEP440(clause, []string{l}, true)
		if err != nil {
			return Unknown
		}
		return of(len(ok) == 1)
	}
	c := strings.Compare(l, r)
	switch n.op {
	case "==":
		return of(c == 0)
	case "!=":
		return of(c != 0)
	case "<":
		return of(c < 0)
	case "<=":
		return of(c <= 0)
	case ">":
		return of(c > 0)
	case ">=":
		return of(c >= 0)
	}
	// ~= and === on strings that are not versions: packaging raises
	// UndefinedComparison.
	return Unknown
}

func normalizeExtra(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

func of(b bool) Value {
	if b {
		return True
	}
	return False
}

// Eval evaluates the marker in env.
func (m *Marker) Eval(env Env) Value { return m.root.eval(env) }

// Parse parses a marker expression. Errors name the marker and the
// offending position.
func Parse(s string) (*Marker, error) {
	if len(s) > MaxLength {
		return nil, fmt.Errorf("marker of %d bytes is longer than %d", len(s), MaxLength)
	}
	p := &parser{src: s}
	p.next()
	root, err := p.or(0)
	if err == nil && p.tok.kind != tEOF {
		err = p.errorf("unexpected %s", p.tok)
	}
	if err != nil {
		return nil, fmt.Errorf("marker %q: %w", s, err)
	}
	return &Marker{text: s, root: root}, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tVar
	tStr
	tOp
	tAnd
	tOr
	tBad
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of marker"
	case tStr:
		return fmt.Sprintf("string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type parser struct {
	src string
	i   int
	tok token
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.tok.pos, fmt.Sprintf(format, args...))
}

func isIdent(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.'
}

// next reads the next token.
func (p *parser) next() {
	for p.i < len(p.src) && strings.IndexByte(" \t\r\n\f\v", p.src[p.i]) >= 0 {
		p.i++
	}
	start := p.i
	if p.i >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.i]
	switch {
	case c == '(':
		p.i++
		p.tok = token{tLParen, "(", start}
	case c == ')':
		p.i++
		p.tok = token{tRParen, ")", start}
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.src[p.i+1:], c)
		if end < 0 {
			p.tok = token{tBad, p.src[p.i:], start}
			p.i = len(p.src)
			return
		}
		p.tok = token{tStr, p.src[p.i+1 : p.i+1+end], start}
		p.i += end + 2
	case strings.IndexByte("<>=!~", c) >= 0:
		for _, op := range []string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"} {
			if strings.HasPrefix(p.src[p.i:], op) {
				p.i += len(op)
				p.tok = token{tOp, op, start}
				return
			}
		}
		p.i++
		p.tok = token{tBad, string(c), start}
	case isIdent(c):
		for p.i < len(p.src) && isIdent(p.src[p.i]) {
			p.i++
		}
		word := p.src[start:p.i]
		switch word {
		case "and":
			p.tok = token{tAnd, word, start}
		case "or":
			p.tok = token{tOr, word, start}
		case "in":
			p.tok = token{tOp, "in", start}
		case "not":
			// "not in"
			save := p.i
			for p.i < len(p.src) && strings.IndexByte(" \t", p.src[p.i]) >= 0 {
				p.i++
			}
			if strings.HasPrefix(p.src[p.i:], "in") && (p.i+2 == len(p.src) || !isIdent(p.src[p.i+2])) {
				p.i += 2
				p.tok = token{tOp, "not in", start}
				return
			}
			p.i = save
			p.tok = token{tBad, word, start}
		default:
			p.tok = token{tVar, word, start}
		}
	default:
		p.i++
		p.tok = token{tBad, string(c), start}
	}
}

func (p *parser) or(depth int) (node, error) {
	var terms orNode
	for {
		t, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		if p.tok.kind != tOr {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *parser) and(depth int) (node, error) {
	var terms andNode
	for {
		t, err := p.atom(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		if p.tok.kind != tAnd {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *parser) atom(depth int) (node, error) {
	if p.tok.kind == tLParen {
		if depth >= MaxDepth {
			return nil, p.errorf("parentheses nested deeper than %d", MaxDepth)
		}
		p.next()
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.errorf("expected ) but found %s", p.tok)
		}
		p.next()
		return n, nil
	}
	lhs, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tOp {
		return nil, p.errorf("expected a comparison operator but found %s", p.tok)
	}
	op := p.tok.text
	p.next()
	rhs, err := p.operand()
	if err != nil {
		return nil, err
	}
	// Two literals, or two variables, are evaluated as packaging evaluates
	// them (see cmpNode.operands).
	return cmpNode{lhs: lhs, rhs: rhs, op: op}, nil
}

func (p *parser) operand() (operand, error) {
	switch p.tok.kind {
	case tStr:
		o := operand{literal: p.tok.text}
		p.next()
		return o, nil
	case tVar:
		name := p.tok.text
		if a, ok := aliases[name]; ok {
			name = a
		}
		for _, v := range Variables {
			if v == name {
				p.next()
				return operand{variable: name}, nil
			}
		}
		return operand{}, p.errorf("unknown marker variable %q", p.tok.text)
	}
	return operand{}, p.errorf("expected a marker variable or a quoted string but found %s", p.tok)
}
