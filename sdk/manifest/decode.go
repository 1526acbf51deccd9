package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
)

// DecodeTOML decodes a SYMPOSIUM.toml document. It fails on TOML syntax
// errors and on known keys holding a value of the wrong type; the error is
// then a [Problems] with line numbers. Unknown keys are kept. The returned
// manifest remembers the line of each key for [Manifest.Line].
func DecodeTOML(data []byte) (*Manifest, error) {
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		return nil, Problems{tomlProblem(err)}
	}
	// The document is kept for its lines, apart from the caller's buffer.
	lines := &tomlLines{data: bytes.Clone(data)}
	m, err := FromTable(tree)
	if err != nil {
		var ps Problems
		if errors.As(err, &ps) {
			for i := range ps {
				ps[i].Line = lines.line(ps[i].Field)
			}
			sortProblemsByLine(ps)
			return nil, ps
		}
		return nil, err
	}
	m.lines = lines
	return m, nil
}

// tomlLines are the lines of a TOML document's keys, scanned on first use
// (scanTOMLLines parses the document twice more), once for all the copies
// of the manifest that share it.
type tomlLines struct {
	data  []byte
	once  sync.Once
	lines map[string]int
}

// line returns the line of field (see lookupLine), 0 for a manifest not
// decoded from TOML.
func (l *tomlLines) line(field string) int {
	if l == nil {
		return 0
	}
	l.once.Do(func() {
		l.lines = scanTOMLLines(l.data)
		l.data = nil
	})
	return lookupLine(l.lines, field)
}

// DecodeJSON decodes a manifest in its JSON wire form (the same keys as
// TOML). It fails on invalid JSON, a document that is not an object, and
// known keys holding a value of the wrong type. A JSON null is treated as an
// absent key.
func DecodeJSON(data []byte) (*Manifest, error) {
	// The fast paths: the plain manifest most offers carry, then any
	// document parseJSONTree takes. What they give up on, and a document
	// that is not an object, go through encoding/json, which words the
	// error.
	if m, ok := decodePlain(data); ok {
		return m, nil
	}
	if tree, ok := parseJSONTree(data); ok {
		if t, ok := tree.(map[string]any); ok {
			return decodeTree(t)
		}
	}
	return decodeJSONStd(data)
}

// decodeJSONStd is DecodeJSON with encoding/json: the reference the fast
// path (parseJSONTree) matches, and its fallback for whatever it does not
// take on, which this turns into the error DecodeJSON reports.
func decodeJSONStd(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // an empty document
		}
		var je *jsonfile.Error
		if errors.As(jsonfile.Explain("", data, err), &je) && je.Line > 0 {
			return nil, Problems{{Line: je.Line, Message: fmt.Sprintf("column %d: %s", je.Column, je.Msg)}}
		}
		return nil, Problems{{Message: "invalid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, Problems{{Message: "invalid JSON: trailing data after the manifest object"}}
	}
	tree, ok := v.(map[string]any)
	if !ok {
		return nil, Problems{{Message: fmt.Sprintf("a manifest must be a JSON object, found %s", typeName(normalize(v)))}}
	}
	// The tree is this call's own: it is normalized in place rather than
	// copied (FromTable copies a caller's table).
	return decodeTree(normalizeJSON(tree).(map[string]any))
}

// decodeTree decodes the manifest in a normalized tree. Field paths are
// spelled out only for problems: the tree is decoded without them, and a
// tree with problems decoded again with them (the second pass meets the
// same problems in the same order).
func decodeTree(tree map[string]any) (*Manifest, error) {
	d := &decoder{}
	m := d.manifest(tree)
	if len(d.problems) == 0 {
		return m, nil
	}
	d = &decoder{paths: true}
	d.manifest(tree)
	return nil, d.problems
}

