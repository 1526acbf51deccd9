// Package packagejson reads the parts of an npm package.json that a package
// manager needs: name, version, the four dependency maps, workspaces and the
// "symposium" plugin declaration, tolerating the field shapes found in the
// wild (a UTF-8 byte-order mark, polymorphic fields, duplicate keys). Its
// objects are read as JSON.parse reads them, as npm and Node do: names
// match exactly and a repeated name's last value wins.
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

// raw holds the members of package.json that are read, each as written
// (the last of a name given twice).
type raw struct {
	Name, Version                                                         json.RawMessage
	Dependencies, DevDependencies, OptionalDependencies, PeerDependencies json.RawMessage
	Workspaces, Symposium                                                 json.RawMessage
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
//
// Members are read with the object semantics of JSON.parse, which npm and
// Node read package.json with: a member is taken only under its exact name
// ("Name", "Dependencies" or "Workspaces" are other members than "name",
// "dependencies" and "workspaces", as is "Symposium"), escapes decoded,
// and a name given twice is its last value.
func ParseFile(path string, data []byte) (*Manifest, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if !jsonscan.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON") // jsonscan.Valid is json.Valid: not reached
		}
		return nil, jsonfile.Explain(path, data, err)
	}
	var r raw
	isObject := jsonscan.Members(data, func(k string, v json.RawMessage) {
		switch k {
		case "name":
			r.Name = v
		case "version":
			r.Version = v
		case string(Prod):
			r.Dependencies = v
		case string(Dev):
			r.DevDependencies = v
		case string(Optional):
			r.OptionalDependencies = v
		case string(Peer):
			r.PeerDependencies = v
		case "workspaces":
			r.Workspaces = v
		case "symposium":
			r.Symposium = v
		}
	})
	if !isObject && !bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		// Only the document as a whole can have the wrong type.
		return nil, &jsonfile.Error{File: path, Msg: "a package.json must be a JSON object", Err: json.Unmarshal(data, &struct{}{})}
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
	if len(r.Symposium) > 0 && !bytes.Equal(r.Symposium, []byte("null")) {
		m.Symposium = bytes.Clone(r.Symposium) // not a slice of data, which the caller may reuse
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

// workspaces decodes both workspace forms: ["a/*"] and {"packages": ["a/*"]}
// (its exact "packages", as npm's map-workspaces reads it).
func workspaces(r json.RawMessage) []string {
	if len(r) == 0 {
		return nil
	}
	list := r
	if r[0] == '{' {
		list = nil
		jsonscan.Members(r, func(k string, v json.RawMessage) {
			if k == "packages" {
				list = v
			}
		})
	}
	var out []string
	jsonscan.Elements(list, func(e json.RawMessage) bool {
		if s := str(e); s != "" {
			out = append(out, s)
		}
		return true
	})
	return out
}
