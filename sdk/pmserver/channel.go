package pmserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// lineChannel is the server's jrpc2 channel: newline framing with a size
// bound, plus the two ordering guarantees jrpc2 does not give by itself.
//
//   - Drain: at end of input, Recv does not report EOF until every request it
//     has handed out has been answered, so piped requests all get responses.
//   - Initialize barrier: after handing out an initialize request, Recv reads
//     nothing more until its response is sent, so requests pipelined behind
//     initialize see an initialized PM.
//
// Lines that are not valid requests are answered here (see admit), as are
// oversize lines, with an invalid-request error carrying the id found in
// their head; reading continues after them. jrpc2 only ever sees single,
// valid requests whose id is not in flight, and of those only the id and
// the method (see envelope): the handler takes the params from the channel.
type lineChannel struct {
	r   *framing.Reader
	log *slog.Logger

	wmu    sync.Mutex // serializes writes to w
	w      io.Writer
	closed bool

	mu       sync.Mutex
	cond     *sync.Cond
	pending  map[string]int             // request ids handed out and not yet answered
	barrier  string                     // id of an initialize request in flight, or ""
	seenInit bool                       // an initialize request has been read
	early    map[string]bool            // ids of requests read before any initialize
	done     bool                       // Close was called
	raw      map[string]json.RawMessage // pre-encoded results by request id key (see holdRaw)
	params   map[string]json.RawMessage // params of requests handed out, by id key (see takeParams)
	streams  map[string]*answerStream   // streamed results by request id key (see holdStream)

	cut     chan struct{} // closed when a response line was cut short (see writeStream)
	failure error         // why, set once before cut is closed
}