// tomlProblem turns a TOML decoding error into a Problem carrying the line
// of the error when the decoder reports one.
func tomlProblem(err error) Problem {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return Problem{Line: line, Message: "invalid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return Problem{Message: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
}

// FromTable converts a decoded TOML or JSON table (as produced by a TOML
// decoder or encoding/json into map[string]any) into a Manifest.
// Errors are [Problems] naming the field.
func FromTable(tree map[string]any) (*Manifest, error) {
	return decodeTree(normalizeTable(tree))
}

// Line returns the TOML line on which the field path (as in
// [Problem.Field]) or its nearest enclosing field was written, or 0 when the
// manifest was not decoded from TOML or the line is unknown.
func (m *Manifest) Line(field string) int {
	if m == nil {
		return 0
	}
	return m.lines.line(field)
}

type decoder struct {
	problems Problems
	// paths: join and index spell out field paths; without it they give
	// "" (no problem is reported from such a pass, see decodeTree).
	paths bool
}

// join is joinPath when d spells out paths.
func (d *decoder) join(path, key string) string {
	if !d.paths {
		return ""
	}
	return joinPath(path, key)
}

// index is indexPath when d spells out paths.
func (d *decoder) index(path string, i int) string {
	if !d.paths {
		return ""
	}
	return indexPath(path, i)
}

func (d *decoder) fail(path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Field: path, Message: fmt.Sprintf(format, args...)})
}

func (d *decoder) wrongType(path, want string, v any) {
	d.fail(path, "expected %s, found %s", want, typeName(v))
}

func (d *decoder) str(v any, path string) string {
	s, ok := v.(string)
	if !ok {
		d.wrongType(path, "a string", v)
	}
	return s
}

func (d *decoder) boolean(v any, path string) *bool {
	b, ok := v.(bool)
	if !ok {
		d.wrongType(path, "a boolean", v)
		return nil
	}
	return &b
}

