package migrate

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/symposium-dev/symposium-pm/sdk/internal/tomlstr"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/predicate"
)

// keyPart is one part of a (possibly dotted) key, with its raw range.
type keyPart struct {
	name       string
	start, end int
}

// value is what the rewriter needs of a TOML value: strings with their raw
// range, arrays with their elements.
type value struct {
	kind       unstable.Kind
	start, end int // raw range, strings only
	elems      []value
}

// entry is one key = value, at the top level, under a header or inside an
// inline table.
type entry struct {
	table      []string // resolved path of the enclosing table; "#N" for array elements
	key        []keyPart
	start, end int // the whole key = value
	inline     bool
	val        value
}

func (e entry) path() []string {
	p := slices.Clone(e.table)
	for _, k := range e.key {
		p = append(p, k.name)
	}
	return p
}

// header is a [table] or [[array.table]] line.
type header struct {
	array bool
	path  []string // resolved
	key   []keyPart
	start int // the start of its line
}

type document struct {
	src     []byte
	entries []entry
	headers []header
}

// match reports whether p matches pattern, where "#" matches any array
// index and "*" any one segment.
func match(p []string, pattern ...string) bool {
	if len(p) != len(pattern) {
		return false
	}
	for i, s := range pattern {
		switch s {
		case "*":
		case "#":
			if !strings.HasPrefix(p[i], "#") {
				return false
			}
		default:
			if p[i] != s {
				return false
			}
		}
	}
	return true
}

func hasPrefix(p, prefix []string) bool {
	return len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix)
}

func scan(src []byte) (*document, error) {
	d := &document{src: src}
	var p unstable.Parser
	p.Reset(src)
	counts := map[string]int{}
	resolve := func(parts []string) []string {
		var out []string
		for _, s := range parts {
			out = append(out, s)
			if c, ok := counts[strings.Join(out, "\x00")]; ok {
				out = append(out, "#"+strconv.Itoa(c-1))
			}
		}
		return out
	}
	var cur []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys := keyParts(&p, n.Key())
			names := make([]string, len(keys))
			for i, k := range keys {
				names[i] = k.name
			}
			h := header{array: n.Kind == unstable.ArrayTable, key: keys}
			if len(keys) > 0 {
				h.start = lineStart(src, keys[0].start)
			}
			if h.array {
				base := resolve(names[:len(names)-1])
				base = append(base, names[len(names)-1])
				id := strings.Join(base, "\x00")
				counts[id]++
				h.path = append(base, "#"+strconv.Itoa(counts[id]-1))
			} else {
				h.path = resolve(names)
			}
			cur = h.path
			d.headers = append(d.headers, h)
		case unstable.KeyValue:
			d.keyValue(&p, n, cur, false)
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return d, nil
}

func keyParts(p *unstable.Parser, it unstable.Iterator) []keyPart {
	var out []keyPart
	for it.Next() {
		k := it.Node()
		out = append(out, keyPart{name: string(k.Data), start: int(k.Raw.Offset), end: int(k.Raw.Offset + k.Raw.Length)})
	}
	return out
}

func (d *document) keyValue(p *unstable.Parser, n *unstable.Node, table []string, inline bool) {
	e := entry{table: table, key: keyParts(p, n.Key()), start: int(n.Raw.Offset), end: int(n.Raw.Offset + n.Raw.Length), inline: inline}
	full := e.path()
	e.val = d.value(p, n.Value(), full)
	if !inline || n.Raw.Length > 0 {
		d.entries = append(d.entries, e)
		return
	}
	// Key-values inside inline tables carry no range of their own: span
	// them from the first key to the end of the value.
	if len(e.key) > 0 {
		e.start = e.key[0].start
		e.end = e.key[len(e.key)-1].end
	}
	d.entries = append(d.entries, e)
}

func (d *document) value(p *unstable.Parser, n *unstable.Node, at []string) value {
	v := value{kind: n.Kind}
	switch n.Kind {
	case unstable.String:
		v.start, v.end = int(n.Raw.Offset), int(n.Raw.Offset+n.Raw.Length)
	case unstable.Array:
		i := 0
		for c := n.Child(); c != nil; c = c.Next() {
			if c.Kind == unstable.Comment {
				continue
			}
			v.elems = append(v.elems, d.value(p, c, append(slices.Clone(at), "#"+strconv.Itoa(i))))
			i++
		}
	case unstable.InlineTable:
		for c := n.Child(); c != nil; c = c.Next() {
			if c.Kind == unstable.KeyValue {
				d.keyValue(p, c, at, true)
			}
		}
	}
	return v
}

