package depcache

import (
	"bytes"
	"encoding/json"
)

// DepsJSON encodes dependency lines AppendDeps wrote as the JSON array of
// ids encoding/json makes of what ParseDeps reads from them under pm's
// name, without building the ids: a PM that persisted its list_deps answer
// as lines serves it pre-encoded (pmserver.RawDepLister) from them. It
// reports false for lines ParseDeps refuses and for an empty version,
// which the harness refuses in an answer: the PM then answers the usual
// way, with the error it deserves.
func DepsJSON(lines []byte, pm string) (json.RawMessage, bool) {
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
		out = append(out, `{"pm":`...)
		if out, ok = appendJSONString(out, []byte(pm)); !ok {
			return nil, false
		}
		out = append(out, `,"name":`...)
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