func newLineChannel(r io.Reader, w io.Writer, maxMessage int, log *slog.Logger) *lineChannel {
	c := &lineChannel{
		r:       framing.NewReader(r, maxMessage),
		w:       w,
		log:     log,
		pending: make(map[string]int),
		params:  make(map[string]json.RawMessage),
		early:   make(map[string]bool),
		cut:     make(chan struct{}),
	}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Recv implements channel.Channel. It hands out only valid requests, one at
// a time; every other line is answered (or ignored) here, as admit decides.
func (c *lineChannel) Recv() ([]byte, error) {
	c.mu.Lock()
	for c.barrier != "" && !c.done {
		c.cond.Wait()
	}
	c.mu.Unlock()
	for {
		msg, err := c.r.Next()
		var tooLong *framing.TooLongError
		switch {
		case errors.As(err, &tooLong):
			c.log.Warn("refusing oversize message", "size", tooLong.Size, "limit", tooLong.Max)
			c.reply(tooLong.ID(), protocol.CodeInvalidRequest, tooLong.Error())
			continue
		case err != nil:
			c.drain()
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading requests: %w", err)
		}
		v := admit(msg)
		switch {
		case v.answer != nil:
			c.log.Debug("answering a message that is not a valid request", "answer", string(v.answer))
			if err := c.write(v.answer); err != nil {
				c.log.Debug("writing error response", "err", err)
			}
			continue
		case !v.forward:
			c.log.Warn(v.note)
			continue
		}
		if !c.track(v) {
			c.reply(v.id, protocol.CodeInvalidRequest, fmt.Sprintf(
				"invalid request: id %s is already in use by a request still being answered; this %q request was not run (the earlier one will still be answered)", v.id, v.method))
			continue
		}
		return envelope(v), nil
	}
}

// track records a request handed out; it reports false, and records
// nothing, when a request with the same id is still being answered.
func (c *lineChannel) track(v verdict) bool {
	key := framing.IDKey(v.id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[key] > 0 {
		return false
	}
	c.pending[key]++
	if v.params != nil {
		c.params[key] = v.params
	}
	if v.method == protocol.MethodInitialize {
		c.seenInit = true
		c.barrier = key
	} else if !c.seenInit {
		c.early[key] = true
	}
	return true
}

// takeParams returns the params of the request handed out with the given
// raw id, exactly as they arrived, or nil when it had none (or null), and
// forgets them: the handler calls it once.
func (c *lineChannel) takeParams(id string) json.RawMessage {
	key := framing.IDKey(json.RawMessage(id))
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.params[key]
	delete(c.params, key)
	return p
}

// readBeforeInitialize reports whether the request with the given raw id was
// read before any initialize request, however the handlers were scheduled.
func (c *lineChannel) readBeforeInitialize(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early[framing.IDKey(json.RawMessage(id))]
}

// drain waits until every request handed out has been answered and the
// answer written.
func (c *lineChannel) drain() {
	c.mu.Lock()
	for len(c.pending) > 0 && !c.done {
		c.cond.Wait()
	}
	c.mu.Unlock()
	// An answer is counted as it starts being written, under wmu: taking wmu
	// waits for the last write to finish.
	c.wmu.Lock()
	//lint:ignore SA2001 an empty critical section, on purpose
	c.wmu.Unlock()
}

// Send implements channel.Channel. The request is counted as answered before
// its answer is written, so a host that reuses an id as soon as it reads the
// answer is never refused as a duplicate.
func (c *lineChannel) Send(msg []byte) error {
	if !utf8.Valid(msg) {
		// Handlers' results are encoded by encoding/json, which never writes
		// invalid UTF-8; this guards the stream against anything else.
		c.log.Error("refusing to write an answer that is not valid UTF-8", "size", len(msg))
		id := framing.FindID(msg)
		msg = marshalAnswer(newErrorResponse(id, protocol.CodeInternalError, "internal error: the answer was not valid UTF-8"))
	}
	var keys []string
	var single json.RawMessage // the id of a single response
	if id := framing.FindID(msg); id != nil && msg[0] == '{' {
		single = id
		keys = []string{framing.IDKey(id)}
	} else {
		for _, e := range framing.Envelopes(msg) {
			keys = append(keys, framing.IDKey(e.ID))
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	parts := [][]byte{msg}
	if single != nil && c.raw != nil {
		parts = c.spliceRaw(msg, single, keys[0])
	}
	var stream *answerStream
	if single != nil && c.streams != nil {
		var head []byte
		if head, stream = c.takeStream(msg, single, keys[0]); stream != nil {
			parts = [][]byte{head}
		}
	}
	for _, k := range keys {
		if n := c.pending[k]; n > 1 {
			c.pending[k] = n - 1
		} else {
			delete(c.pending, k)
			delete(c.early, k)
			delete(c.params, k) // a request jrpc2 answered without its handler
		}
		if k == c.barrier {
			c.barrier = ""
		}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if stream != nil {
		if c.closed {
			stream.close()
			return errors.New("channel is closed")
		}
		err := writeStream(c.w, parts[0], stream, []byte("}\n"))
		if errors.Is(err, errCutShort) {
			// Nothing more is written after a cut line: the server stops.
			c.log.Error("stopping", "err", err)
			c.closed = true
			c.mu.Lock()
			if c.failure == nil {
				c.failure = err
				close(c.cut)
			}
			c.mu.Unlock()
		}
		return err
	}
	return c.writeLocked(parts...)
}

func (c *lineChannel) write(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(msg)
}

// writeLocked writes one message line, given as the parts to join; the
// caller holds wmu. A message whose parts are small is joined and written
// at once; a large part (a pre-encoded result, see spliceRaw) is written
// as it is, between the others, rather than copied.
func (c *lineChannel) writeLocked(parts ...[]byte) error {
	if c.closed {
		return errors.New("channel is closed")
	}
	small, large := 1, 0
	for _, p := range parts {
		if len(p) <= directWrite {
			small += len(p)
		} else {
			large += len(p)
		}
	}
	if large > 0 {
		growPipe(c.w, int64(small+large))
	}
	buf := make([]byte, 0, small)
	for _, p := range parts {
		if len(p) <= directWrite {
			buf = append(buf, p...)
			continue
		}
		if len(buf) > 0 {
			if _, err := c.w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		if _, err := c.w.Write(p); err != nil {
			return err
		}
	}
	buf = append(buf, '\n')
	_, err := c.w.Write(buf)
	return err
}

// directWrite is the size past which a part of a message is written as it
// is rather than copied into the line being assembled.
const directWrite = 64 << 10

// reply writes an error response directly, for messages jrpc2 never sees.
func (c *lineChannel) reply(id json.RawMessage, code protocol.Code, message string) {
	if err := c.write(marshalAnswer(newErrorResponse(id, code, message))); err != nil {
		c.log.Debug("writing error response", "err", err)
	}
}

// Close implements channel.Channel. It releases any waiter.
func (c *lineChannel) Close() error {
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
	c.mu.Lock()
	c.done = true
	c.closeStreams()
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

// failed returns why a response line was cut short, or nil.
func (c *lineChannel) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}
