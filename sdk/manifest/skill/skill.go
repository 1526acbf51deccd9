package skill

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skilltree"
)

// File is the exact file name of a skill.
const File = skilltree.File

// Skill is the front matter of a SKILL.md (docs/manifests.md §9.1).
type Skill struct {
	// Name is the `name` field, with one pair of surrounding double quotes
	// removed. In lenient mode it is empty when the file has none; callers
	// use the skill directory's name then.
	Name string
	// Description is the `description` field.
	Description string
	// DependsOn are the comma-separated `depends-on` atoms, each trimmed and
	// checked with [predicate.ParseAtom].
	DependsOn []string
	// Predicates are the comma-separated `predicates`, each trimmed and
	// checked with [predicate.Parse].
	Predicates []string
	// Fields holds every other front-matter key (license, ...).
	Fields map[string]string
}

// Error is a SKILL.md problem, with the 1-based line of the file it
// concerns when known.
type Error struct {
	Line    int
	Field   string
	Message string
}

// Error renders `line N: field: message`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Problem converts the error into a Problem for file.
func (e *Error) Problem(file string) manifest.Problem {
	return manifest.Problem{File: file, Line: e.Line, Field: e.Field, Message: e.Message}
}

// stripYAMLLine removes the YAML parser's own "yaml: line N: " prefix,
// whose number is not consistently 0- or 1-based; firstBadYAMLLine finds
// the line instead. (String work rather than a package-level regexp, whose
// compilation every PM process would pay at start-up.)
func stripYAMLLine(msg string) string {
	rest, ok := strings.CutPrefix(msg, "yaml: line ")
	if !ok {
		return msg
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if after, ok := strings.CutPrefix(rest[digits:], ": "); ok && digits > 0 {
		return after
	}
	return msg
}

// firstBadYAMLLine returns the 1-based line of fm at which the YAML first
// stops parsing: the shortest prefix of whole lines that fails. Front
// matter is short; past 200 lines it gives up and returns 1.
func firstBadYAMLLine(fm []byte) int {
	lines := bytes.SplitAfter(fm, []byte("\n"))
	if len(lines) > 200 {
		return 1
	}
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		var n yaml.Node
		if yaml.Unmarshal(prefix, &n) != nil {
			return i + 1
		}
	}
	return len(lines)
}

// Parse parses the front matter of a SKILL.md. Strict mode (registry
// and package skill groups) requires front matter with `name` and a
// non-empty `description` of at most 1024 bytes. Lenient mode (workspace
// member groups) accepts a file without front matter and a missing name or
// description. Every front-matter value must be a YAML string; `crates` is
// rejected (renamed to `depends-on`).
func Parse(data []byte, strict bool) (*Skill, error) {
	text := bytes.TrimLeft(data, " \t\r\n")
	if !bytes.HasPrefix(text, []byte("---")) {
		if !strict {
			return &Skill{}, nil
		}
		return nil, &Error{Line: 1, Message: "SKILL.md must start with front matter between --- lines"}
	}
	text = text[3:]
	text = bytes.TrimPrefix(text, []byte("\n"))
	// offset: the file line just before the first front-matter line
	offset := bytes.Count(data[:len(data)-len(text)], []byte("\n"))
	end := bytes.Index(text, []byte("\n---"))
	if end < 0 {
		// an empty block may close on its very first line
		if bytes.HasPrefix(text, []byte("---")) {
			end = 0
		} else {
			return nil, &Error{Line: offset, Message: "SKILL.md front matter has no closing --- line"}
		}
	}
	fm := text[:end]
	s := &Skill{}
	descSet, descLine := false, offset
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		msg := strings.TrimPrefix(stripYAMLLine(err.Error()), "yaml: ")
		return nil, &Error{Line: offset + firstBadYAMLLine(fm), Message: "front matter is not valid YAML: " + msg}
	}
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, &Error{Line: offset + root.Line, Message: "front matter must be a mapping of keys to strings"}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				return nil, &Error{Line: offset + k.Line, Message: "front matter keys must be strings"}
			}
			key := k.Value
			if seen[key] {
				return nil, &Error{Line: offset + k.Line, Field: key, Message: "duplicate field"}
			}
			seen[key] = true
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if key == "crates" {
				// Retired whatever its form: the fix is the rename, with
				// the value as one string (a list's items joined).
				if val, ok := RetiredCratesValue(v); ok {
					return nil, &Error{Line: offset + k.Line, Field: key, Message: "crates was renamed: write depends-on: " + val}
				}
			}
			// YAML 1.2 (Symposium's parser) has no timestamps: an unquoted
			// date is a string there, so it is one here too.
			if v.Kind != yaml.ScalarNode || (v.Tag != "!!str" && v.Tag != "!!timestamp") {
				return nil, &Error{Line: offset + v.Line, Field: key, Message: "must be a string, found " + yamlKind(v) + " (quote the value)"}
			}
			val := v.Value
			switch key {
			case "crates":
				return nil, &Error{Line: offset + k.Line, Field: key, Message: "crates was renamed: write depends-on: " + val}
			case "depends-on":
				for _, piece := range predicate.SplitTopLevel(val) {
					if _, err := predicate.ParseAtom(piece); err != nil {
						return nil, &Error{Line: offset + v.Line, Field: key, Message: err.Error()}
					}
					s.DependsOn = append(s.DependsOn, piece)
				}
			case "predicates":
				for _, piece := range predicate.SplitTopLevel(val) {
					if _, err := predicate.Parse(piece); err != nil {
						return nil, &Error{Line: offset + v.Line, Field: key, Message: err.Error()}
					}
					s.Predicates = append(s.Predicates, piece)
				}
			case "name":
				if len(val) >= 2 && strings.HasPrefix(val, `"`) && strings.HasSuffix(val, `"`) {
					val = val[1 : len(val)-1]
				}
				s.Name = val
			case "description":
				s.Description, descSet, descLine = val, true, offset+k.Line
			default:
				if s.Fields == nil {
					s.Fields = map[string]string{}
				}
				s.Fields[key] = val
			}
		}
	}
	if strict && s.Name == "" {
		return nil, &Error{Line: offset, Field: "name", Message: "SKILL.md front matter is missing name"}
	}
	if descSet || strict {
		d := strings.TrimSpace(s.Description)
		switch {
		case d == "":
			return nil, &Error{Line: descLine, Field: "description", Message: "SKILL.md needs a non-empty description"}
		case len(d) > manifest.MaxDescription:
			return nil, &Error{Line: descLine, Field: "description", Message: fmt.Sprintf("description is %d bytes long; the limit is %d", len(d), manifest.MaxDescription)}
		}
	}
	return s, nil
}

// RetiredCratesValue renders the value of a retired `crates` front-matter
// key as the string `depends-on` takes: a scalar as written, a list of
// scalars (`[serde, tokio]` or a block list) as its items joined with ", ".
// It reports false for any other value (a mapping, a nested list).
func RetiredCratesValue(v *yaml.Node) (string, bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		return v.Value, true
	case yaml.SequenceNode:
		items := make([]string, 0, len(v.Content))
		for _, it := range v.Content {
			if it.Kind != yaml.ScalarNode {
				return "", false
			}
			items = append(items, it.Value)
		}
		return strings.Join(items, ", "), true
	}
	return "", false
}

func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		}
		return "a " + strings.TrimPrefix(n.Tag, "!!")
	}
	return "a non-string value"
}
