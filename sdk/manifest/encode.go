package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/pelletier/go-toml/v2"
)

// WireJSON returns the manifest's wire form: the raw schema as compact JSON
// with the TOML key spellings (docs/manifests.md §10), object keys sorted. This is
// what a PM puts in an offer's `manifest`. Unknown keys are included.
func (m *Manifest) WireJSON() (json.RawMessage, error) {
	b, err := marshalJSON(m.Table())
	if err != nil {
		return nil, fmt.Errorf("encoding manifest %q as JSON: %w", m.Name, err)
	}
	return b, nil
}

// marshalJSON is json.Marshal without HTML escaping, so requirements such
// as >=1 stay readable on the wire.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MarshalJSON encodes the wire form, so a Manifest (or a pointer to one)
// can be embedded in JSON.
func (m Manifest) MarshalJSON() ([]byte, error) { return m.WireJSON() }

// UnmarshalJSON decodes the wire form (see [DecodeJSON]).
func (m *Manifest) UnmarshalJSON(data []byte) error {
	dm, err := DecodeJSON(data)
	if err != nil {
		return err
	}
	*m = *dm
	return nil
}

// EncodeTOML renders the manifest as a SYMPOSIUM.toml document (keys sorted;
// comments and the original layout are not kept). Unknown keys are included.
func EncodeTOML(m *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	if err := enc.Encode(m.Table()); err != nil {
		return nil, fmt.Errorf("encoding manifest %q as TOML: %w", m.Name, err)
	}
	return buf.Bytes(), nil
}

// Table returns the manifest as a generic table (string, bool, int64,
// float64, []any and map[string]any values) with the schema's key
// spellings: the tree that both the JSON and the TOML encodings render.
func (m *Manifest) Table() map[string]any {
	t := extra(m.Extra)
	putStr(t, keyName, m.Name)
	putDependsOn(t, m.DependsOn)
	putStrs(t, keyPredicates, m.Predicates)
	if m.Defaults != nil {
		dt := extra(m.Defaults.Extra)
		if m.Defaults.Skills != nil {
			dt[keySkills] = *m.Defaults.Skills
		}
		t[keyDefaults] = dt
	}
	if m.Installations != nil {
		arr := make([]any, len(m.Installations))
		for i := range m.Installations {
			arr[i] = m.Installations[i].table()
		}
		t[keyInstallations] = arr
	}
	if m.Hooks != nil {
		arr := make([]any, len(m.Hooks))
		for i, h := range m.Hooks {
			ht := extra(h.Extra)
			putStr(ht, keyName, h.Name)
			putStr(ht, keyEvent, h.Event)
			putStr(ht, keyAgent, h.Agent)
			putStr(ht, keyMatcher, h.Matcher)
			putRef(ht, keyCommand, h.Command)
			putStr(ht, keyExecutable, h.Executable)
			putStr(ht, keyScript, h.Script)
			putStrs(ht, keyArgs, h.Args)
			putRefs(ht, keyRequirements, h.Requirements)
			putStr(ht, keyFormat, h.Format)
			putStrs(ht, keyPredicates, h.Predicates)
			arr[i] = ht
		}
		t[keyHooks] = arr
	}
	if m.Skills != nil {
		arr := make([]any, len(m.Skills))
		for i, g := range m.Skills {
			gt := extra(g.Extra)
			putDependsOn(gt, g.DependsOn)
			putStrs(gt, keyPredicates, g.Predicates)
			if s := g.Source; s != nil {
				if s.Scalar != "" && !s.hasPath() && !s.hasGit() && s.Extra == nil {
					gt[keySource] = s.Scalar
				} else {
					st := extra(s.Extra)
					if s.hasPath() {
						st[keyPath] = s.Path
					}
					if s.hasGit() {
						st[keyGit] = s.Git
					}
					gt[keySource] = st
				}
			}
			arr[i] = gt
		}
		t[keySkills] = arr
	}
	if m.MCPServers != nil {
		arr := make([]any, len(m.MCPServers))
		for i, s := range m.MCPServers {
			st := extra(s.Extra)
			putDependsOn(st, s.DependsOn)
			putStrs(st, keyPredicates, s.Predicates)
			putStr(st, keyType, s.Type)
			putStr(st, keyName, s.Name)
			putStr(st, keyCommand, s.Command)
			putStrs(st, keyArgs, s.Args)
			putNameValues(st, keyEnv, s.Env)
			putStr(st, keyURL, s.URL)
			putNameValues(st, keyHeaders, s.Headers)
			if s.Meta != nil {
				st[keyMeta] = s.Meta
			}
			arr[i] = st
		}
		t[keyMCPServers] = arr
	}
	if m.Subcommand != nil {
		sub := make(map[string]any, len(m.Subcommand))
		for name, s := range m.Subcommand {
			st := extra(s.Extra)
			putStr(st, keyDescription, s.Description)
			putStr(st, keyAudience, s.Audience)
			putRef(st, keyCommand, s.Command)
			putDependsOn(st, s.DependsOn)
			putStrs(st, keyPredicates, s.Predicates)
			sub[name] = st
		}
		t[keySubcommand] = sub
	}
	if m.Predicate != nil {
		arr := make([]any, len(m.Predicate))
		for i, p := range m.Predicate {
			pt := extra(p.Extra)
			putStr(pt, keyName, p.Name)
			putRef(pt, keyCommand, p.Command)
			putStrs(pt, keyArgs, p.Args)
			arr[i] = pt
		}
		t[keyPredicate] = arr
	}
	if m.Plugins != nil {
		arr := make([]any, len(m.Plugins))
		for i, r := range m.Plugins {
			rt := extra(r.Extra)
			putDependsOn(rt, r.DependsOn)
			putStrs(rt, keyPredicates, r.Predicates)
			if s := r.Source; s != nil {
				st := extra(s.Extra)
				if c := s.Cargo; c != nil {
					switch {
					case c.Other != nil:
						st[keyCargo] = c.Other
					case c.Atom != "":
						st[keyCargo] = c.Atom
					default:
						ct := map[string]any{keyName: c.Name}
						putStr(ct, keyVersion, c.Version)
						st[keyCargo] = ct
					}
				}
				if s.Git != nil {
					st[keyGit] = s.Git
				}
				if s.Path != nil {
					st[keyPath] = s.Path
				}
				rt[keySource] = st
			}
			arr[i] = rt
		}
		t[keyPlugins] = arr
	}
	return t
}

