package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
)

// The registry's documents are read with the object semantics of
// JSON.parse, which npm reads them with (npm-registry-fetch's res.json()):
// a member is taken only under its exact name ("Versions", "Dist-Tags",
// "Dist" or "Integrity" are other members than "versions", "dist-tags",
// "dist" and "integrity"), escapes decoded, and a repeated name's last
// value replaces the earlier one whole (a second "versions" or "dist" is
// not merged into the first, as encoding/json's struct decoding merges
// it). A member read that has another type than npm writes is an error,
// as it was.

// exactDecoder walks valid JSON objects member by member (jsonscan.Members)
// and decodes the members asked for; it keeps the first error.
type exactDecoder struct{ err error }

// object calls f with each member of the object raw, in order, the last
// of a repeated name last; a null is an object without members, anything
// else an error naming path.
func (d *exactDecoder) object(raw json.RawMessage, path string, f func(name string, v json.RawMessage)) {
	if d.err != nil || string(raw) == "null" {
		return
	}
	if !jsonscan.Members(raw, func(name string, v json.RawMessage) {
		if d.err == nil {
			f(name, v)
		}
	}) {
		d.err = fmt.Errorf("%s: expected an object, found %.20s", path, raw)
	}
}

// decodeMember sets *dst to the value raw, decoded by encoding/json from
// zero: a repeated member's last value replaces the earlier one, and a
// null is the zero value.
func decodeMember[T any](d *exactDecoder, raw json.RawMessage, dst *T, path string) {
	if d.err != nil {
		return
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		d.err = fmt.Errorf("%s: %w", path, err)
		return
	}
	*dst = v
}

// checkJSON reports whether data is one JSON value, as an error in
// encoding/json's words when it is not.
func checkJSON(data []byte) error {
	if jsonscan.Valid(data) {
		return nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON") // jsonscan.Valid is json.Valid: not reached
}

// decodePackument decodes a packument document, dropping null versions and
// taking each version from its key, canonical (CanonicalVersion).
func decodePackument(body []byte) (*Packument, error) {
	if err := checkJSON(body); err != nil {
		return nil, fmt.Errorf("invalid packument JSON: %w", err)
	}
	var d exactDecoder
	p := &Packument{}
	d.object(body, "packument", func(name string, v json.RawMessage) {
		switch name {
		case "name":
			decodeMember(&d, v, &p.Name, name)
		case "dist-tags":
			decodeMember(&d, v, &p.DistTags, name)
		case "description":
			decodeMember(&d, v, &p.Description, name)
		case "versions":
			p.Versions = nil
			if v[0] == '{' {
				p.Versions = map[string]*Version{}
			}
			d.object(v, name, func(ver string, m json.RawMessage) {
				if string(m) == "null" {
					delete(p.Versions, ver)
					return
				}
				path := "versions[" + ver + "]"
				if v := d.version(m, path); v != nil {
					// The key is the version, whatever the manifest says,
					// in its canonical form (" 1.0.0" is 1.0.0, as node-semver
					// reads it); a key that is no version stays as written,
					// for the caller to refuse.
					v.Version = ver
					if c, ok := CanonicalVersion(ver); ok {
						v.Version = c
					}
					p.Versions[ver] = v
				}
			})
		}
	})
	if d.err != nil {
		return nil, fmt.Errorf("invalid packument JSON: %w", d.err)
	}
	return p, nil
}

// version decodes one version's manifest, an object.
func (d *exactDecoder) version(raw json.RawMessage, path string) *Version {
	if raw[0] != '{' {
		d.err = fmt.Errorf("%s: expected an object, found %.20s", path, raw)
		return nil
	}
	v := &Version{}
	d.object(raw, path, func(name string, m json.RawMessage) {
		switch name {
		case "name":
			decodeMember(d, m, &v.Name, path+".name")
		case "version":
			decodeMember(d, m, &v.Version, path+".version")
		case "description":
			decodeMember(d, m, &v.Description, path+".description")
		case "deprecated":
			v.Deprecated = bytes.Clone(m) // not a slice of the document
		case "dist":
			v.Dist = Dist{}
			d.object(m, path+".dist", func(name string, f json.RawMessage) {
				switch name {
				case "tarball":
					decodeMember(d, f, &v.Dist.Tarball, path+".dist.tarball")
				case "shasum":
					decodeMember(d, f, &v.Dist.Shasum, path+".dist.shasum")
				case "integrity":
					decodeMember(d, f, &v.Dist.Integrity, path+".dist.integrity")
				}
			})
		}
	})
	return v
}

// decodeSearch decodes the hits of a /-/v1/search answer, doc (one JSON
// value): each of "objects" names its "package", whose name, version and
// description are the hit; a hit without a name is left out.
func decodeSearch(doc json.RawMessage) ([]SearchResult, error) {
	var d exactDecoder
	var objects json.RawMessage
	d.object(doc, "search", func(name string, v json.RawMessage) {
		if name == "objects" {
			objects = v
		}
	})
	out := []SearchResult{}
	if d.err != nil || len(objects) == 0 || string(objects) == "null" {
		return out, d.err
	}
	isArray := jsonscan.Elements(objects, func(o json.RawMessage) bool {
		var r SearchResult
		d.object(o, "objects[]", func(name string, v json.RawMessage) {
			if name == "package" {
				r = SearchResult{}
				d.object(v, "objects[].package", func(name string, f json.RawMessage) {
					switch name {
					case "name":
						decodeMember(&d, f, &r.Name, "objects[].package.name")
					case "version":
						decodeMember(&d, f, &r.Version, "objects[].package.version")
					case "description":
						decodeMember(&d, f, &r.Description, "objects[].package.description")
					}
				})
			}
		})
		if r.Name != "" {
			out = append(out, r)
		}
		return d.err == nil
	})
	if d.err != nil {
		return nil, d.err
	}
	if !isArray {
		return nil, fmt.Errorf("objects: expected an array, found %.20s", objects)
	}
	return out, nil
}
