package predicate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// Atom is a dependency atom (docs/manifests.md §3.1): a package name with an
// optional version requirement, or the wildcard `*`.
type Atom struct {
	// Name is the dependency name, or "*" for the wildcard.
	Name string
	// Req is the requirement after the atom rewrites (a leading `==` becomes
	// `=`, exact; a lone leading `=` becomes `^`), with Cargo comparators
	// normalized (a bare version gets `^`) and joined by "," without spaces.
	// Empty means any version.
	Req string
}

// Wildcard reports whether the atom is `*`.
func (a Atom) Wildcard() bool { return a.Name == "*" }

// String renders the atom so that [ParseAtom] reads it back to the same
// value: an exact requirement `=1.2.3` is written `==1.2.3`, since a lone
// `=` in an atom means caret.
func (a Atom) String() string {
	if a.Req == "" || a.Wildcard() {
		return a.Name
	}
	if strings.HasPrefix(a.Req, "=") {
		return a.Name + "=" + a.Req
	}
	return a.Name + a.Req
}

// atomOps are the requirement operators of an atom, longest first. `!=` is
// an extension for PEP 440 requirements (Cargo and npm reject it).
var atomOps = []string{">=", "<=", "==", "!=", ">", "<", "=", "^", "~"}

// isAtomNameChar reports the characters of a dependency name: the
// reference's letters, digits, '_' and '-', plus '.', '@' and '/' so npm
// (`@types/node`) and PyPI (`zope.interface`) names can be written.
func isAtomNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '@' || c == '/'
}

// ParseAtom parses a dependency atom: `*`, `name`, or `name<op><version>`
// with op one of >=, <=, ==, !=, >, <, =, ^, ~ and no whitespace inside.
func ParseAtom(s string) (Atom, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Atom{}, errors.New("empty depends-on predicate")
	}
	if s == "*" {
		return Atom{Name: "*"}, nil
	}
	i := 0
	for i < len(s) && isAtomNameChar(s[i]) {
		i++
	}
	name, rest := s[:i], s[i:]
	if name == "" {
		return Atom{}, fmt.Errorf("%q: expected a package name", s)
	}
	if strings.HasPrefix(rest, "(") {
		return Atom{}, fmt.Errorf("%q: function-call syntax is not allowed in depends-on; put it in predicates", s)
	}
	if rest == "" {
		return Atom{Name: name}, nil
	}
	op := ""
	for _, o := range atomOps {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	if op == "" {
		return Atom{}, trailing(s, rest)
	}
	ver := rest[len(op):]
	if j := strings.IndexAny(ver, " \t\r\n"); j >= 0 {
		return Atom{}, trailing(s, ver[j:])
	}
	if ver == "" {
		return Atom{}, fmt.Errorf("%q: missing version after %q", s, op)
	}
	switch op {
	case "==":
		op = "="
	case "=":
		op = "^"
	}
	req, err := normalizeReq(op + ver)
	if err != nil {
		return Atom{}, fmt.Errorf("%q: %w", s, err)
	}
	return Atom{Name: name, Req: req}, nil
}

// trailing explains input left over after an atom.
func trailing(atom, rest string) error {
	switch {
	case strings.Contains(rest, ","):
		parts := SplitTopLevel(atom)
		q := make([]string, len(parts))
		for i, p := range parts {
			q[i] = fmt.Sprintf("%q", p)
		}
		return fmt.Errorf("%q: unexpected trailing input %q; one depends-on string is one atom, write a list: [%s]", atom, rest, strings.Join(q, ", "))
	case strings.TrimLeft(rest, " \t\r\n") != rest:
		return fmt.Errorf("%q: unexpected trailing input %q; an atom has no spaces, write %q", atom, strings.TrimSpace(rest), strings.Join(strings.Fields(atom), ""))
	}
	return fmt.Errorf("%q: unexpected trailing input %q after the package name", atom, rest)
}

