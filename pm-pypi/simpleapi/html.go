package simpleapi

import (
	"html"
	"strings"
)

// anchor is one <a> element of a PEP 503 page.
type anchor struct {
	attrs map[string]string
	text  string
}

// scanHTML returns the <a> elements of a simple-API page and the href of
// its <base> element, if any. PEP 503 pages are flat lists of anchors; this
// reads tags, attributes (quoted or not, entity-decoded) and anchor text,
// skips comments, and tolerates everything else. (A full HTML parser costs
// the PM's start-up on every hook; the stdlib html package decodes entities
// lazily.)
func scanHTML(doc string) (anchors []anchor, base string) {
	i := 0
	var open *anchor
	var text strings.Builder
	for i < len(doc) {
		lt := strings.IndexByte(doc[i:], '<')
		if lt < 0 {
			if open != nil {
				text.WriteString(doc[i:])
			}
			break
		}
		if open != nil {
			text.WriteString(doc[i : i+lt])
		}
		i += lt
		if strings.HasPrefix(doc[i:], "<!--") {
			end := strings.Index(doc[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		gt := tagEnd(doc, i+1)
		if gt < 0 {
			break
		}
		tag := doc[i+1 : gt]
		i = gt + 1
		closing := strings.HasPrefix(tag, "/")
		tag = strings.TrimPrefix(tag, "/")
		nameEnd := 0
		for nameEnd < len(tag) && !isSpace(tag[nameEnd]) && tag[nameEnd] != '/' {
			nameEnd++
		}
		name := strings.ToLower(tag[:nameEnd])
		switch {
		case name == "a" && closing:
			if open != nil {
				open.text = strings.TrimSpace(html.UnescapeString(text.String()))
				anchors = append(anchors, *open)
				open = nil
			}
		case name == "a":
			if open != nil { // an unclosed anchor ends at the next one
				open.text = strings.TrimSpace(html.UnescapeString(text.String()))
				anchors = append(anchors, *open)
			}
			open = &anchor{attrs: parseAttrs(tag[nameEnd:])}
			text.Reset()
		case name == "base" && !closing && base == "":
			base = parseAttrs(tag[nameEnd:])["href"]
		}
	}
	if open != nil {
		open.text = strings.TrimSpace(html.UnescapeString(text.String()))
		anchors = append(anchors, *open)
	}
	return anchors, base
}

// tagEnd finds the ">" closing the tag that starts at i, skipping quoted
// attribute values.
func tagEnd(doc string, i int) int {
	var quote byte
	for ; i < len(doc); i++ {
		c := doc[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// parseAttrs parses `key="v" key='v' key=v key` sequences; keys are lower
// case, values entity-decoded; the first of a repeated key wins.
func parseAttrs(s string) map[string]string {
	m := map[string]string{}
	i := 0
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '/' {
			i++
		}
		key := strings.ToLower(s[start:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					val = s[i+1:]
					i = len(s)
				} else {
					val = s[i+1 : i+1+end]
					i += end + 2
				}
			} else {
				vs := i
				for i < len(s) && !isSpace(s[i]) {
					i++
				}
				val = s[vs:i]
			}
		}
		if key == "" {
			if i == start {
				i++
			}
			continue
		}
		if _, dup := m[key]; !dup {
			m[key] = html.UnescapeString(val)
		}
	}
	return m
}