func (d *decoder) strs(v any, path string) []string {
	arr, ok := v.([]any)
	if !ok {
		d.wrongType(path, "an array of strings", v)
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			d.wrongType(d.index(path, i), "a string", e)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) table(v any, path string) map[string]any {
	t, ok := v.(map[string]any)
	if !ok {
		d.wrongType(path, "a table", v)
	}
	return t
}

func (d *decoder) tables(v any, path string) []map[string]any {
	arr, ok := v.([]any)
	if !ok {
		d.wrongType(path, "an array of tables", v)
		return nil
	}
	out := make([]map[string]any, 0, len(arr))
	for i, e := range arr {
		t, ok := e.(map[string]any)
		if !ok {
			d.wrongType(d.index(path, i), "a table", e)
			t = map[string]any{}
		}
		out = append(out, t)
	}
	return out
}

func (d *decoder) dependsOn(v any, path string) DependsOn {
	switch v := v.(type) {
	case string:
		return DependsOn{Atoms: []string{v}, Single: true}
	case []any:
		return DependsOn{Atoms: d.strs(v, path)}
	}
	d.wrongType(path, "a string or an array of strings", v)
	return DependsOn{}
}

func (d *decoder) installRef(v any, path string) InstallRef {
	switch v := v.(type) {
	case string:
		return InstallRef{Name: v}
	case map[string]any:
		return InstallRef{Inline: d.installation(v, path)}
	}
	d.wrongType(path, "an installation name or an inline installation table", v)
	return InstallRef{}
}

func (d *decoder) installRefs(v any, path string) []InstallRef {
	arr, ok := v.([]any)
	if !ok {
		d.wrongType(path, "an array of installation names or tables", v)
		return nil
	}
	out := make([]InstallRef, 0, len(arr))
	for i, e := range arr {
		out = append(out, d.installRef(e, d.index(path, i)))
	}
	return out
}

// tableList decodes v, an array of tables at path, with each: nil when v is
// not an array (a problem is recorded), else one element per table.
func tableList[T any](d *decoder, v any, path string, each func(t map[string]any, path string) T) []T {
	ts := d.tables(v, path)
	if ts == nil {
		return nil
	}
	out := make([]T, 0, len(ts))
	for i, t := range ts {
		out = append(out, each(t, d.index(path, i)))
	}
	return out
}

// keys yields the table's keys in a stable order. The keys of a table of
// up to 16 are sorted on the stack, not in a slice of their own.
func keys[V any](t map[string]V) iter.Seq[string] {
	return func(yield func(string) bool) {
		var buf [16]string
		out := buf[:0]
		for k := range t {
			out = append(out, k)
		}
		if len(out) > 1 {
			slices.Sort(out)
		}
		for _, k := range out {
			if !yield(k) {
				return
			}
		}
	}
}

func setExtra(extra *map[string]any, k string, v any) {
	if *extra == nil {
		*extra = map[string]any{}
	}
	(*extra)[k] = untyped(v)
}

// untyped returns v, kept where any value goes (an unknown key, `_meta`),
// with its TOML dates and times as the strings the wire form carries,
// converting it in place: the decoded tree is this decode's alone.
func untyped(v any) any {
	switch v := v.(type) {
	case dateTime:
		return string(v)
	case map[string]any:
		for k, e := range v {
			v[k] = untyped(e)
		}
	case []any:
		for i, e := range v {
			v[i] = untyped(e)
		}
	}
	return v
}

func (d *decoder) manifest(t map[string]any) *Manifest {
	m := &Manifest{}
	for k := range keys(t) {
		v, p := t[k], k
		switch k {
		case keyName:
			m.Name = d.str(v, p)
		case keyDependsOn:
			m.DependsOn = d.dependsOn(v, p)
		case keyPredicates:
			m.Predicates = d.strs(v, p)
		case keyDefaults:
			if tt := d.table(v, p); tt != nil {
				m.Defaults = d.defaults(tt, p)
			}
		case keyInstallations:
			m.Installations = tableList(d, v, p, func(t map[string]any, p string) Installation { return *d.installation(t, p) })
		case keyHooks:
			m.Hooks = tableList(d, v, p, d.hook)
		case keySkills:
			m.Skills = tableList(d, v, p, d.skillGroup)
		case keyMCPServers:
			m.MCPServers = tableList(d, v, p, d.mcpServer)
		case keySubcommand:
			tt := d.table(v, p)
			if tt != nil {
				m.Subcommand = make(map[string]Subcommand, len(tt))
			}
			for name := range keys(tt) {
				sp := d.join(p, name)
				if body := d.table(tt[name], sp); body != nil {
					m.Subcommand[name] = d.subcommand(body, sp)
				}
			}
		case keyPredicate:
			m.Predicate = tableList(d, v, p, d.predicateDef)
		case keyPlugins:
			m.Plugins = tableList(d, v, p, d.pluginRef)
		default:
			setExtra(&m.Extra, k, v)
		}
	}
	return m
}

func (d *decoder) defaults(t map[string]any, path string) *Defaults {
	df := &Defaults{}
	for k := range keys(t) {
		if k == keySkills {
			df.Skills = d.boolean(t[k], d.join(path, k))
			continue
		}
		setExtra(&df.Extra, k, t[k])
	}
	return df
}

func (d *decoder) installation(t map[string]any, path string) *Installation {
	in := &Installation{}
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyName:
			in.Name = d.str(v, p)
		case keySource:
			in.Source = d.str(v, p)
		case keyCrate:
			in.Crate = d.str(v, p)
		case keyVersion:
			in.Version = d.str(v, p)
		case keyGit:
			in.Git = d.str(v, p)
		case keyGlobal:
			in.Global = d.boolean(v, p)
		case keyURL:
			in.URL = d.str(v, p)
		case keyExecutable:
			in.Executable = d.str(v, p)
		case keyScript:
			in.Script = d.str(v, p)
		case keyArgs:
			in.Args = d.strs(v, p)
		case keyRequirements:
			in.Requirements = d.installRefs(v, p)
		case keyInstallCommands:
			in.InstallCommands = d.strs(v, p)
		default:
			setExtra(&in.Extra, k, v)
		}
	}
	return in
}

