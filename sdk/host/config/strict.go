package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/suggest"
)

// shape is what a key of a config file holds.
type shape int

const (
	shapeBool shape = iota
	shapeString
	shapeInteger
	shapeTable  // [key]
	shapeTables // [[key]]
)

// field is one key a table of the config file may hold.
type field struct {
	name  string
	shape shape
	// enum lists the values a string may take (any when empty).
	enum []string
	// keys are the keys of a table or of each table of an array (nil: the
	// table is checked by its own decoder).
	keys []field
}

// topFields are the top-level keys of a config file: Symposium's own
// settings and this host's [[package-manager]].
func topFields() []field {
	return []field{
		{name: "auto-sync", shape: shapeBool},
		{name: "agents-syncing", shape: shapeBool},
		{name: "sync-debounce-secs", shape: shapeInteger},
		{name: "hook-scope", shape: shapeString, enum: []string{"global", "project"}},
		{name: "auto-update", shape: shapeString, enum: []string{"off", "warn", "on"}},
		{name: "telemetry", shape: shapeTable, keys: []field{{name: "enabled", shape: shapeBool}}},
		{name: "agent", shape: shapeTables, keys: []field{{name: "name", shape: shapeString}}},
		{name: "logging", shape: shapeTable, keys: []field{{name: "level", shape: shapeString}}},
		{name: "defaults", shape: shapeTable, keys: []field{{name: RecommendationsName, shape: shapeBool}, {name: UserPluginsName, shape: shapeBool}}},
		{name: "registry", shape: shapeTables},
		{name: "plugin-source", shape: shapeTables},
		{name: "package-manager", shape: shapeTables},
		{name: "plugins", shape: shapeTable},
	}
}

// pluginsKeys are the keys of [plugins].
var pluginsKeys = []string{"auto-enable", "disable", "use"}

// registryKeys are the keys of a [[registry]] entry.
var registryKeys = []string{"name", "git", "path", "ref", "subdir", "auto-update"}

// pmKeys are the keys of every [[package-manager]] entry; sourceKeys are
// those an entry with an installation source may add (which of them a given
// source takes is checked when the source is read).
var (
	pmKeys     = []string{"name", "command", "path", "args", "env", "kind", "source"}
	sourceKeys = []string{"module", "version", "crate", "git", "branch", "tag", "rev", "registry", "locked", "bin", "package"}
)

// header renders a top-level key as the user writes it.
func (f field) header() string {
	switch f.shape {
	case shapeTable:
		return "[" + f.name + "]"
	case shapeTables:
		return "[[" + f.name + "]]"
	}
	return f.name
}

// checkTop rejects unknown top-level keys (with a did-you-mean), keys of
// [plugins] written at the top level, and values of the wrong shape for
// the settings this package does not decode itself. bad holds the known
// keys whose value was refused, which are not to be decoded further.
func checkTop(tree map[string]any, at *positions) (errs []error, bad map[string]bool) {
	fields := topFields()
	bad = map[string]bool{}
	for _, k := range sortedKeys(tree, at) {
		v := tree[k]
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == k })
		if i < 0 {
			errs = append(errs, unknownTop(k, v, at.at(k), fields))
			continue
		}
		f := fields[i]
		if err := checkShape(f, v, at, []string{k}, f.header()); err != nil {
			errs = append(errs, err)
			bad[k] = true
		}
	}
	return errs, bad
}

