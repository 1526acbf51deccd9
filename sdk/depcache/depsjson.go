package depcache

import (
	"bytes"
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
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
		out = jsonscan.AppendString(out, pm)
		out = append(out, `,"name":`...)
		out = jsonscan.AppendString(out, name)
		out = append(out, `,"version":`...)
		out = jsonscan.AppendString(out, version)
		out = append(out, '}')
	}
	return append(out, ']'), true
}
