// Package framing reads newline-delimited JSON-RPC messages with a bound on
// their size, and finds the routing part (id, method) of a message without
// trusting it to be complete. Both ends of the PM protocol use it: the PM
// harness in pmserver and the process manager in host. To check or walk
// the JSON of a large answer without decoding it, see package jsonscan.
package framing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
)

// DefaultMaxMessage is the default bound on one message: 64 MiB.
const DefaultMaxMessage = 64 << 20

// headSize is how much of an oversize message is kept for diagnostics.
const headSize = 512

// TooLongError reports a line longer than the reader's bound. The line was
// consumed and discarded; Head holds its first bytes.
type TooLongError struct {
	Size int64 // bytes in the message, without its line terminator (LF or CR LF)
	Max  int
	Head []byte
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Max)
}

// ID returns the JSON-RPC id found in the head of the message, or nil.
func (e *TooLongError) ID() json.RawMessage { return FindID(e.Head) }

// Reader reads newline-terminated messages of at most Max bytes.
type Reader struct {
	br           *bufio.Reader
	max          int
	unterminated bool
}

// Unterminated reports whether the last line Next returned was cut short by
// the end of input rather than ended by a newline: from a peer that died in
// the middle of a message, or a final request typed without a newline.
func (r *Reader) Unterminated() bool { return r.unterminated }

// NewReader returns a Reader on r that refuses lines longer than max bytes
// (DefaultMaxMessage when max <= 0).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line, without its line terminator, in a
// fresh slice. A final line without a newline is returned before io.EOF. A
// line longer than the bound is discarded and reported as *TooLongError;
// reading may continue after it.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

func (r *Reader) line() ([]byte, error) {
	r.unterminated = false
	var buf []byte
	var size int64 // bytes of the line read so far, without its final LF
	var head []byte
	tooLong := false
	lastCR := false // the last byte read is a CR
	for {
		chunk, err := r.br.ReadSlice('\n')
		terminated := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if terminated {
			chunk, err = chunk[:len(chunk)-1], nil
		}
		if len(chunk) > 0 {
			size += int64(len(chunk))
			lastCR = chunk[len(chunk)-1] == '\r'
		}
		// Hold at most max+1 bytes: a message of max bytes and the CR of
		// its CR LF ending, which is not known to be one until the LF.
		if !tooLong && size > int64(r.max)+1 {
			tooLong, head = true, keepHead(buf, chunk)
			buf = nil
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && err != io.EOF:
			return nil, err
		case !terminated && size == 0:
			return nil, io.EOF
		}
		// The line ended, with a LF or at the end of input. The limit is on
		// the message, without its line terminator (docs/protocol.md §2.2):
		// the CR of a CR LF ending does not count.
		msgSize := size
		if lastCR {
			msgSize--
		}
		if tooLong || msgSize > int64(r.max) {
			if !tooLong {
				head = keepHead(buf, nil)
			}
			return nil, &TooLongError{Size: msgSize, Max: r.max, Head: head}
		}
		r.unterminated = !terminated
		return buf, nil
	}
}

func keepHead(buf, chunk []byte) []byte {
	h := make([]byte, 0, headSize)
	h = append(h, buf[:min(len(buf), headSize)]...)
	if n := headSize - len(h); n > 0 {
		h = append(h, chunk[:min(len(chunk), n)]...)
	}
	return h
}

// FindID returns the raw JSON-RPC id of msg, a message that may be cut
// short (the head of a line over the size limit): the value of msg's
// top-level "id" member when it is found within the first 512 bytes and is
// a whole JSON string or number, "null" when it is null, and nil otherwise
// (no such member there, one cut short, or one of another kind). Members
// nested in other values (an "id" inside "params") are skipped over, never
// taken for the request's; a string or number that the 512 bytes cut, or
// that is not valid JSON (1.2.3), is no id. The first top-level "id"
// member is taken: a message naming it twice is invalid anyway.
func FindID(msg []byte) json.RawMessage {
	var id json.RawMessage
	jsonscan.HeadMembers(msg[:min(len(msg), headSize)], func(name []byte, value json.RawMessage) bool {
		if isIDName(name) {
			id = idValue(value)
			return false
		}
		return true
	})
	return id
}