// normalizeReq checks a requirement and returns its canonical text: Cargo
// syntax normalized (bare comparators get `^`, no spaces), or, when Cargo
// rejects it but npm or PEP 440 accepts it, the text unchanged.
func normalizeReq(req string) (string, error) {
	if _, err := versions.Cargo.Matches(req, "0.0.0"); err == nil {
		parts := strings.Split(req, ",")
		for i, p := range parts {
			p = strings.TrimSpace(p)
			if p != "" && !strings.ContainsAny(p[:1], "<>=^~*") && !strings.ContainsAny(p, "*xX") {
				p = "^" + p
			}
			parts[i] = p
		}
		return strings.Join(parts, ","), nil
	} else if _, nerr := versions.NPM.Matches(req, "0.0.0"); nerr == nil {
		return req, nil
	} else if perr := versions.ValidatePEP440Specifier(req); perr == nil {
		return req, nil
	} else {
		return "", err
	}
}

// Predicate is a parsed function-call predicate (docs/manifests.md §4). Its
// String method returns the canonical text, which [Parse] reads
// back to an equal value.
type Predicate interface {
	String() string
	isPredicate()
}

// DependsOn is `depends-on(<atom>)`.
type DependsOn struct{ Atom Atom }

// Shell is `shell(<cmd>)`: true iff `sh -c <cmd>` exits 0.
type Shell struct{ Command string }

// PathExists is `path_exists(<path>)`.
type PathExists struct{ Path string }

// Env is `env(<name>)` (set) or `env(<name>=<value>)` (set and equal).
type Env struct {
	Name     string
	Value    string
	HasValue bool
}

// WorkspaceMember is `workspace-member()`.
type WorkspaceMember struct{}

// Not is `not(<p>)`.
type Not struct{ P Predicate }

// Any is `any(<p>, ...)`, at least one operand.
type Any struct{ Ps []Predicate }

// All is `all(<p>, ...)`, at least one operand.
type All struct{ Ps []Predicate }

// Custom is a call of a custom predicate defined by a `[[predicate]]` table.
type Custom struct{ Name, Arg string }

func (DependsOn) isPredicate()       {}
func (Shell) isPredicate()           {}
func (PathExists) isPredicate()      {}
func (Env) isPredicate()             {}
func (WorkspaceMember) isPredicate() {}
func (Not) isPredicate()             {}
func (Any) isPredicate()             {}
func (All) isPredicate()             {}
func (Custom) isPredicate()          {}

func (p DependsOn) String() string  { return "depends-on(" + p.Atom.String() + ")" }
func (p Shell) String() string      { return "shell(" + p.Command + ")" }
func (p PathExists) String() string { return "path_exists(" + p.Path + ")" }
func (p Env) String() string {
	if p.HasValue {
		return "env(" + p.Name + "=" + p.Value + ")"
	}
	return "env(" + p.Name + ")"
}
func (WorkspaceMember) String() string { return "workspace-member()" }
func (p Not) String() string           { return "not(" + p.P.String() + ")" }
func (p Any) String() string           { return "any(" + joinPreds(p.Ps) + ")" }
func (p All) String() string           { return "all(" + joinPreds(p.Ps) + ")" }
func (p Custom) String() string        { return p.Name + "(" + p.Arg + ")" }

func joinPreds(ps []Predicate) string {
	ss := make([]string, len(ps))
	for i, p := range ps {
		ss[i] = p.String()
	}
	return strings.Join(ss, ", ")
}

// IsBuiltin reports whether name is a built-in predicate's name, which a
// custom predicate may not take.
func IsBuiltin(name string) bool {
	switch name {
	case "depends-on", "crate", "shell", "path_exists", "env", "workspace-member", "not", "any", "all":
		return true
	}
	return false
}

// MaxNesting bounds how deep predicates nest (any(all(not(...)))): real
// ones nest two or three deep, and each level of a combinator scans its
// whole argument again, so deeper nesting is refused rather than parsed
// in time quadratic in the text.
const MaxNesting = 32

// checkNesting refuses s when its parentheses nest deeper than MaxNesting.
func checkNesting(s string) error {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth++; depth > MaxNesting {
				return fmt.Errorf("%.60q...: predicates nest deeper than %d levels", s, MaxNesting)
			}
		case ')':
			depth--
		}
	}
	return nil
}