// has reports whether the document defines anything at p or below it.
func (d *document) has(p []string) bool {
	for _, e := range d.entries {
		if hasPrefix(e.path(), p) {
			return true
		}
	}
	for _, h := range d.headers {
		if hasPrefix(h.path, p) {
			return true
		}
	}
	return false
}

// TOML rewrites the retired keys of a plugin manifest (a SYMPOSIUM.toml) to
// the current schema and returns the new text with the changes made. A
// document with nothing retired comes back unchanged with no changes. A
// retired form without a mechanical translation, or text that is not TOML,
// gives a *RefusedError.
func TOML(src []byte) ([]byte, []Change, error) {
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, nil, &RefusedError{Line: line, Invalid: true, Reason: "not valid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, nil, &RefusedError{Invalid: true, Reason: "not valid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	d, err := scan(src)
	if err != nil {
		return nil, nil, &RefusedError{Invalid: true, Reason: "not valid TOML: " + err.Error()}
	}
	r := &rewriter{d: d, doc: doc, nl: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		r.nl = "\r\n"
	}
	r.run()
	if len(r.refused) > 0 {
		slices.SortStableFunc(r.refused, func(a, b *RefusedError) int { return a.Line - b.Line })
		return nil, nil, r.refused[0]
	}
	var edits []edit
	for _, e := range r.edits {
		inside := false
		for _, s := range r.replaced {
			if e.start >= s.start && e.start < s.end && e != s {
				inside = true
			}
		}
		if !inside {
			edits = append(edits, e)
		}
	}
	out, changes, err := apply(src, edits)
	if err != nil {
		return nil, nil, err
	}
	var check map[string]any
	if err := toml.Unmarshal(out, &check); err != nil {
		return nil, nil, &RefusedError{Reason: "internal error: the rewritten file would not parse (" + err.Error() + "); please report this file"}
	}
	return out, changes, nil
}

type rewriter struct {
	nl       string // the file's line ending
	d        *document
	doc      map[string]any
	edits    []edit
	replaced []edit // whole skill groups replaced; other edits inside them are dropped
	refused  []*RefusedError
}

func (r *rewriter) refuse(off int, format string, args ...any) {
	r.refused = append(r.refused, refuse(r.d.src, off, format, args...))
}

func (r *rewriter) run() {
	d := r.d
	r.where()
	for _, e := range d.entries {
		p := e.path()
		last := e.key[len(e.key)-1]
		switch {
		case match(p, manifest.KeyRetiredCrates), match(p, manifest.KeySkills, "#", manifest.KeyRetiredCrates), match(p, manifest.KeyMCPServers, "#", manifest.KeyRetiredCrates), match(p, manifest.KeySubcommand, "*", manifest.KeyRetiredCrates):
			if last.name != manifest.KeyRetiredCrates {
				continue // written as part of a table path, e.g. skills = [{ crates = ... }] is matched by its own entry
			}
			if d.has(append(slices.Clone(p[:len(p)-1]), manifest.KeyDependsOn)) {
				r.refuse(e.start, "%s sets both crates and depends-on; merge the crates into depends-on by hand", tableName(p[:len(p)-1]))
				continue
			}
			r.edits = append(r.edits, edit{last.start, last.end, manifest.KeyDependsOn})
		case match(p, manifest.KeyPlugins, "#", manifest.KeySource, manifest.KeyCrate):
			if d.has(append(slices.Clone(p[:len(p)-1]), manifest.KeyCargo)) {
				r.refuse(e.start, "%s sets both source.crate and source.cargo; keep one by hand", tableName(p[:2]))
				continue
			}
			r.edits = append(r.edits, edit{last.start, last.end, manifest.KeyCargo})
		case match(p, manifest.KeySkills, "#", manifest.KeyPath):
			if d.has(append(slices.Clone(p[:len(p)-1]), manifest.KeySource)) {
				r.refuse(e.start, "%s sets both path and source; keep one by hand", tableName(p[:2]))
				continue
			}
			r.edits = append(r.edits, edit{last.start, last.end, manifest.KeySource + "." + manifest.KeyPath})
		case isPredicates(p):
			r.crateCalls(e.val)
		}
	}
	skills, _ := r.doc[manifest.KeySkills].([]any)
	for i, g := range skills {
		if t, ok := g.(map[string]any); ok {
			r.group(i, t)
		}
	}
}

func isPredicates(p []string) bool {
	return match(p, manifest.KeyPredicates) || match(p, "*", "#", manifest.KeyPredicates) || match(p, manifest.KeySubcommand, "*", manifest.KeyPredicates)
}

func (r *rewriter) crateCalls(v value) {
	if v.kind == unstable.String {
		r.edits = append(r.edits, renameCrateCalls(string(r.d.src[v.start:v.end]), v.start)...)
	}
	for _, el := range v.elems {
		r.crateCalls(el)
	}
}

// tableName names a table path the way validate does: skills[0].
func tableName(p []string) string {
	var b strings.Builder
	for _, s := range p {
		if strings.HasPrefix(s, "#") {
			b.WriteString("[" + s[1:] + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	if b.Len() == 0 {
		return "the manifest"
	}
	return b.String()
}

// gateAtoms returns the atoms of a crates or depends-on value of table t.
func gateAtoms(t map[string]any) (atoms []string, key string, ok bool) {
	for _, k := range []string{manifest.KeyDependsOn, manifest.KeyRetiredCrates} {
		v, present := t[k]
		if !present {
			continue
		}
		switch v := v.(type) {
		case string:
			return []string{v}, k, true
		case []any:
			for _, x := range v {
				s, isStr := x.(string)
				if !isStr {
					return nil, k, false
				}
				atoms = append(atoms, s)
			}
			return atoms, k, true
		default:
			return nil, k, false
		}
	}
	return nil, "", true
}

// group migrates skills group i when its source is a crate: the group
// becomes chained plugin references ([[plugins]] source.cargo), one per
// crate its gate names, as the migration hint says.
func (r *rewriter) group(i int, t map[string]any) {
	d := r.d
	gp := []string{manifest.KeySkills, "#" + strconv.Itoa(i)}
	name := tableName(gp)
	src, has := t[manifest.KeySource]
	if !has {
		return
	}
	var first entry
	var sources []entry
	for _, e := range d.entries {
		if !hasPrefix(e.path(), gp) {
			continue
		}
		if first.key == nil {
			first = e
		}
		if slices.Equal(e.table, gp) && !e.inline && e.key[0].name == manifest.KeySource {
			sources = append(sources, e)
		}
	}
	off := first.start
	for _, h := range d.headers {
		if slices.Equal(h.path, gp) {
			off = h.start
		}
	}
	switch s := src.(type) {
	case string:
		if s != manifest.KeyCrate {
			r.refuse(off, "%s: source = %q is not a form any version of Symposium read; set source.path or source.git", name, s)
			return
		}
	case map[string]any:
		if _, ok := s[manifest.KeyCrate]; ok {
			r.refuse(off, "%s: source.crate has no mechanical translation; reference the crate's plugin with [[plugins]] source.cargo = \"NAME\"", name)
			return
		}
		cp, ok := s[manifest.KeyRetiredCratePath]
		if !ok {
			return
		}
		if len(s) > 1 {
			r.refuse(off, "%s: source.crate_path is set with other source keys; keep one source by hand", name)
			return
		}
		str, isStr := cp.(string)
		if !isStr {
			r.refuse(off, "%s: source.crate_path must be a string", name)
			return
		}
		if c := path.Clean(strings.ReplaceAll(str, "\\", "/")); c != manifest.KeySkills {
			r.refuse(off, "%s: source.crate_path = %q has no mechanical translation: a crate's plugin ([[plugins]] source.cargo) reads its skills from skills/ or from what the crate itself declares ([package.metadata.symposium] [[skills]] source.path = %q); ask the crate to declare it, or copy the skills into the registry and use source.path", name, str, str)
			return
		}
	default:
		return
	}

	// Where the group is written.
	var hdr *header
	for j := range d.headers {
		if slices.Equal(d.headers[j].path, gp) && d.headers[j].array {
			hdr = &d.headers[j]
		}
	}
	if hdr == nil {
		r.refuse(off, "%s is written inline; write it as a [[skills]] table to migrate it", name)
		return
	}
	if len(hdr.key) != 1 {
		r.refuse(off, "%s: unexpected table header", name)
		return
	}
	for _, h := range d.headers {
		if len(h.path) > len(gp) && hasPrefix(h.path, gp) {
			r.refuse(h.start, "%s is continued by a sub-table header; write its keys under [[skills]] to migrate it", name)
			return
		}
	}
	var own []entry
	for _, e := range d.entries {
		if slices.Equal(e.table, gp) && !e.inline {
			own = append(own, e)
		}
	}
	if len(sources) != 1 {
		r.refuse(off, "%s: source is split over several keys; write it on one line to migrate it", name)
		return
	}
	source := sources[0]

	// The crates to fetch: the group's gate atoms, then the plugin's.
	groupAtoms, gk, ok := gateAtoms(t)
	if !ok {
		r.refuse(off, "%s: %s must be a string or an array of strings", name, gk)
		return
	}
	plugAtoms, pk, ok := gateAtoms(r.doc)
	if !ok {
		r.refuse(0, "%s must be a string or an array of strings", pk)
		return
	}
	type fetch struct {
		atom, crate string
		fromGroup   bool
	}
	var fetches []fetch
	groupWild := false
	var groupNamed []string
	seen := map[string]bool{}
	for gi, list := range [][]string{groupAtoms, plugAtoms} {
		for _, s := range list {
			a, err := predicate.ParseAtom(s)
			if err != nil {
				r.refuse(off, "%s: %q is not a dependency atom: %v", name, s, err)
				return
			}
			if a.Name == "*" {
				groupWild = groupWild || gi == 0
				continue
			}
			if gi == 0 {
				groupNamed = append(groupNamed, strings.TrimSpace(s))
			}
			if seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			fetches = append(fetches, fetch{atom: strings.TrimSpace(s), crate: a.Name, fromGroup: gi == 0})
		}
	}
	if len(fetches) == 0 {
		r.refuse(off, "%s takes its skills from the crates the plugin depends on, but neither the group nor the plugin names a crate (depends-on/crates); name the crate with [[plugins]] source.cargo = \"NAME\" by hand", name)
		return
	}

	// One crate, already required by the gate in force: relabel the group
	// in place.
	implied := len(fetches) == 1 && ((len(groupAtoms) == 1 && fetches[0].fromGroup) || (len(groupAtoms) == 0 && len(plugAtoms) == 1))
	if implied {
		k := hdr.key[0]
		r.edits = append(r.edits, edit{k.start, k.end, manifest.KeyPlugins})
		r.edits = append(r.edits, edit{source.start, source.end, manifest.KeySource + "." + manifest.KeyCargo + " = " + quote(fetches[0].crate)})
		return
	}

	// Several crates: one reference per crate, each gated on its crate.
	var preds []string
	for _, e := range own {
		switch e.key[0].name {
		case manifest.KeyRetiredCrates, manifest.KeyDependsOn, manifest.KeySource:
		case manifest.KeyPredicates:
			if e.val.kind != unstable.Array || len(e.key) != 1 {
				r.refuse(e.start, "%s: predicates must be an array of strings", name)
				return
			}
			for _, el := range e.val.elems {
				if el.kind != unstable.String {
					r.refuse(e.start, "%s: predicates must be an array of strings", name)
					return
				}
				txt := string(d.src[el.start:el.end])
				out, _, _ := apply([]byte(txt), renameCrateCalls(txt, 0))
				preds = append(preds, string(out))
			}
		default:
			r.refuse(e.start, "%s has the key %q, which a skills group does not take; remove it before migrating", name, e.key[0].name)
			return
		}
	}
	var b strings.Builder
	start := hdr.start
	end := lineEnd(d.src, hdr.key[0].end)
	for _, e := range own {
		end = max(end, lineEnd(d.src, e.end))
	}
	for end > start && d.src[end-1] == '\r' {
		end--
	}
	// Keep the group's comment lines, above the references.
	for _, line := range strings.Split(string(d.src[start:end]), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
			b.WriteString(strings.TrimRight(line, "\r") + r.nl)
		}
	}
	for j, f := range fetches {
		if j > 0 {
			b.WriteString(r.nl)
		}
		b.WriteString("[[plugins]]" + r.nl)
		b.WriteString("depends-on = " + quote(f.atom) + r.nl)
		ps := preds
		if !f.fromGroup && len(groupNamed) > 0 && !groupWild {
			// The group's own gate still has to hold.
			g := make([]string, len(groupNamed))
			for k, a := range groupNamed {
				g[k] = "depends-on(" + a + ")"
			}
			call := g[0]
			if len(g) > 1 {
				call = "any(" + strings.Join(g, ", ") + ")"
			}
			ps = append([]string{quote(call)}, preds...)
		}
		if len(ps) > 0 {
			b.WriteString("predicates = [" + strings.Join(ps, ", ") + "]" + r.nl)
		}
		b.WriteString(manifest.KeySource + "." + manifest.KeyCargo + " = " + quote(f.crate))
		if j < len(fetches)-1 {
			b.WriteString(r.nl)
		}
	}
	e := edit{start, end, b.String()}
	r.edits = append(r.edits, e)
	r.replaced = append(r.replaced, e)
}

// quote writes s as a TOML basic string (tomlstr.Quote).
func quote(s string) string { return tomlstr.Quote(s) }

// where migrates the retired top-level [where] table: where.crates becomes
// the plugin's depends-on. Any other condition in it has no known
// translation and is refused.
func (r *rewriter) where() {
	d := r.d
	w, ok := r.doc[manifest.KeyRetiredWhere]
	if !ok {
		return
	}
	var entries []entry
	for _, e := range d.entries {
		if p := e.path(); len(p) > 0 && p[0] == manifest.KeyRetiredWhere && !e.inline {
			entries = append(entries, e)
		}
	}
	var hdrs []header
	for _, h := range d.headers {
		if len(h.path) > 0 && h.path[0] == manifest.KeyRetiredWhere {
			hdrs = append(hdrs, h)
		}
	}
	off := 0
	if len(hdrs) > 0 {
		off = hdrs[0].start
	} else if len(entries) > 0 {
		off = entries[0].start
	}
	t, ok := w.(map[string]any)
	if !ok {
		r.refuse(off, "where must be a table")
		return
	}
	for k := range t {
		if k != manifest.KeyRetiredCrates {
			r.refuse(off, "the retired [where] table holds %q, which has no mechanical translation: write it as a predicate in predicates by hand, and where.crates as depends-on", k)
			return
		}
	}
	if _, ok := t[manifest.KeyRetiredCrates]; !ok || len(entries) != 1 || len(hdrs) > 1 {
		r.refuse(off, "the retired [where] table is empty or split; remove it by hand (gate the plugin with depends-on and predicates)")
		return
	}
	if _, ok := r.doc[manifest.KeyDependsOn]; ok {
		r.refuse(off, "the manifest sets both where.crates and depends-on; merge the crates into depends-on by hand")
		return
	}
	if _, ok := r.doc[manifest.KeyRetiredCrates]; ok {
		r.refuse(off, "the manifest sets both where.crates and crates; merge them into depends-on by hand")
		return
	}
	e := entries[0]
	switch {
	case len(hdrs) == 0 && len(e.table) == 0 && len(e.key) == 2:
		// where.crates = [...] at the top level
		r.edits = append(r.edits, edit{e.key[0].start, e.key[1].end, manifest.KeyDependsOn})
	case len(hdrs) == 0:
		r.refuse(off, "where = { crates = ... } is written inline; write depends-on = ... by hand")
	case len(e.table) == 1 && len(e.key) == 1:
		// [where] crates = [...]: the key moves to the top level, after the
		// last top-level key (or before the first table).
		h := hdrs[0]
		if h.start == d.headers[0].start {
			// The first table: the key takes the header's place.
			r.edits = append(r.edits, wholeLines(d.src, h.start, h.key[len(h.key)-1].end))
			r.edits = append(r.edits, edit{e.key[0].start, e.key[0].end, manifest.KeyDependsOn})
			return
		}
		val := strings.TrimSpace(string(d.src[e.key[0].end:e.end]))
		val = strings.TrimSpace(strings.TrimPrefix(val, "="))
		if rest := strings.TrimSpace(string(d.src[e.end:lineEnd(d.src, e.end)])); strings.HasPrefix(rest, "#") {
			val += " " + rest // keep the line's comment
		}
		at := -1
		for _, x := range d.entries {
			if len(x.table) == 0 && !x.inline {
				at = lineEnd(d.src, x.end)
			}
		}
		ins := "depends-on = " + val + r.nl
		if at < 0 {
			at = d.headers[0].start
		} else if at < len(d.src) {
			at++ // after the newline
		} else {
			ins = r.nl + strings.TrimSuffix(ins, r.nl)
		}
		r.edits = append(r.edits, edit{at, at, ins})
		r.edits = append(r.edits, wholeLines(d.src, h.start, h.key[len(h.key)-1].end))
		r.edits = append(r.edits, wholeLines(d.src, e.start, e.end))
	default:
		r.refuse(off, "the retired [where] table is written in a form migrate does not know; write depends-on by hand")
	}
}

// wholeLines is an edit deleting the lines from the one holding start to the
// one holding end, with the newline ending them.
func wholeLines(src []byte, start, end int) edit {
	s, e := lineStart(src, start), lineEnd(src, end)
	if e < len(src) {
		e++
	}
	return edit{s, e, ""}
}