// isIDName reports whether name, a member name as written (quoted, escapes
// left in), is "id".
func isIDName(name []byte) bool {
	if string(name) == `"id"` {
		return true
	}
	if bytes.IndexByte(name, '\\') < 0 {
		return false
	}
	s, ok := jsonscan.DecodeString(name)
	return ok && s == "id"
}

// idValue returns v, a whole JSON token, as an id: itself when it is a
// valid JSON string or number in valid UTF-8, "null" for null, else nil.
func idValue(v []byte) json.RawMessage {
	switch {
	case string(v) == "null":
		return json.RawMessage("null")
	case len(v) == 0 || !(v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
		return nil
	case !utf8.Valid(v) || !json.Valid(v):
		return nil
	}
	return json.RawMessage(bytes.Clone(v))
}

// Envelope is the part of a JSON-RPC message used for routing.
type Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
}

// IsCall reports whether e is a well-formed request that expects a response
// carrying its id: version "2.0", a method, and a string or number id.
func (e Envelope) IsCall() bool {
	if e.JSONRPC != "2.0" || e.Method == "" || len(e.ID) == 0 {
		return false
	}
	switch e.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// Envelopes decodes the routing part of msg, a message or a batch. It
// returns nil for a message that is not valid JSON.
func Envelopes(msg []byte) []Envelope {
	trimmed := bytes.TrimLeft(msg, " \t")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []Envelope
		if json.Unmarshal(trimmed, &batch) != nil {
			return nil
		}
		return batch
	}
	if e, ok := plainEnvelope(trimmed); ok {
		return []Envelope{e}
	}
	var e Envelope
	if json.Unmarshal(trimmed, &e) != nil {
		return nil
	}
	return []Envelope{e}
}

// plainEnvelope is Envelopes' fast path for one message written plainly,
// as every message this project's own ends write is: a valid JSON object
// whose "jsonrpc" and "method" members, if there, are strings or null, and
// where no other name could be taken for one of the three (see
// jsonscan.MayBeField), nor one of them is named twice. For
// such a message it gives what json.Unmarshal gives, in one pass with
// jsonscan rather than encoding/json's two (a check, then a decode that
// skips over the params), which on a request carrying a workspace's
// dependencies is most of the cost of sending it. Anything else is left
// to json.Unmarshal (ok false).
func plainEnvelope(msg []byte) (e Envelope, ok bool) {
	if !jsonscan.Valid(msg) {
		return Envelope{}, false
	}
	ok = true
	var seen uint8
	isObject := jsonscan.RawMembers(msg, func(name []byte, v json.RawMessage) {
		if !ok {
			return
		}
		var bit uint8
		switch string(name) {
		case `"jsonrpc"`:
			bit = 1
			e.JSONRPC, ok = envelopeString(v)
		case `"id"`:
			bit = 2
			e.ID = bytes.Clone(v)
		case `"method"`:
			bit = 4
			e.Method, ok = envelopeString(v)
		default:
			ok = plainOtherName(name)
		}
		ok = ok && seen&bit == 0
		seen |= bit
	})
	return e, ok && isObject
}

// envelopeString decodes a "jsonrpc" or "method" value as json.Unmarshal
// does into a string field, reporting false for a value of another kind
// (which json.Unmarshal refuses, and Envelopes leaves to it).
func envelopeString(v json.RawMessage) (string, bool) {
	if v[0] != '"' && string(v) != "null" {
		return "", false
	}
	return jsonscan.DecodeString(v)
}

// plainOtherName reports whether name, a member name as written, is none
// of the envelope's, however encoding/json might match it.
func plainOtherName(name []byte) bool {
	for _, field := range [...]string{"jsonrpc", "id", "method"} {
		if jsonscan.MayBeField(name, field) {
			return false
		}
	}
	return true
}

// IDKey returns a map key for a raw id; null and absent ids give "".
func IDKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, id) != nil {
		return string(id)
	}
	return buf.String()
}
