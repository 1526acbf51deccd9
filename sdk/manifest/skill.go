package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SkillFile is the exact file name of a skill.
const SkillFile = "SKILL.md"

// MaxDescription is the longest skill or subcommand description, in bytes.
const MaxDescription = 1024

// Skill is the front matter of a SKILL.md (reference §6).
type Skill struct {
	// Name is the `name` field, with one pair of surrounding double quotes
	// removed. In lenient mode it is empty when the file has none; callers
	// use the skill directory's name then.
	Name string
	// Description is the `description` field.
	Description string
	// DependsOn are the comma-separated `depends-on` atoms, each trimmed and
	// checked with [ParseAtom].
	DependsOn []string
	// Predicates are the comma-separated `predicates`, each trimmed and
	// checked with [ParsePredicate].
	Predicates []string
	// Fields holds every other front-matter key (license, ...).
	Fields map[string]string
}

// ParseSkillMD parses the front matter of a SKILL.md. Strict mode (registry
// and package skill groups) requires front matter with `name` and a
// non-empty `description` of at most 1024 bytes. Lenient mode (workspace
// member groups) accepts a file without front matter and a missing name or
// description. Every front-matter value must be a YAML string; `crates` is
// rejected (renamed to `depends-on`).
func ParseSkillMD(data []byte, strict bool) (*Skill, error) {
	text := bytes.TrimLeft(data, " \t\r\n")
	if !bytes.HasPrefix(text, []byte("---")) {
		if !strict {
			return &Skill{}, nil
		}
		return nil, errors.New("SKILL.md must start with front matter between --- lines")
	}
	text = text[3:]
	text = bytes.TrimPrefix(text, []byte("\n"))
	end := bytes.Index(text, []byte("\n---"))
	if end < 0 {
		// an empty block may close on its very first line
		if bytes.HasPrefix(text, []byte("---")) {
			end = 0
		} else {
			return nil, errors.New("SKILL.md front matter has no closing --- line")
		}
	}
	fm := text[:end]
	s := &Skill{}
	descSet := false
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		return nil, fmt.Errorf("SKILL.md front matter is not valid YAML: %w", err)
	}
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, errors.New("SKILL.md front matter must be a mapping of keys to strings")
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				return nil, fmt.Errorf("SKILL.md front matter line %d: keys must be strings", k.Line)
			}
			key := k.Value
			if seen[key] {
				return nil, fmt.Errorf("SKILL.md front matter line %d: duplicate field %q", k.Line, key)
			}
			seen[key] = true
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				return nil, fmt.Errorf("SKILL.md front matter line %d: field %q must be a string, found %s", v.Line, key, yamlKind(v))
			}
			val := v.Value
			switch key {
			case "crates":
				return nil, fmt.Errorf("SKILL.md front matter line %d: field \"crates\" was renamed; write depends-on: %s", k.Line, val)
			case "depends-on":
				for _, piece := range SplitTopLevel(val) {
					if _, err := ParseAtom(piece); err != nil {
						return nil, fmt.Errorf("SKILL.md front matter line %d: depends-on: %w", v.Line, err)
					}
					s.DependsOn = append(s.DependsOn, piece)
				}
			case "predicates":
				for _, piece := range SplitTopLevel(val) {
					if _, err := ParsePredicate(piece); err != nil {
						return nil, fmt.Errorf("SKILL.md front matter line %d: predicates: %w", v.Line, err)
					}
					s.Predicates = append(s.Predicates, piece)
				}
			case "name":
				if len(val) >= 2 && strings.HasPrefix(val, `"`) && strings.HasSuffix(val, `"`) {
					val = val[1 : len(val)-1]
				}
				s.Name = val
			case "description":
				s.Description, descSet = val, true
			default:
				if s.Fields == nil {
					s.Fields = map[string]string{}
				}
				s.Fields[key] = val
			}
		}
	}
	if strict && s.Name == "" {
		return nil, errors.New("SKILL.md front matter is missing name")
	}
	if descSet || strict {
		d := strings.TrimSpace(s.Description)
		switch {
		case d == "":
			return nil, errors.New("SKILL.md description is empty or missing")
		case len(d) > MaxDescription:
			return nil, fmt.Errorf("SKILL.md description is %d bytes long; the limit is %d", len(d), MaxDescription)
		}
	}
	return s, nil
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