func unknownTop(k string, v any, pos Pos, fields []field) error {
	if slices.Contains(pluginsKeys, k) {
		return &Error{pos, fmt.Sprintf("%s belongs in the [plugins] table: write it under a [plugins] header (a line of its own, before %s)", k, k)}
	}
	what := fmt.Sprintf("unknown key %q", k)
	switch v.(type) {
	case map[string]any:
		what = "unknown table [" + k + "]"
	case []any:
		if isTables(v) {
			what = "unknown table [[" + k + "]]"
		}
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	if s := suggest.Closest(k, names); s != "" {
		j := slices.Index(names, s)
		return &Error{pos, fmt.Sprintf("%s; did you mean %s?", what, fields[j].header())}
	}
	headers := make([]string, len(fields))
	for i, f := range fields {
		headers[i] = f.header()
	}
	return &Error{pos, fmt.Sprintf("%s (known: %s)", what, strings.Join(headers, ", "))}
}

func isTables(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, e := range list {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// checkShape checks v against f. Tables whose keys are listed are checked
// key by key; the others are left to their decoders.
func checkShape(f field, v any, at *positions, path []string, where string) error {
	pos := at.at(path...)
	switch f.shape {
	case shapeBool:
		if _, ok := v.(bool); !ok {
			return &Error{pos, fmt.Sprintf("%s must be true or false", where)}
		}
	case shapeInteger:
		if _, ok := v.(int64); !ok {
			return &Error{pos, fmt.Sprintf("%s must be a whole number", where)}
		}
	case shapeString:
		s, ok := v.(string)
		if !ok {
			return &Error{pos, fmt.Sprintf("%s must be a string", where)}
		}
		if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
			return &Error{pos, fmt.Sprintf("%s must be one of %s, not %q", where, quoteAll(f.enum), s)}
		}
	case shapeTable:
		t, ok := v.(map[string]any)
		if !ok {
			return &Error{pos, fmt.Sprintf("%s must be a table (%s)", f.name, f.header())}
		}
		if f.keys != nil {
			return checkKeys(t, f.keys, at, path, f.header())
		}
	case shapeTables:
		if !isTables(v) {
			if list, ok := v.([]any); !ok || len(list) > 0 {
				return &Error{pos, fmt.Sprintf("%s must be an array of tables (%s)", f.name, f.header())}
			}
		}
		if f.keys != nil {
			var errs []error
			for i, e := range v.([]any) {
				errs = append(errs, checkKeys(e.(map[string]any), f.keys, at, append(path, fmt.Sprint(i)), f.header()))
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// checkKeys checks the keys of table t, at path, against fields.
func checkKeys(t map[string]any, fields []field, at *positions, path []string, where string) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	var errs []error
	for _, k := range sortedKeys(t, at, path...) {
		i := slices.Index(names, k)
		kp := append(append([]string{}, path...), k)
		switch {
		case i < 0 && slices.Contains(pluginsKeys, k):
			errs = append(errs, &Error{at.at(kp...), fmt.Sprintf("%s belongs in the [plugins] table, not %s: put a [plugins] header on a line of its own before it", k, where)})
			continue
		case i < 0:
			errs = append(errs, &Error{at.at(kp...), unknownKey(where, k, names)})
			continue
		}
		if err := checkShape(fields[i], t[k], at, kp, where+" "+k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unknownKey says that table where has no key k, suggesting the closest
// of the valid keys, or listing them.
func unknownKey(where, k string, valid []string) string {
	if s := suggest.Closest(k, valid); s != "" {
		return fmt.Sprintf("%s has no key %q; did you mean %q? (keys: %s)", where, k, s, strings.Join(valid, ", "))
	}
	return fmt.Sprintf("%s has no key %q (keys: %s)", where, k, strings.Join(valid, ", "))
}

// sortedKeys returns the keys of t (the table at path) in the order they
// are written, so that problems are reported in line order.
func sortedKeys(t map[string]any, at *positions, path ...string) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	line := func(k string) int { return at.at(append(append([]string{}, path...), k)...).Line }
	sort.Slice(keys, func(i, j int) bool {
		return cmp.Or(cmp.Compare(line(keys[i]), line(keys[j])), strings.Compare(keys[i], keys[j])) < 0
	})
	return keys
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// UnknownPMs returns a warning for each [plugins] selector whose pm names
// no package manager: neither one of known (the built-in PMs and the pm of
// workspace plugins), nor a [[package-manager]], nor a registry. Such a
// selector matches nothing.
func (c *Config) UnknownPMs(known ...string) []*Error {
	names := slices.Clone(known)
	for _, pm := range c.PackageManagers {
		names = append(names, pm.Name)
	}
	for _, r := range c.Registries {
		names = append(names, r.Name)
	}
	var out []*Error
	for _, list := range []struct {
		key string
		sel []Selector
	}{{"disable", c.Plugins.Disable}, {"auto-enable", c.Plugins.AutoEnable}, {"use", c.Plugins.Use}} {
		for _, s := range list.sel {
			if s.PM == "" || slices.Contains(names, s.PM) {
				continue
			}
			msg := fmt.Sprintf("[plugins] %s names pm %q, which is no package manager or registry, so it matches nothing", list.key, s.PM)
			if near := suggest.Closest(s.PM, names); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			} else {
				msg += fmt.Sprintf(" (known: %s)", strings.Join(names, ", "))
			}
			out = append(out, &Error{s.Pos, msg})
		}
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(strings.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line))
	})
	return out
}
