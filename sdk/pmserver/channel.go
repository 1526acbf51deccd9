package pmserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

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
// Oversize lines are answered here with an invalid-request error carrying the
// id found in their head, and reading continues.
type lineChannel struct {
	r   *framing.Reader
	log *slog.Logger

	wmu    sync.Mutex // serializes writes to w
	w      io.Writer
	closed bool

	mu       sync.Mutex
	cond     *sync.Cond
	pending  map[string]int  // request ids handed out and not yet answered
	barrier  string          // id of an initialize request in flight, or ""
	seenInit bool            // an initialize request has been read
	early    map[string]bool // ids of requests read before any initialize
	done     bool            // Close was called
}

func newLineChannel(r io.Reader, w io.Writer, maxMessage int, log *slog.Logger) *lineChannel {
	c := &lineChannel{
		r:       framing.NewReader(r, maxMessage),
		w:       w,
		log:     log,
		pending: make(map[string]int),
		early:   make(map[string]bool),
	}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Recv implements channel.Channel.
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
		c.track(msg)
		return msg, nil
	}
}

// track records the ids of the requests in msg.
func (c *lineChannel) track(msg []byte) {
	envs := framing.Envelopes(msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range envs {
		if !e.IsCall() {
			continue // jrpc2 answers it with a null id, or not at all
		}
		key := framing.IDKey(e.ID)
		c.pending[key]++
		if e.Method == protocol.MethodInitialize {
			c.seenInit = true
			if len(envs) == 1 {
				c.barrier = key
			}
		} else if !c.seenInit {
			c.early[key] = true
		}
	}
}

// readBeforeInitialize reports whether the request with the given raw id was
// read before any initialize request, however the handlers were scheduled.
func (c *lineChannel) readBeforeInitialize(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early[framing.IDKey(json.RawMessage(id))]
}

// drain waits until every request handed out has been answered.
func (c *lineChannel) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && !c.done {
		c.cond.Wait()
	}
}

// Send implements channel.Channel.
func (c *lineChannel) Send(msg []byte) error {
	if err := c.write(msg); err != nil {
		return err
	}
	var keys []string
	if id := framing.FindID(msg); id != nil && msg[0] == '{' {
		keys = []string{framing.IDKey(id)}
	} else {
		for _, e := range framing.Envelopes(msg) {
			keys = append(keys, framing.IDKey(e.ID))
		}
	}
	c.mu.Lock()
	for _, k := range keys {
		if n := c.pending[k]; n > 1 {
			c.pending[k] = n - 1
		} else {
			delete(c.pending, k)
			delete(c.early, k)
		}
		if k == c.barrier {
			c.barrier = ""
		}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *lineChannel) write(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return errors.New("channel is closed")
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := c.w.Write(buf)
	return err
}

// reply writes an error response directly, for messages jrpc2 never sees.
func (c *lineChannel) reply(id json.RawMessage, code protocol.Code, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	rsp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   protocol.Error  `json:"error"`
	}{"2.0", id, protocol.Error{Code: code, Message: message}}
	b, err := json.Marshal(rsp)
	if err != nil {
		return
	}
	if err := c.write(b); err != nil {
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
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}