func (d *decoder) hook(t map[string]any, path string) Hook {
	var h Hook
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyName:
			h.Name = d.str(v, p)
		case keyEvent:
			h.Event = d.str(v, p)
		case keyAgent:
			h.Agent = d.str(v, p)
		case keyMatcher:
			h.Matcher = d.str(v, p)
		case keyCommand:
			h.Command = d.installRef(v, p)
		case keyExecutable:
			h.Executable = d.str(v, p)
		case keyScript:
			h.Script = d.str(v, p)
		case keyArgs:
			h.Args = d.strs(v, p)
		case keyRequirements:
			h.Requirements = d.installRefs(v, p)
		case keyFormat:
			h.Format = d.str(v, p)
		case keyPredicates:
			h.Predicates = d.strs(v, p)
		default:
			setExtra(&h.Extra, k, v)
		}
	}
	return h
}

func (d *decoder) skillGroup(t map[string]any, path string) SkillGroup {
	var g SkillGroup
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyDependsOn:
			g.DependsOn = d.dependsOn(v, p)
		case keyPredicates:
			g.Predicates = d.strs(v, p)
		case keySource:
			switch v := v.(type) {
			case string:
				g.Source = &SkillSource{Scalar: v}
			case map[string]any:
				src := &SkillSource{}
				for sk := range keys(v) {
					sv, sp := v[sk], d.join(p, sk)
					switch sk {
					case keyPath:
						src.Path, src.pathSet = d.str(sv, sp), true
					case keyGit:
						src.Git, src.gitSet = d.str(sv, sp), true
					default:
						setExtra(&src.Extra, sk, sv)
					}
				}
				g.Source = src
			default:
				d.wrongType(p, "a table with path or git", v)
			}
		default:
			setExtra(&g.Extra, k, v)
		}
	}
	return g
}

func (d *decoder) pluginRef(t map[string]any, path string) PluginRef {
	var r PluginRef
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyDependsOn:
			r.DependsOn = d.dependsOn(v, p)
		case keyPredicates:
			r.Predicates = d.strs(v, p)
		case keySource:
			st := d.table(v, p)
			if st == nil {
				continue
			}
			src := &PluginSource{}
			for sk := range keys(st) {
				sv := st[sk]
				switch sk {
				case keyCargo:
					src.Cargo = cargoRef(sv)
				case keyGit:
					src.Git = sv
				case keyPath:
					src.Path = sv
				default:
					setExtra(&src.Extra, sk, sv)
				}
			}
			r.Source = src
		default:
			setExtra(&r.Extra, k, v)
		}
	}
	return r
}

// cargoRef classifies a `source.cargo` value; it never fails (odd shapes
// are kept in Other for validation to reject with a hint).
func cargoRef(v any) *CargoRef {
	switch v := v.(type) {
	case string:
		return &CargoRef{Atom: v}
	case map[string]any:
		name, nameOK := v[keyName].(string)
		version, versionOK := v[keyVersion].(string)
		_, hasVersion := v[keyVersion]
		valid := nameOK && (!hasVersion || versionOK)
		for k := range v {
			if k != keyName && k != keyVersion {
				valid = false
			}
		}
		if valid {
			return &CargoRef{Name: name, Version: version}
		}
	}
	return &CargoRef{Other: v}
}

func (d *decoder) mcpServer(t map[string]any, path string) MCPServer {
	var s MCPServer
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyDependsOn:
			s.DependsOn = d.dependsOn(v, p)
		case keyPredicates:
			s.Predicates = d.strs(v, p)
		case keyType:
			s.Type = d.str(v, p)
		case keyName:
			s.Name = d.str(v, p)
		case keyCommand:
			s.Command = d.str(v, p)
		case keyArgs:
			s.Args = d.strs(v, p)
		case keyEnv:
			s.Env = d.nameValues(v, p)
		case keyURL:
			s.URL = d.str(v, p)
		case keyHeaders:
			s.Headers = d.nameValues(v, p)
		case keyMeta:
			s.Meta = untyped(v)
		default:
			setExtra(&s.Extra, k, v)
		}
	}
	return s
}

