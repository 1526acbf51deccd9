// Package jsonschema is the validator behind pmtest's "schema" check: a
// JSON Schema (draft 2020-12) validator for exactly the keywords the
// protocol's schema (docs/protocol.schema.json) uses, with "$ref" limited to
// "#/$defs/<name>".
//
// Why no library: the general validators pay at every start of every binary
// that links pmtest, including symposium-pm on the agent's hook path, which
// never runs the check. santhosh-tekuri/jsonschema compiles every draft's
// meta-schemas in its package init (about 21,000 allocations and 1.7 MB);
// google/jsonschema-go v0.4.3 costs about 300 allocations at init and its
// errors name neither the offending value's location nor, inside anyOf, the
// branch's causes. The subset here is small, compiles only when a check runs,
// and refuses a schema that uses any keyword it does not implement, so a
// schema change can never be validated loosely without notice.
//
// This package's tests hold santhosh-tekuri/jsonschema as an oracle and
// require the same verdict on every instance. They live here, not in
// pmtest, because pmtest's test binary re-executes itself as a PM (about a
// thousand times in make test), and every start of a binary linking the
// oracle pays its init, about 13 ms of CPU.
package jsonschema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is one compiled (sub)schema.
type node struct {
	always   *bool  // a boolean schema: true accepts, false rejects everything
	ref      string // "#/$defs/<name>", resolved into refNode
	refNode  *node
	types    []string
	props    map[string]*node
	required []string
	addl     *node // additionalProperties; nil when absent
	hasConst bool
	constV   any
	enum     []any
	items    *node
	allOf    []*node
	anyOf    []*node
	oneOf    []*node
	ifS      *node
	thenS    *node
	elseS    *node
	minimum  *decimal
	minLen   int // -1 when absent
	unique   bool
}

// Schema is a compiled schema document: its definitions by name.
type Schema struct {
	defs map[string]*node
}

// annotations are keywords that do not constrain an instance.
var annotations = []string{"$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default"}

// Compile reads a schema document and compiles all of its $defs; it
// refuses a keyword or a reference the validator does not implement.
func Compile(doc []byte) (*Schema, error) {
	root, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, errors.New("the document is not a JSON object")
	}
	if d, ok := obj["$schema"]; ok && d != "https://json-schema.org/draft/2020-12/schema" {
		return nil, fmt.Errorf("$schema is %v; only draft 2020-12 is supported", d)
	}
	defs, _ := obj["$defs"].(map[string]any)
	set := &Schema{defs: map[string]*node{}}
	var nodes []*node
	for name, d := range defs {
		n, err := compileNode(d, "#/$defs/"+name, &nodes)
		if err != nil {
			return nil, err
		}
		set.defs[name] = n
	}
	// The root itself, so that its keywords are checked too.
	if _, err := compileNode(root, "#", &nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.ref == "" {
			continue
		}
		name, ok := strings.CutPrefix(n.ref, "#/$defs/")
		if !ok || set.defs[name] == nil {
			return nil, fmt.Errorf("$ref %q: only references to a definition of the same document (#/$defs/<name>) are supported", n.ref)
		}
		n.refNode = set.defs[name]
	}
	return set, nil
}

