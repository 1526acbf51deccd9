package pmserver

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// decodeActivePlugins decodes active_plugins params. Params written as
// hosts write them are read by scanDeps; any others are decoded by
// encoding/json (see decode), which scanDeps agrees with wherever it reads.
func decodeActivePlugins(raw json.RawMessage) (protocol.ActivePluginsParams, error) {
	if deps, ok := scanDeps(raw); ok {
		return protocol.ActivePluginsParams{Deps: deps}, nil
	}
	var p protocol.ActivePluginsParams
	err := decode(protocol.MethodActivePlugins, raw, &p)
	return p, err
}

// scanDeps reads active_plugins params of the one shape hosts send,
// {"deps":[{"pm":"…","name":"…","version":"…"},…]}: "deps" the only
// member, each dependency an object of at most those three members, each
// at most once, and every string free of escapes (whitespace between
// tokens is allowed). It reports false for anything else, and the caller
// then decodes the params with encoding/json. Where it reports true, its
// result is what encoding/json decodes, with every string a substring of
// one copy of raw: 2 allocations where encoding/json makes one per
// string, and no reflection (for 400 dependencies, about a fifth of the
// time).
func scanDeps(raw []byte) ([]protocol.PackageID, bool) {
	sc := depScanner{s: string(raw)}
	if !sc.byte('{') || sc.key() != "deps" || !sc.byte(':') || !sc.byte('[') {
		return nil, false
	}
	deps := make([]protocol.PackageID, 0, strings.Count(sc.s, "{")-1)
	if !sc.byte(']') {
		for {
			d, ok := sc.dep()
			if !ok {
				return nil, false
			}
			deps = append(deps, d)
			if sc.byte(']') {
				break
			}
			if !sc.byte(',') {
				return nil, false
			}
		}
	}
	if !sc.byte('}') || sc.skip() != len(sc.s) {
		return nil, false
	}
	return deps, true
}

// depScanner reads s from i on, for scanDeps.
type depScanner struct {
	s string
	i int
}

// skip moves past whitespace and returns the position reached.
func (sc *depScanner) skip() int {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return sc.i
		}
	}
	return sc.i
}

// byte moves past whitespace and then b, reporting whether b was there.
func (sc *depScanner) byte(b byte) bool {
	if sc.skip() < len(sc.s) && sc.s[sc.i] == b {
		sc.i++
		return true
	}
	return false
}

// str reads a string without escapes, reporting false for anything else.
func (sc *depScanner) str() (string, bool) {
	if !sc.byte('"') {
		return "", false
	}
	start, ascii := sc.i, true
	for ; sc.i < len(sc.s); sc.i++ {
		switch c := sc.s[sc.i]; {
		case c == '"':
			v := sc.s[start:sc.i]
			sc.i++
			return v, ascii || utf8.ValidString(v)
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// key reads a member name, returning "" for one str does not read (an
// empty name is not one scanDeps reads either).
func (sc *depScanner) key() string {
	k, ok := sc.str()
	if !ok {
		return ""
	}
	return k
}

// dep reads one dependency object.
func (sc *depScanner) dep() (protocol.PackageID, bool) {
	var d protocol.PackageID
	if !sc.byte('{') {
		return d, false
	}
	if sc.byte('}') {
		return d, true
	}
	var seen [3]bool
	for {
		k := sc.key()
		var field *string
		var n int
		switch k {
		case "pm":
			field, n = &d.PM, 0
		case "name":
			field, n = &d.Name, 1
		case "version":
			field, n = &d.Version, 2
		default:
			return d, false
		}
		if seen[n] || !sc.byte(':') {
			return d, false
		}
		seen[n] = true
		v, ok := sc.str()
		if !ok {
			return d, false
		}
		*field = v
		if sc.byte('}') {
			return d, true
		}
		if !sc.byte(',') {
			return d, false
		}
	}
}
