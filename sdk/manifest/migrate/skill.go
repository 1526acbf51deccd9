package migrate

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"go.yaml.in/yaml/v3"
)

// yamlLine matches the line yaml.v3 puts at the start of its errors.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

// frontMatter locates the YAML front matter of a SKILL.md the way
// skill.Parse does: the byte offset of its first line and its
// text. ok is false when the file has none.
func frontMatter(data []byte) (off int, fm []byte, ok bool) {
	text := bytes.TrimLeft(data, " \t\r\n")
	if !bytes.HasPrefix(text, []byte("---")) {
		return 0, nil, false
	}
	text = text[3:]
	text = bytes.TrimPrefix(text, []byte("\n"))
	off = len(data) - len(text)
	end := bytes.Index(text, []byte("\n---"))
	if end < 0 {
		if !bytes.HasPrefix(text, []byte("---")) {
			return 0, nil, false
		}
		end = 0
	}
	return off, text[:end], true
}

// SkillMD rewrites the retired keys of a SKILL.md front matter: `crates:`
// becomes `depends-on:` (a list of crates becomes the comma-separated
// string depends-on takes) and crate(...) in `predicates:` becomes
// depends-on(...). A file without front matter, or with nothing retired,
// comes back unchanged with no changes.
func SkillMD(data []byte) ([]byte, []Change, error) {
	off, fm, ok := frontMatter(data)
	if !ok {
		return data, nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := lineOf(data, off)
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line += n - 1
			msg = msg[len(m[0]):]
		}
		return nil, nil, &RefusedError{Line: line, Invalid: true, Reason: "the front matter is not valid YAML: " + msg}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil, nil
	}
	root := doc.Content[0]
	s := &skillRewriter{data: data, off: off, fm: fm}
	var crates, deps *yaml.Node
	var cratesVal *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		switch k.Value {
		case manifest.KeyRetiredCrates:
			crates, cratesVal = k, v
		case manifest.KeyDependsOn:
			deps = k
		case manifest.KeyPredicates:
			s.predicates(v)
		}
	}
	if crates != nil {
		if deps != nil {
			s.refuse(crates, "the front matter sets both crates and depends-on; merge the crates into depends-on by hand")
		} else {
			s.crates(crates, cratesVal)
		}
	}
	if s.refused != nil {
		return nil, nil, s.refused
	}
	out, changes, err := apply(data, s.edits)
	if err != nil {
		return nil, nil, err
	}
	if _, nfm, ok := frontMatter(out); ok {
		var check yaml.Node
		if err := yaml.Unmarshal(nfm, &check); err != nil {
			return nil, nil, &RefusedError{Line: lineOf(data, off), Reason: "internal error: the rewritten front matter would not parse (" + err.Error() + "); please report this file"}
		}
	} else if len(changes) > 0 {
		return nil, nil, &RefusedError{Line: lineOf(data, off), Reason: "internal error: the rewritten file lost its front matter; please report this file"}
	}
	return out, changes, nil
}

type skillRewriter struct {
	data    []byte
	off     int
	fm      []byte
	edits   []edit
	refused *RefusedError
}

func (s *skillRewriter) refuse(n *yaml.Node, reason string) {
	if s.refused == nil {
		s.refused = &RefusedError{Line: lineOf(s.data, s.off) + n.Line - 1, Reason: reason}
	}
}