// compileNode compiles the schema v found at location at; every node it
// makes is appended to all, for resolving references afterwards.
func compileNode(v any, at string, all *[]*node) (*node, error) {
	n := &node{minLen: -1}
	*all = append(*all, n)
	if b, ok := v.(bool); ok {
		n.always = &b
		return n, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object or a boolean", at)
	}
	sub := func(key string) (*node, error) { return compileNode(obj[key], at+"/"+key, all) }
	list := func(key string) ([]*node, error) {
		arr, ok := obj[key].([]any)
		if !ok || len(arr) == 0 {
			return nil, fmt.Errorf("%s/%s: must be a non-empty array of schemas", at, key)
		}
		var out []*node
		for i, s := range arr {
			c, err := compileNode(s, fmt.Sprintf("%s/%s/%d", at, key, i), all)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var err error
	for _, k := range keys {
		val := obj[k]
		switch k {
		case "$ref":
			s, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("%s/$ref: must be a string", at)
			}
			n.ref = s
		case "type":
			switch t := val.(type) {
			case string:
				n.types = []string{t}
			case []any:
				for _, e := range t {
					s, ok := e.(string)
					if !ok {
						return nil, fmt.Errorf("%s/type: must name types", at)
					}
					n.types = append(n.types, s)
				}
			default:
				return nil, fmt.Errorf("%s/type: must be a string or an array of strings", at)
			}
			for _, t := range n.types {
				if !slices.Contains([]string{"null", "boolean", "object", "array", "number", "integer", "string"}, t) {
					return nil, fmt.Errorf("%s/type: unknown type %q", at, t)
				}
			}
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s/properties: must be an object", at)
			}
			n.props = map[string]*node{}
			for name, p := range props {
				if n.props[name], err = compileNode(p, at+"/properties/"+name, all); err != nil {
					return nil, err
				}
			}
		case "required":
			arr, ok := val.([]any)
			if !ok {
				return nil, fmt.Errorf("%s/required: must be an array of strings", at)
			}
			for _, e := range arr {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("%s/required: must be an array of strings", at)
				}
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			n.addl, err = sub(k)
		case "const":
			n.hasConst, n.constV = true, val
		case "enum":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				return nil, fmt.Errorf("%s/enum: must be a non-empty array", at)
			}
			n.enum = arr
		case "items":
			n.items, err = sub(k)
		case "allOf":
			n.allOf, err = list(k)
		case "anyOf":
			n.anyOf, err = list(k)
		case "oneOf":
			n.oneOf, err = list(k)
		case "if":
			n.ifS, err = sub(k)
		case "then":
			n.thenS, err = sub(k)
		case "else":
			n.elseS, err = sub(k)
		case "minimum":
			num, ok := val.(json.Number)
			var d decimal
			if ok {
				d, ok = parseDecimal(string(num))
			}
			if !ok {
				return nil, fmt.Errorf("%s/minimum: must be a number", at)
			}
			n.minimum = &d
		case "minLength":
			num, ok := val.(json.Number)
			i, err := num.Int64()
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("%s/minLength: must be a non-negative integer", at)
			}
			n.minLen = int(i)
		case "uniqueItems":
			b, ok := val.(bool)
			if !ok {
				return nil, fmt.Errorf("%s/uniqueItems: must be a boolean", at)
			}
			n.unique = b
		default:
			if !slices.Contains(annotations, k) {
				return nil, fmt.Errorf("%s: keyword %q is not supported by the schema check's validator", at, k)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Decode decodes exactly one JSON value, numbers kept as json.Number.
func Decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after the JSON value")
	}
	return v, nil
}

// Cause is one reason an instance fails: where, and what is wrong.
type Cause struct {
	loc []string // instance location, as JSON pointer tokens
	msg string
}

// Has reports whether the schema has the definition def ($defs/<def>).
func (s *Schema) Has(def string) bool { return s.defs[def] != nil }

// Validate checks the instance v, as Decode returns it, against the
// definition def and returns why it fails, or nil when it matches.
func (s *Schema) Validate(def string, v any) ([]Cause, error) {
	n := s.defs[def]
	if n == nil {
		return nil, fmt.Errorf("the schema has no definition %q", def)
	}
	return n.check(v, nil), nil
}

// Describe renders the causes of a validation failure, each with the JSON
// pointer of the offending value: sorted, each once, the first three and
// how many more.
func Describe(causes []Cause) string {
	var leaves []string
	for _, c := range causes {
		leaves = append(leaves, fmt.Sprintf("at %s: %s", jsonPointer(c.loc), c.msg))
	}
	slices.Sort(leaves)
	leaves = slices.Compact(leaves)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], fmt.Sprintf("and %d more", len(leaves)-3))
	}
	return strings.Join(leaves, "; ")
}

