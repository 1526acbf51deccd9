package tomlfile

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Check compares tree, a document decoded into map[string]any, with the
// Go value v it is meant to be decoded into (as toml.Unmarshal matches
// keys to fields: by tag, else by name ignoring case), and returns a
// problem for every value whose kind v cannot hold, in line order. Keys v
// has no field for are not problems. Values decoded by their own methods
// (encoding.TextUnmarshaler) are not checked.
func Check(file string, data []byte, tree map[string]any, v any) Errors {
	c := &checker{file: file, data: data}
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	c.value(tree, t, nil)
	c.errs.Sort()
	return c.errs
}

type checker struct {
	file string
	data []byte
	pos  *Positions // indexed on the first problem
	errs Errors
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

func (c *checker) fail(path []string, want string, v any) {
	p := append([]string{}, path...)
	if c.pos == nil {
		c.pos = Index(c.data)
	}
	e := At(c.file, c.pos, "expected "+want+", found "+ValueWords(v), p...)
	e.path = p
	c.errs = append(c.errs, e)
}

// DecodeTree decodes tree, the document data decoded into map[string]any,
// into v, leaving out every value of the wrong type, and returns a problem
// for each value left out, in line order: the rest of v is filled, so the
// caller can report its own problems with the same file alongside.
func DecodeTree(file string, data []byte, tree map[string]any, v any) Errors {
	errs := Check(file, data, tree, v)
	if len(errs) == 0 {
		if err := toml.Unmarshal(data, v); err != nil {
			return Errors{decodeError(file, err)}
		}
		return nil
	}
	for _, e := range errs {
		prune(tree, e.path)
	}
	b, err := toml.Marshal(tree)
	if err == nil {
		err = toml.Unmarshal(b, v)
	}
	if err != nil {
		errs = append(errs, decodeError(file, err))
	}
	return errs
}

// prune removes the value at path from tree: the key, or the whole array
// holding an item.
func prune(tree map[string]any, path []string) {
	var m map[string]any = tree
	for i, part := range path {
		v, ok := m[part]
		if !ok {
			return
		}
		if i == len(path)-1 {
			delete(m, part)
			return
		}
		switch v := v.(type) {
		case map[string]any:
			m = v
		default:
			delete(m, part) // an array: drop it whole
			return
		}
	}
}

// value checks v, found at path, against t.
func (c *checker) value(v any, t reflect.Type, path []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) || t == timeType ||
		t.PkgPath() == "github.com/pelletier/go-toml/v2" {
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		return
	case reflect.String:
		if _, ok := v.(string); !ok {
			c.fail(path, "a string", v)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			c.fail(path, "a boolean (true or false)", v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, ok := v.(int64); !ok {
			c.fail(path, "an integer", v)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if _, ok := v.(int64); !ok {
			c.fail(path, "a non-negative integer", v)
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
		default:
			c.fail(path, "a number", v)
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			c.fail(path, "an array", v)
			return
		}
		for i, e := range list {
			c.value(e, t.Elem(), append(path, strconv.Itoa(i)))
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			c.fail(path, "a table", v)
			return
		}
		for k, e := range m {
			c.value(e, t.Elem(), append(path, k))
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			c.fail(path, "a table", v)
			return
		}
		for k, e := range m {
			if ft, ok := fieldFor(t, k); ok {
				c.value(e, ft, append(path, k))
			}
		}
	}
}

// fieldFor returns the type of the field of struct t that key k decodes
// into: the field tagged k, else the field named k ignoring case,
// looking through embedded structs.
func fieldFor(t reflect.Type, k string) (reflect.Type, bool) {
	var byName reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if et, ok := fieldFor(ft, k); ok {
					return et, true
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == k {
			return f.Type, true
		}
		if name == "" {
			name = f.Name
		}
		if byName == nil && strings.EqualFold(name, k) {
			byName = f.Type
		}
	}
	return byName, byName != nil
}

// ValueWords names the kind of a value decoded into map[string]any, as
// TOML calls it: "a string", "an integer", "a table" …
func ValueWords(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	case toml.LocalDate:
		return "a date"
	case toml.LocalTime:
		return "a time"
	case toml.LocalDateTime:
		return "a local date-time"
	}
	return "another kind of value"
}