// pos returns the byte offset in the file of node n, or -1.
func (s *skillRewriter) pos(n *yaml.Node) int {
	if n.Line < 1 || n.Column < 1 {
		return -1
	}
	p := 0
	for l := 1; l < n.Line; l++ {
		i := bytes.IndexByte(s.fm[p:], '\n')
		if i < 0 {
			return -1
		}
		p += i + 1
	}
	line := s.fm[p:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	// yaml.v3 counts columns in characters.
	b := 0
	for c := 1; c < n.Column; c++ {
		if b >= len(line) {
			return -1
		}
		_, w := utf8.DecodeRune(line[b:])
		b += w
	}
	return s.off + p + b
}

// token returns the range of the scalar key n as written, or ok false.
func (s *skillRewriter) token(n *yaml.Node) (start, end int, ok bool) {
	p := s.pos(n)
	if p < 0 {
		return 0, 0, false
	}
	for _, t := range []string{n.Value, `"` + n.Value + `"`, `'` + n.Value + `'`} {
		if bytes.HasPrefix(s.data[p:], []byte(t)) {
			return p, p + len(t), true
		}
	}
	return 0, 0, false
}

func (s *skillRewriter) crates(k, v *yaml.Node) {
	ks, ke, ok := s.token(k)
	if !ok {
		s.refuse(k, "cannot locate the crates key in the text; rename it to depends-on by hand")
		return
	}
	if v.Kind == yaml.AliasNode {
		s.refuse(k, "crates is an alias; rename it to depends-on by hand")
		return
	}
	if v.Kind == yaml.ScalarNode {
		s.edits = append(s.edits, edit{ks, ke, manifest.KeyDependsOn})
		return
	}
	if v.Kind != yaml.SequenceNode {
		s.refuse(k, "crates is a mapping; depends-on takes a comma-separated string of dependency atoms")
		return
	}
	// A list of crates: depends-on takes them as one comma-separated string.
	var names []string
	last := k
	for _, it := range v.Content {
		if it.Kind != yaml.ScalarNode || it.Tag != "!!str" || strings.ContainsAny(it.Value, ",\n") || strings.TrimSpace(it.Value) == "" {
			s.refuse(it, "crates lists something that is not a single crate name; write depends-on: as a comma-separated string by hand")
			return
		}
		names = append(names, strings.TrimSpace(it.Value))
		if it.Line > last.Line || (it.Line == last.Line && it.Column > last.Column) {
			last = it
		}
	}
	if len(names) == 0 {
		s.refuse(k, "crates is an empty list; remove it (no gate) by hand")
		return
	}
	lp := s.pos(last)
	if lp < 0 {
		s.refuse(k, "cannot locate the crates list in the text; rewrite it as depends-on by hand")
		return
	}
	end := lineEnd(s.data, lp)
	span := string(s.data[ks:end])
	if v.Style&yaml.FlowStyle != 0 {
		// [a, b] on the key's line, perhaps followed by a comment.
		close := strings.LastIndexByte(span, ']')
		if last.Line != k.Line || close < 0 || strings.Contains(span[:close], "#") {
			s.refuse(k, "crates is a list spread over several lines or with comments inside; rewrite it as depends-on: a, b by hand")
			return
		}
		end = ks + close + 1
	} else if strings.Contains(span, "#") {
		s.refuse(k, "crates is a list with comments inside; rewrite it as depends-on: a, b by hand")
		return
	}
	s.edits = append(s.edits, edit{ks, end, "depends-on: " + yamlString(strings.Join(names, ", "))})
}

// yamlString writes s as a YAML plain scalar when it can be one, else
// double-quoted.
func yamlString(s string) string {
	plain := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= '0' && s[0] <= '9' || s[0] == '_' || s[0] == '@' || s[0] == '.' || s[0] == '/')
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '#' || c == ':' || c == '"' || c == '\'' || c == '\\' || c == '[' || c == ']' || c == '{' || c == '}' {
			plain = false
		}
	}
	if plain && s[len(s)-1] != ' ' {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			b.WriteString(`\x`)
			const hex = "0123456789abcdef"
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// predicates renames crate(...) calls in a one-line predicates value.
func (s *skillRewriter) predicates(v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || len(renameCrateCalls(v.Value, 0)) == 0 {
		return
	}
	switch v.Style {
	case 0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
	default:
		s.refuse(v, "predicates calls crate(...) in a block scalar; rename the calls to depends-on(...) by hand")
		return
	}
	p := s.pos(v)
	if p < 0 {
		s.refuse(v, "cannot locate predicates in the text; rename crate(...) to depends-on(...) by hand")
		return
	}
	end := lineEnd(s.data, p)
	text := string(s.data[p:end])
	if v.Style == 0 {
		if i := strings.Index(text, " #"); i >= 0 {
			text = text[:i]
		}
	}
	edits := renameCrateCalls(text, p)
	if len(edits) != len(renameCrateCalls(v.Value, 0)) {
		s.refuse(v, "predicates spans several lines; rename crate(...) to depends-on(...) by hand")
		return
	}
	s.edits = append(s.edits, edits...)
}