// jsonPointer renders an instance location as a JSON pointer (RFC 6901);
// the whole message is "/" rather than the empty pointer, for readability.
func jsonPointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// check returns the causes v fails n for; loc is where v is.
func (n *node) check(v any, loc []string) []Cause {
	if n.always != nil {
		if *n.always {
			return nil
		}
		return []Cause{{loc, "not allowed"}}
	}
	var out []Cause
	fail := func(format string, args ...any) {
		out = append(out, Cause{loc, fmt.Sprintf(format, args...)})
	}
	if n.refNode != nil {
		out = append(out, n.refNode.check(v, loc)...)
	}
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		fail("got %s, want %s", typeOf(v), strings.Join(n.types, " or "))
		return out // the other keywords would only repeat the mismatch
	}
	if n.hasConst && !schemaEqual(v, n.constV) {
		fail("value must be %s", jsonText(n.constV))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return schemaEqual(v, e) }) {
		var opts []string
		for _, e := range n.enum {
			opts = append(opts, jsonText(e))
		}
		fail("value must be one of %s", strings.Join(opts, ", "))
	}
	switch x := v.(type) {
	case map[string]any:
		var missing []string
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				missing = append(missing, quoteName(r))
			}
		}
		if len(missing) == 1 {
			fail("missing property %s", missing[0])
		} else if len(missing) > 1 {
			fail("missing properties %s", strings.Join(missing, ", "))
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var extra []string
		for _, k := range keys {
			sub := append(slices.Clip(loc), k)
			if p, ok := n.props[k]; ok {
				out = append(out, p.check(x[k], sub)...)
				continue
			}
			if n.addl == nil {
				continue
			}
			if n.addl.always != nil && !*n.addl.always {
				extra = append(extra, quoteName(k))
				continue
			}
			out = append(out, n.addl.check(x[k], sub)...)
		}
		if len(extra) > 0 {
			fail("additional properties %s not allowed", strings.Join(extra, ", "))
		}
	case []any:
		if n.items != nil {
			for i, e := range x {
				out = append(out, n.items.check(e, append(slices.Clip(loc), fmt.Sprint(i)))...)
			}
		}
		if n.unique {
			// By canonical form, not pairwise: a hostile array of many
			// items costs linear time.
			seen := make(map[string]int, len(x))
			for j, e := range x {
				k := canonical(e)
				if i, ok := seen[k]; ok {
					fail("items at %d and %d are equal", i, j)
					break
				}
				seen[k] = j
			}
		}
	case string:
		if n.minLen >= 0 {
			if l := utf8.RuneCountInString(x); l < n.minLen {
				fail("minLength: got %d, want %d", l, n.minLen)
			}
		}
	case json.Number:
		if n.minimum != nil {
			if d, ok := parseDecimal(string(x)); ok && d.cmp(*n.minimum) < 0 {
				fail("must be >= %s but found %s", n.minimum, x)
			}
		}
	}
	for _, s := range n.allOf {
		out = append(out, s.check(v, loc)...)
	}
	if n.anyOf != nil {
		var causes []Cause
		matched := false
		for _, s := range n.anyOf {
			c := s.check(v, loc)
			if len(c) == 0 {
				matched = true
				break
			}
			causes = append(causes, c...)
		}
		if !matched {
			out = append(out, causes...)
		}
	}
	if n.oneOf != nil {
		var causes []Cause
		var matched []string
		for i, s := range n.oneOf {
			c := s.check(v, loc)
			if len(c) == 0 {
				matched = append(matched, fmt.Sprint(i))
			}
			causes = append(causes, c...)
		}
		switch {
		case len(matched) == 0:
			out = append(out, causes...)
		case len(matched) > 1:
			fail("'oneOf' failed, subschemas %s matched", strings.Join(matched, ", "))
		}
	}
	if n.ifS != nil {
		if len(n.ifS.check(v, loc)) == 0 {
			if n.thenS != nil {
				out = append(out, n.thenS.check(v, loc)...)
			}
		} else if n.elseS != nil {
			out = append(out, n.elseS.check(v, loc)...)
		}
	}
	return out
}

