package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// eofSettle is how long the end of a PM's output is held back so that the
// responses read just before it are delivered.
const eofSettle = 100 * time.Millisecond

// errOutputClosed reports that the PM's stdout ended.
var errOutputClosed = errors.New("the PM closed its output")

// clientChannel is the host's jrpc2 channel to one PM: bounded line framing
// on the PM's stdout and serialized writes to its stdin. A line that is not
// JSON breaks the connection at once, so pending calls fail with the reason
// rather than waiting for their timeouts.
type clientChannel struct {
	proc *Process

	mu     sync.Mutex
	reason error
	closed bool
	done   chan struct{} // closed by Close

	// diags collects the PM's diagnostic notifications, which never reach
	// jrpc2 (see diagnostics.go).
	diags *diagBox

	// results holds the results of responses read in place (see inPlace),
	// by id key, until their call takes them (see takeResult); guarded by
	// mu. A result is only kept for a request diags has in flight, and the
	// response takes it out of flight, so a PM cannot make the channel keep
	// more results than it was sent requests.
	results map[string]json.RawMessage
}

func newClientChannel(proc *Process) *clientChannel {
	return &clientChannel{proc: proc, done: make(chan struct{}), diags: newDiagBox(), results: make(map[string]json.RawMessage)}
}

func (c *clientChannel) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason == nil {
		c.reason = err
	}
	return c.reason
}

// failure returns why the channel broke, or nil.
func (c *clientChannel) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

// Recv implements channel.Channel. Notifications from the PM are handled
// here (diagnostics are collected per request; others ignored) and never
// handed to jrpc2.
func (c *clientChannel) Recv() ([]byte, error) {
	for {
		msg, envs, err := c.recv()
		if err != nil {
			return nil, err
		}
		if msg == nil {
			continue
		}
		// One notification, not a batch of one: the message is an object
		// (after any JSON whitespace, which a line may start with).
		if obj := bytes.TrimLeft(msg, " \t\r"); len(envs) == 1 && envs[0].Method != "" && len(envs[0].ID) == 0 && len(obj) > 0 && obj[0] == '{' {
			c.diags.notification(envs[0].Method, obj)
			continue
		}
		for _, e := range envs {
			c.diags.response(e.ID)
		}
		return msg, nil
	}
}

// recv reads one message and decodes its routing part; a nil message
// without an error is one dropped here.
func (c *clientChannel) recv() ([]byte, []framing.Envelope, error) {
	msg, err := c.proc.ReadLine()
	var tooLong *framing.TooLongError
	switch {
	case errors.As(err, &tooLong):
		id := tooLong.ID()
		if framing.IDKey(id) == "" && diagnosticMethod().Match(tooLong.Head) {
			c.diags.oversize(tooLong.Size, int64(tooLong.Max))
			return nil, nil, nil // dropped: read on
		}
		if framing.IDKey(id) == "" {
			return nil, nil, c.fail(fmt.Errorf("the PM sent a message of %d bytes, over the limit of %d", tooLong.Size, tooLong.Max))
		}
		// Fail just the call the oversize response answers.
		b, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   protocol.Error  `json:"error"`
		}{"2.0", id, protocol.Error{Code: protocol.CodeInvalidRequest, Message: fmt.Sprintf(
			"the PM's response of %d bytes exceeds the host's limit of %d bytes", tooLong.Size, tooLong.Max)}})
		return b, []framing.Envelope{{JSONRPC: "2.0", ID: id}}, err
	case errors.Is(err, io.EOF):
		// jrpc2 delivers each response on a goroutine of its own and fails
		// every pending call as soon as Recv reports the end: give the
		// responses already read a moment to land first.
		// A host closing the connection itself has nothing left to wait for.
		select {
		case <-time.After(eofSettle):
		case <-c.done:
		}
		c.fail(errOutputClosed)
		return nil, nil, io.EOF
	case err != nil:
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return nil, nil, io.EOF
		}
		return nil, nil, c.fail(fmt.Errorf("reading the PM's output: %w", err))
	}
	if light, env, ok := c.inPlace(msg); ok {
		return light, []framing.Envelope{env}, nil
	}
	envs := framing.Envelopes(msg)
	if envs == nil && c.proc.Unterminated() {
		return nil, nil, c.fail(fmt.Errorf("the PM's output ended in the middle of a message: %q", truncate(msg, 120)))
	}
	if envs == nil {
		return nil, nil, c.fail(fmt.Errorf("the PM wrote a line that is not JSON-RPC on stdout: %q", truncate(msg, 120)))
	}
	return msg, envs, nil
}

// inPlace reads a plain success response without decoding it: when msg is
// a JSON object whose members are exactly "jsonrpc": "2.0", the string or
// number "id" of a request in flight (sent and not yet answered, as diags
// tracks it), and "result", once
// each, it keeps the result, as written, for the call (see takeResult) and
// returns what jrpc2 is handed instead: the same response with a null
// result. jrpc2 decoding the line would check and copy it twice, and the
// call's decoding of its result would check and copy it once more, for an
// answer that runs to hundreds of KiB on a large workspace; this way the
// line is checked once, here, and decoded once, by the call. Any other
// line (an error response, a notification, a batch, a repeated or unknown
// member, an id not in flight, invalid JSON) is not read here, and goes to
// jrpc2 whole, as before.
func (c *clientChannel) inPlace(msg []byte) ([]byte, framing.Envelope, bool) {
	if t := bytes.TrimLeft(msg, " \t\r"); len(t) == 0 || t[0] != '{' || !jsonscan.Valid(t) {
		return nil, framing.Envelope{}, false
	}
	var version, id, result json.RawMessage
	n := 0
	jsonscan.Members(msg, func(name string, value json.RawMessage) {
		n++
		switch name {
		case "jsonrpc":
			version = value
		case "id":
			id = value
		case "result":
			result = value
		}
	})
	if n != 3 || string(version) != `"2.0"` || id == nil || result == nil || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return nil, framing.Envelope{}, false
	}
	// Recv moves the request out of flight (diags.response) before it
	// reads the next line, so a second answer to it goes to jrpc2.
	key := framing.IDKey(id)
	if !c.diags.inFlight(key) {
		return nil, framing.Envelope{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.results[key] = result // msg is the reader's fresh slice: kept, not copied
	const head, tail = `{"jsonrpc":"2.0","id":`, `,"result":null}`
	light := make([]byte, 0, len(head)+len(id)+len(tail))
	light = append(append(append(light, head...), id...), tail...)
	return light, framing.Envelope{JSONRPC: "2.0", ID: id}, true
}

// takeResult returns the result of the response to the request with the
// given id (as jrpc2 renders it) when inPlace kept it, and forgets it.
func (c *clientChannel) takeResult(id string) (json.RawMessage, bool) {
	key := framing.IDKey(json.RawMessage(id))
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.results[key]
	delete(c.results, key)
	return r, ok
}

// Send implements channel.Channel.
func (c *clientChannel) Send(msg []byte) error {
	c.diags.sent(framing.Envelopes(msg))
	return c.proc.WriteLine(msg)
}

// Close implements channel.Channel: it stops reading the PM's output.
func (c *clientChannel) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	if c.reason == nil {
		c.reason = errors.New("the connection to the PM was closed")
	}
	c.mu.Unlock()
	return c.proc.CloseOutput()
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
