package manifest

import (
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
)

// decodePlain is DecodeJSON's fastest path, for the manifest a PM embeds
// in nearly every offer: a name and skill groups that say only where their
// skills are, such as
//
//	{"name":"serde","skills":[{"source":{"path":"skills"}}]}
//
// It decodes such a document straight into the Manifest, without the tree
// (a map per object) that parseJSONTree builds and d.manifest then reads,
// and reports ok true only when the result is the one that path gives. It
// takes an object whose members are "name" (a string) and "skills" (an
// array of objects whose one member is "source", an object of "path"
// and/or "git" strings), each at most once, every string and member name
// written plainly: without escapes or control characters, in valid UTF-8.
// Anything else (another member, a null, a repeated name, an escape) is
// left to parseJSONTree, and reported as ok false.
func decodePlain(data []byte) (*Manifest, bool) {
	if !jsonscan.Valid(data) {
		return nil, false
	}
	// Each string is a slice of one copy of the document, as in
	// parseJSONTree, rather than a copy of its own.
	p := plainDecoder{text: string(data), ok: true}
	m := &Manifest{}
	var seen uint8
	good := jsonscan.RawMembers(data, func(name []byte, v json.RawMessage) {
		if !p.ok {
			return
		}
		switch string(name) {
		case `"name"`:
			p.once(&seen, 1)
			m.Name = p.str(data, v)
		case `"skills"`:
			p.once(&seen, 2)
			m.Skills = p.skills(data, v)
		default:
			p.ok = false
		}
	})
	if !good || !p.ok {
		return nil, false
	}
	return m, true
}

// plainDecoder is the state of one decodePlain call: the document as a
// string, and whether it is still plain.
type plainDecoder struct {
	text string
	ok   bool
}

// once records the member bit in seen, and that the document is not plain
// if it was there before.
func (p *plainDecoder) once(seen *uint8, bit uint8) {
	if *seen&bit != 0 {
		p.ok = false
	}
	*seen |= bit
}

// str returns v, a value inside data, as a string: a slice of p.text
// when v is a plain string, else "" with the document marked not plain.
func (p *plainDecoder) str(data []byte, v json.RawMessage) string {
	body, ok := jsonscan.PlainString(v)
	if !ok {
		p.ok = false
		return ""
	}
	if start := offset(data, body); start > 0 && start+len(body) <= len(p.text) {
		return p.text[start : start+len(body)]
	}
	return string(body)
}

// skills decodes v, the skills member, as an array of plain skill groups.
func (p *plainDecoder) skills(data []byte, v json.RawMessage) []SkillGroup {
	out := []SkillGroup{}
	isArray := jsonscan.Elements(v, func(e json.RawMessage) bool {
		var g SkillGroup
		var seen uint8
		isObject := jsonscan.RawMembers(e, func(name []byte, sv json.RawMessage) {
			if !p.ok {
				return
			}
			if string(name) != `"source"` {
				p.ok = false
				return
			}
			p.once(&seen, 1)
			g.Source = p.source(data, sv)
		})
		out = append(out, g)
		return isObject && p.ok
	})
	if !isArray {
		p.ok = false
	}
	return out
}

// source decodes v as a skill group's source table of plain strings.
func (p *plainDecoder) source(data []byte, v json.RawMessage) *SkillSource {
	src := &SkillSource{}
	var seen uint8
	isObject := jsonscan.RawMembers(v, func(name []byte, fv json.RawMessage) {
		if !p.ok {
			return
		}
		switch string(name) {
		case `"path"`:
			p.once(&seen, 1)
			src.Path, src.pathSet = p.str(data, fv), true
		case `"git"`:
			p.once(&seen, 2)
			src.Git, src.gitSet = p.str(data, fv), true
		default:
			p.ok = false
		}
	})
	if !isObject {
		p.ok = false
	}
	return src
}

// offset returns where sub, a slice of data (as jsonscan hands over the
// values inside a document), starts in it.
func offset(data, sub []byte) int {
	return cap(data) - cap(sub)
}