func (in *Installation) table() map[string]any {
	t := extra(in.Extra)
	putStr(t, keyName, in.Name)
	putStr(t, keySource, in.Source)
	putStr(t, keyCrate, in.Crate)
	putStr(t, keyVersion, in.Version)
	putStr(t, keyGit, in.Git)
	if in.Global != nil {
		t[keyGlobal] = *in.Global
	}
	putStr(t, keyURL, in.URL)
	putStr(t, keyExecutable, in.Executable)
	putStr(t, keyScript, in.Script)
	putStrs(t, keyArgs, in.Args)
	putRefs(t, keyRequirements, in.Requirements)
	putStrs(t, keyInstallCommands, in.InstallCommands)
	return t
}

// extra starts a table with a deep copy of the unknown keys.
func extra(e map[string]any) map[string]any {
	t := make(map[string]any, len(e)+8)
	for k, v := range e {
		t[k] = deepCopy(v)
	}
	return t
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := maps.Clone(v)
		for k, e := range out {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func putStr(t map[string]any, k, v string) {
	if v != "" {
		t[k] = v
	}
}

func putStrs(t map[string]any, k string, v []string) {
	if v == nil {
		return
	}
	arr := make([]any, len(v))
	for i, s := range v {
		arr[i] = s
	}
	t[k] = arr
}

func putDependsOn(t map[string]any, d DependsOn) {
	if d.IsZero() {
		return
	}
	if d.Single && len(d.Atoms) == 1 {
		t[keyDependsOn] = d.Atoms[0]
		return
	}
	putStrs(t, keyDependsOn, append([]string{}, d.Atoms...))
}

func refValue(r InstallRef) any {
	if r.Inline != nil {
		return r.Inline.table()
	}
	return r.Name
}

func putRef(t map[string]any, k string, r InstallRef) {
	if !r.IsZero() {
		t[k] = refValue(r)
	}
}

func putRefs(t map[string]any, k string, rs []InstallRef) {
	if rs == nil {
		return
	}
	arr := make([]any, len(rs))
	for i, r := range rs {
		arr[i] = refValue(r)
	}
	t[k] = arr
}

func putNameValues(t map[string]any, k string, nvs []NameValue) {
	if nvs == nil {
		return
	}
	arr := make([]any, len(nvs))
	for i, nv := range nvs {
		nt := extra(nv.Extra)
		nt[keyName] = nv.Name
		if nv.hasValue() {
			nt[keyValue] = nv.Value
		}
		if nv.Meta != nil {
			nt[keyMeta] = nv.Meta
		}
		arr[i] = nt
	}
	t[k] = arr
}