// hasType reports whether v is of the JSON Schema type t; an integer is a
// number with no fractional part (1.0 included).
func hasType(v any, t string) bool {
	switch t {
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			return false
		}
		d, ok := parseDecimal(string(num))
		return ok && d.isInt()
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return typeOf(v) == t
}

// typeOf names v's JSON type.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// schemaEqual compares two decoded JSON values; numbers compare by value
// (1 equals 1.0).
func schemaEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		dx, okx := parseDecimal(string(x))
		dy, oky := parseDecimal(string(y))
		return okx && oky && dx.cmp(dy) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !schemaEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !schemaEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// jsonText renders a schema value for a message: strings in single quotes,
// anything else as JSON.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return quoteName(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// quoteName renders a property name or string value in single quotes.
func quoteName(s string) string { return "'" + s + "'" }

// decimal is a JSON number kept exactly without arithmetic on its size (a
// hostile 1e999999999 costs nothing): the value is ±0.digits × 10^exp,
// digits with no leading or trailing zero, empty for zero.
type decimal struct {
	neg    bool
	digits string
	exp    int64
	text   string // as written
}

// maxExponent bounds exponents; beyond it, numbers compare as if at it.
const maxExponent = 1 << 40

// parseDecimal reads a JSON number.
func parseDecimal(s string) (decimal, bool) {
	d := decimal{text: s}
	rest := s
	if strings.HasPrefix(rest, "-") {
		d.neg, rest = true, rest[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ReplaceAll(rest, "E", "e"), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || strings.Trim(intPart+frac, "0123456789") != "" {
		return decimal{}, false
	}
	var exp int64
	if hasExp {
		e, err := strconv.ParseInt(strings.TrimPrefix(expPart, "+"), 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
				return decimal{}, false
			}
			e = maxExponent
			if strings.HasPrefix(expPart, "-") {
				e = -maxExponent
			}
		}
		exp = max(min(e, maxExponent), -maxExponent)
	}
	all := intPart + frac
	exp += int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	exp -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		d.neg, d.exp = false, 0
		return d, true
	}
	d.exp = exp
	return d, true
}

// isInt reports whether d has no fractional part.
func (d decimal) isInt() bool { return d.digits == "" || d.exp >= int64(len(d.digits)) }

// cmp compares d with e: -1, 0 or +1.
func (d decimal) cmp(e decimal) int {
	sign := func(x decimal) int {
		switch {
		case x.digits == "":
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, se := sign(d), sign(e)
	if sd != se || sd == 0 {
		return cmp.Compare(sd, se)
	}
	c := cmp.Compare(d.exp, e.exp)
	if c == 0 {
		c = strings.Compare(d.digits, e.digits) // same exponent: digit strings compare as fractions
	}
	if sd < 0 {
		c = -c
	}
	return c
}

// String renders d as written.
func (d decimal) String() string { return d.text }

// canonical renders a decoded JSON value so that two values are equal in
// the JSON Schema sense exactly when their renderings are: numbers by
// value, object members in key order.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("n")
	case bool:
		if x {
			b.WriteString("t")
		} else {
			b.WriteString("f")
		}
	case json.Number:
		d, _ := parseDecimal(string(x))
		if d.neg {
			b.WriteString("-")
		}
		fmt.Fprintf(b, "#%se%d", d.digits, d.exp)
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(",")
			}
			writeCanonical(b, e)
		}
		b.WriteString("]")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(k) + ":")
			writeCanonical(b, x[k])
		}
		b.WriteString("}")
	}
}
