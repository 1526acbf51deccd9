package gitregistry

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// retiredSkill reads a bare skill whose SKILL.md front matter uses the
// retired `crates` key, which the strict parser refuses. Dropping such an
// entry would make it vanish from discovery without a word, while a
// SYMPOSIUM.toml with the same retired key is shown invalid with the fix;
// so the skill is read without that key and its synthesized manifest
// carries the key's value as a retired top-level `crates`, which the host's
// validation rejects with the migration hint, exactly as for a manifest.
//
// It returns nils when data has no retired key to carry (parseErr is then
// the problem to report) or when the rest of the front matter is itself
// unreadable.
func retiredSkill(dirName string, data []byte, parseErr error) (*manifest.Manifest, *skill.Skill) {
	var se *skill.Error
	if !errors.As(parseErr, &se) || se.Field != "crates" {
		return nil, nil
	}
	head, fm, tail, ok := splitFrontMatter(data)
	if !ok {
		return nil, nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(fm, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	root := doc.Content[0]
	var crates string
	found := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "crates" {
			v := root.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if crates, found = skill.RetiredCratesValue(v); !found {
				return nil, nil
			}
			root.Content = append(root.Content[:i:i], root.Content[i+2:]...)
			break
		}
	}
	if !found {
		return nil, nil
	}
	rest, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, nil
	}
	sk, err := skill.Parse(bytes.Join([][]byte{head, rest, tail}, nil), true)
	if err != nil {
		return nil, nil
	}
	m := layout.SkillPlugin(dirName, sk)
	list := []any{}
	for _, c := range predicate.SplitTopLevel(crates) {
		list = append(list, c)
	}
	m.Extra = map[string]any{"crates": list}
	return m, sk
}

// splitFrontMatter cuts a SKILL.md into the opening "---" line, the front
// matter, and the rest from the closing "---" on.
func splitFrontMatter(data []byte) (head, fm, tail []byte, ok bool) {
	text := bytes.TrimLeft(data, " \t\r\n")
	if !bytes.HasPrefix(text, []byte("---\n")) {
		return nil, nil, nil, false
	}
	start := len(data) - len(text) + len("---\n")
	end := bytes.Index(data[start:], []byte("\n---"))
	if end < 0 {
		return nil, nil, nil, false
	}
	end += start + 1 // keep the newline ending the front matter
	return data[:start], data[start:end], data[end:], true
}

// retiredNote is the stderr note for an entry offered with a retired key.
func retiredNote(err error) string {
	return fmt.Sprintf("%s: %v", skill.File, err)
}