// Parse parses one function-call predicate. The argument is the
// text between the first '(' and the last ')', trimmed; combinator
// arguments are split on commas at parenthesis depth 0. Predicates
// nested deeper than MaxNesting are refused.
func Parse(s string) (Predicate, error) {
	if err := checkNesting(s); err != nil {
		return nil, err
	}
	return parse(s)
}

func parse(s string) (Predicate, error) {
	t := strings.TrimSpace(s)
	open := strings.IndexByte(t, '(')
	if open < 0 {
		return nil, fmt.Errorf("%q is not a function call (write e.g. depends-on(%s))", t, t)
	}
	if !strings.HasSuffix(t, ")") {
		return nil, fmt.Errorf("%q: a predicate must end with ')'", t)
	}
	fname := strings.TrimSpace(t[:open])
	arg := strings.TrimSpace(t[open+1 : len(t)-1])
	switch fname {
	case "depends-on":
		a, err := ParseAtom(arg)
		if err != nil {
			return nil, err
		}
		return DependsOn{Atom: a}, nil
	case "crate":
		return nil, fmt.Errorf("%q: crate(...) was renamed; write depends-on(%s)", t, arg)
	case "shell":
		return Shell{Command: arg}, nil
	case "path_exists":
		return PathExists{Path: arg}, nil
	case "env":
		if arg == "" {
			return nil, fmt.Errorf("%q: env() needs a variable name", t)
		}
		name, value, ok := strings.Cut(arg, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("%q: env() needs a variable name before '='", t)
		}
		return Env{Name: name, Value: value, HasValue: ok}, nil
	case "workspace-member":
		if arg != "" {
			return nil, fmt.Errorf("%q: workspace-member() takes no argument", t)
		}
		return WorkspaceMember{}, nil
	case "not":
		if arg == "" {
			return nil, fmt.Errorf("%q: not() needs a predicate", t)
		}
		p, err := parse(arg)
		if err != nil {
			return nil, err
		}
		return Not{P: p}, nil
	case "any", "all":
		ps, err := parseList(arg)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("%q: %s() needs at least one predicate", t, fname)
		}
		if fname == "any" {
			return Any{Ps: ps}, nil
		}
		return All{Ps: ps}, nil
	}
	if !IsCustomName(fname) {
		return nil, fmt.Errorf("%q: %q is not a valid predicate name (letters, digits and '_', starting with a letter)", t, fname)
	}
	return Custom{Name: fname, Arg: arg}, nil
}

// IsCustomName reports whether s may name a custom predicate: it matches
// [A-Za-z][A-Za-z0-9_]* (a built-in name also matches; see [IsBuiltin]).
func IsCustomName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// SplitTopLevel splits s on commas at parenthesis depth 0, trims each piece
// and drops empty ones.
func SplitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	emit := func(end int) {
		if p := strings.TrimSpace(s[start:end]); p != "" {
			out = append(out, p)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				emit(i)
				start = i + 1
			}
		}
	}
	emit(len(s))
	return out
}

// ParseList parses a comma-separated list of predicates (the
// SKILL.md `predicates:` form and combinator arguments).
func ParseList(s string) ([]Predicate, error) {
	if err := checkNesting(s); err != nil {
		return nil, err
	}
	return parseList(s)
}

func parseList(s string) ([]Predicate, error) {
	var ps []Predicate
	for _, piece := range SplitTopLevel(s) {
		p, err := parse(piece)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// Lower turns a `depends-on` list into one predicate (docs/manifests.md §4): nil
// for none, the atom itself for one, any(...) for several.
func Lower(atoms []Atom) Predicate {
	switch len(atoms) {
	case 0:
		return nil
	case 1:
		return DependsOn{Atom: atoms[0]}
	}
	ps := make([]Predicate, len(atoms))
	for i, a := range atoms {
		ps[i] = DependsOn{Atom: a}
	}
	return Any{Ps: ps}
}
