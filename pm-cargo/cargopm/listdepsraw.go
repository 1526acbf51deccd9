package cargopm

import (
	"bytes"
	"context"
	"encoding/json"
)

// ListDepsRaw implements pmserver.RawDepLister: while the persisted
// snapshot's inputs are unchanged and it carries neither warnings nor an
// error (whose diagnostics only ListDeps repeats), list_deps is answered
// with the snapshot's dependencies encoded straight from their persisted
// lines, byte for byte as the harness would encode ListDeps' answer,
// without building the ids first. Anything else declines, and the harness
// calls ListDeps.
func (p *PM) ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error) {
	cache, key := p.snapshotCache()
	if cache == nil {
		return nil, false, nil
	}
	raw, ok := cache.Load(key)
	if !ok {
		return nil, false, nil
	}
	head, _, lines, ok := splitSnapshot(raw)
	if !ok || !bytes.Equal(head, foundHead) {
		return nil, false, nil
	}
	res, ok := depsJSON(lines)
	return res, ok, nil
}

// depsJSON encodes the dependency lines depcache.AppendDeps wrote as the
// JSON array of ids encoding/json makes of what depcache.ParseDeps reads
// from them under this PM's name. It reports false for lines ParseDeps
// refuses and for an empty version, which the harness refuses in an
// answer: ListDeps then answers, with the error it deserves.
func depsJSON(lines []byte) (json.RawMessage, bool) {
	out := make([]byte, 0, len(lines)+bytes.Count(lines, []byte{'\n'})*40+2)
	out = append(out, '[')
	for first := true; len(lines) > 0; first = false {
		var line []byte
		line, lines, _ = bytes.Cut(lines, []byte{'\n'})
		name, version, ok := bytes.Cut(line, []byte{' '})
		if !ok || len(name) == 0 || len(version) == 0 || bytes.IndexByte(name, '\r') >= 0 || bytes.ContainsAny(version, " \r") {
			return nil, false
		}
		if !first {
			out = append(out, ',')
		}
		out = append(out, `{"pm":"`+Name+`","name":`...)
		if out, ok = appendJSONString(out, name); !ok {
			return nil, false
		}
		out = append(out, `,"version":`...)
		if out, ok = appendJSONString(out, version); !ok {
			return nil, false
		}
		out = append(out, '}')
	}
	return append(out, ']'), true
}

// appendJSONString appends s as encoding/json encodes a string: quoted
// as it is when every byte is printable ASCII that needs no escape (every
// crate name and version), else through encoding/json itself. It reports
// false if encoding/json fails, which it does not for a string.
func appendJSONString(b, s []byte) ([]byte, bool) {
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, err := json.Marshal(string(s))
			return append(b, enc...), err == nil
		}
	}
	return append(append(append(b, '"'), s...), '"'), true
}