func (d *decoder) nameValues(v any, path string) []NameValue {
	ts := d.tables(v, path)
	if ts == nil {
		return nil
	}
	out := make([]NameValue, 0, len(ts))
	for i, t := range ts {
		var nv NameValue
		ip := d.index(path, i)
		for k := range keys(t) {
			v, p := t[k], d.join(ip, k)
			switch k {
			case keyName:
				nv.Name = d.str(v, p)
			case keyValue:
				nv.Value, nv.valueSet = d.str(v, p), true
			case keyMeta:
				nv.Meta = untyped(v)
			default:
				setExtra(&nv.Extra, k, v)
			}
		}
		out = append(out, nv)
	}
	return out
}

func (d *decoder) subcommand(t map[string]any, path string) Subcommand {
	var s Subcommand
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyDescription:
			s.Description = d.str(v, p)
		case keyAudience:
			s.Audience = d.str(v, p)
		case keyCommand:
			s.Command = d.installRef(v, p)
		case keyDependsOn:
			s.DependsOn = d.dependsOn(v, p)
		case keyPredicates:
			s.Predicates = d.strs(v, p)
		default:
			setExtra(&s.Extra, k, v)
		}
	}
	return s
}

func (d *decoder) predicateDef(t map[string]any, path string) PredicateDef {
	var pd PredicateDef
	for k := range keys(t) {
		v, p := t[k], d.join(path, k)
		switch k {
		case keyName:
			pd.Name = d.str(v, p)
		case keyCommand:
			pd.Command = d.installRef(v, p)
		case keyArgs:
			pd.Args = d.strs(v, p)
		default:
			setExtra(&pd.Extra, k, v)
		}
	}
	return pd
}

// normalizeTable returns a copy of t with every value normalized.
func normalizeTable(t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		if v == nil {
			continue // JSON null: absent
		}
		out[k] = normalize(v)
	}
	return out
}

// normalizeJSON normalizes, in place, a value encoding/json decoded with
// UseNumber (only maps, slices, strings, booleans, json.Number and nil),
// as normalize would: numbers become int64 or float64 and nulls in tables
// are dropped. It returns the value, which for a number is a new one.
func normalizeJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k) // JSON null: absent
				continue
			}
			v[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normalizeJSON(e)
		}
	case json.Number:
		return normalize(v)
	}
	return v
}

// normalize maps the values TOML decoders and encoding/json produce onto
// one set of Go types: string, bool, int64, float64, []any,
// map[string]any, and nil. TOML dates and times become their TOML text,
// as a dateTime.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return normalizeTable(v)
	case []map[string]any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalizeTable(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	case json.Number:
		return jsonNumber(string(v))
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	case toml.LocalDate:
		return dateTime(v.AsTime(time.UTC).Format(localDateLayout))
	case toml.LocalDateTime:
		return dateTime(v.AsTime(time.UTC).Format(localDateTimeLayout))
	case toml.LocalTime:
		return dateTime(time.Date(0, 1, 1, v.Hour, v.Minute, v.Second, v.Nanosecond, time.UTC).Format(localTimeLayout))
	case time.Time:
		return dateTime(v.Format(time.RFC3339Nano))
	}
	return v
}

// dateTime is a TOML date, time or date-time, in its TOML text. It is not a
// string: a key the schema types as a string refuses it, as Symposium's
// decoder does. Where any value goes (an unknown key kept, `_meta`), the
// wire form carries its text as a JSON string.
type dateTime string

// jsonNumber converts the text of a JSON number: to an int64 when it is an
// integer in range, else to a float64, else (out of float64's range, as
// 1e400) to the text itself.
func jsonNumber(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return f
}

// Layouts of TOML's local dates and times, with fractional seconds written
// only as far as they are nonzero.
const (
	localDateLayout     = "2006-01-02"
	localTimeLayout     = "15:04:05.999999999"
	localDateTimeLayout = localDateLayout + "T" + localTimeLayout
)

// typeName names the type of a normalized value in TOML/JSON words.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case dateTime:
		return "a date or time"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "a non-finite float"
		}
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "another kind of value"
}
