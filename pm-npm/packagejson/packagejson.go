// Package packagejson reads the parts of an npm package.json that a package
// manager needs: name, version, the four dependency maps, workspaces and the
// "symposium" plugin declaration, tolerating the field shapes found in the
// wild (a UTF-8 byte-order mark, polymorphic fields, duplicate keys).
package packagejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// Kind names one dependency map of package.json.
type Kind string

// The dependency kinds, in the order list_deps reads them.
const (
	Prod     Kind = "dependencies"
	Dev      Kind = "devDependencies"
	Optional Kind = "optionalDependencies"
	Peer     Kind = "peerDependencies"
)

// Kinds lists every dependency kind in reading order.
var Kinds = []Kind{Prod, Dev, Optional, Peer}

// Dep is one declared dependency: the key it is declared under and the spec
// string (a range, a tag, an alias or a non-registry location).
type Dep struct {
	Name string
	Spec string
	Kind Kind
}

// Manifest is the decoded subset of a package.json.
type Manifest struct {
	Name    string
	Version string
	// Deps lists the declared dependencies of every kind, sorted by kind
	// order then name. A name declared under several kinds appears once per
	// kind.
	Deps []Dep
	// Workspaces holds the workspace glob patterns, from either the array
	// form or the {"packages": [...]} object form.
	Workspaces []string
	// Symposium is the raw "symposium" member, or nil when absent.
	Symposium json.RawMessage
}

// raw mirrors package.json with every polymorphic field left raw.
type raw struct {
	Name                 json.RawMessage `json:"name"`
	Version              json.RawMessage `json:"version"`
	Dependencies         json.RawMessage `json:"dependencies"`
	DevDependencies      json.RawMessage `json:"devDependencies"`
	OptionalDependencies json.RawMessage `json:"optionalDependencies"`
	PeerDependencies     json.RawMessage `json:"peerDependencies"`
	Workspaces           json.RawMessage `json:"workspaces"`
	Symposium            json.RawMessage `json:"symposium"`
}

// ReadPackage reads and parses the package.json of the package unpacked
// or installed at dir, which may be hostile: it must be a regular file
// inside dir (no link out of it) of at most pkgfile.MaxManifest (1 MiB);
// an absent file wraps fs.ErrNotExist.
func ReadPackage(dir string) (*Manifest, error) {
	data, err := pkgfile.ReadFile(dir, "package.json", pkgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	return ParseFile(filepath.Join(dir, "package.json"), data)
}

// Read reads and parses the package.json at path (the workspace's own, or
// a workspace member's): a file the user owns, read as list_deps reads it
// (pkgfile.ReadUserFile), a regular file of at most pkgfile.MaxManifest
// bytes wherever a link leads.
func Read(path string) (*Manifest, error) {
	data, err := pkgfile.ReadUserFile(path, pkgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, data)
}

// Parse parses package.json content. It fails only when the document is not
// a JSON object; fields of an unexpected type are ignored, as npm does.
func Parse(data []byte) (*Manifest, error) {
	return ParseFile("package.json", data)
}

// ParseFile parses the content of the package.json at path; its errors
// name path, with the line and column of a syntax error.
func ParseFile(path string, data []byte) (*Manifest, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	var r raw
	if err := json.Unmarshal(data, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Only the document as a whole can have the wrong type.
			return nil, &jsonfile.Error{File: path, Msg: "a package.json must be a JSON object", Err: err}
		}
		return nil, jsonfile.Explain(path, data, err)
	}
	m := &Manifest{
		Name:    str(r.Name),
		Version: str(r.Version),
	}
	for _, k := range []struct {
		kind Kind
		raw  json.RawMessage
	}{{Prod, r.Dependencies}, {Dev, r.DevDependencies}, {Optional, r.OptionalDependencies}, {Peer, r.PeerDependencies}} {
		deps := strMap(k.raw)
		names := make([]string, 0, len(deps))
		for n := range deps {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			m.Deps = append(m.Deps, Dep{Name: n, Spec: deps[n], Kind: k.kind})
		}
	}
	m.Workspaces = workspaces(r.Workspaces)
	if len(r.Symposium) > 0 && !bytes.Equal(bytes.TrimSpace(r.Symposium), []byte("null")) {
		m.Symposium = r.Symposium
	}
	return m, nil
}

// str decodes a JSON string, or returns "" for any other value.
func str(r json.RawMessage) string {
	if len(r) == 0 {
		return ""
	}
	s, _ := jsonscan.DecodeString(r)
	return s
}

// strMap decodes an object of strings, keeping only the string members (npm
// ignores non-string specs too). Anything but an object yields nil.
func strMap(r json.RawMessage) map[string]string {
	// r is a member of a document json.Unmarshal has checked, as
	// jsonscan.Members requires. Of a name given twice the last value
	// counts, as decoding into a map keeps it; a null is "".
	out := map[string]string{}
	if !jsonscan.Members(r, func(k string, v json.RawMessage) {
		if s, ok := jsonscan.DecodeString(v); ok && k != "" {
			out[k] = s
		} else {
			delete(out, k)
		}
	}) {
		return nil
	}
	return out
}

// workspaces decodes both workspace forms: ["a/*"] and {"packages": ["a/*"]}.
func workspaces(r json.RawMessage) []string {
	if len(r) == 0 {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(r, &list) != nil {
		var obj struct {
			Packages []json.RawMessage `json:"packages"`
		}
		if json.Unmarshal(r, &obj) != nil {
			return nil
		}
		list = obj.Packages
	}
	var out []string
	for _, e := range list {
		if s := str(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}
