package npmpm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// warn logs something dropped or degraded and hands it to the host as a
// diagnostic of the request ctx belongs to (docs/protocol.md §4.7), so
// that the user sees it without debug logging.
func (p *PM) warn(ctx context.Context, d pmserver.Diagnostic, logMsg string, args ...any) {
	p.log.Warn(logMsg, args...)
	pmserver.Warn(ctx, d)
}

// pkgID is the id of an npm package for a diagnostic; version may be "".
func pkgID(name, version string) *protocol.PackageID {
	return &protocol.PackageID{PM: Name, Name: name, Version: cmp.Or(version, protocol.AnyVersion)}
}

// depTables are the package.json members holding dependencies.
var depTables = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}

// depTableProblems says which dependency members of the package.json data
// are not objects of name → version range, or hold entries that are not
// strings: npm ignores those, and so does list_deps, which must say so.
func depTableProblems(data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil // reported by the parser
	}
	var out []string
	for _, key := range depTables {
		raw, ok := top[key]
		if !ok || string(raw) == "null" {
			continue
		}
		var table map[string]json.RawMessage
		if json.Unmarshal(raw, &table) != nil {
			out = append(out, fmt.Sprintf("%q is %s, not an object of package names to version ranges; its entries are ignored (write it as {\"name\": \"^1.0.0\"})",
				key, jsonKind(raw)))
			continue
		}
		var bad []string
		for name, v := range table {
			var s string
			if json.Unmarshal(v, &s) != nil {
				bad = append(bad, fmt.Sprintf("%q (%s)", name, jsonKind(v)))
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			out = append(out, fmt.Sprintf("%q: the version ranges of %s are not strings; those entries are ignored",
				key, strings.Join(bad, ", ")))
		}
	}
	return out
}

// jsonKind names the kind of a JSON value, in the user's terms.
func jsonKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "empty"
	}
	switch s[0] {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// checkDepTables warns about the dependency members of the package.json at
// path (holding data) that list_deps has to ignore.
func (p *PM) checkDepTables(ctx context.Context, path string, data []byte) {
	for _, prob := range depTableProblems(data) {
		p.warn(ctx, pmserver.Diagnostic{Message: path + ": " + prob, File: path},
			"ignoring a dependency table", "path", path, "problem", prob)
	}
}
