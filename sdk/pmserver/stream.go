package pmserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"syscall"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
)

// VettedStream is a vetted active_plugins result (see Vetted) that the
// harness reads from a region of a file, typically the cache file the PM
// stored it in, rather than from memory: a hook never holds the whole
// answer, however large, only one buffer of streamChunk bytes.
//
// The harness checks the region before it sends any of it, and reads it
// twice through that one buffer (once only where it splices, below):
//
//   - Before answering, it reads the region whole and checks its framing
//     (it starts with '[', ends with ']' and holds no newline) and that its
//     CRC-32C (Castagnoli) is Sum. A region that fails is not sent: the
//     harness logs why and answers as if the PM had declined (the raw path
//     or the usual path answer), so a damaged cache costs one slow answer,
//     not a failed hook. It notes the running checksum at the end of every
//     chunk.
//   - While writing the response, under the lock every response is written
//     under, it reads the region again chunk by chunk and writes a chunk
//     only once its running checksum matches the one noted for it and it
//     holds no newline. The PM must keep the region unchanged meanwhile (a
//     file replaced by rename, never rewritten in place, does: the harness
//     reads the descriptor it was given).
//
// Should the second read differ anyway (a file rewritten in place, a read
// error), the harness cuts the response line short: it ends the line
// before the answer's end, so the response object is never closed and no
// JSON parser takes the line for an answer, logs an error, and stops
// serving (the answer to that request can no longer be sent). The stream
// stays line-framed throughout.
//
// On Linux, when From is an *os.File and the response goes to a pipe (as
// it does when a host spawns the PM), the second read is left to the
// kernel: once the region is checked, the harness hands it to the pipe
// with splice(2), which moves the file's cached pages into the pipe
// without copying them through the process (at 3.6 MiB, 1.3 ms of a 7 ms
// hook on the 2-core benchmark machine). The bytes sent are then those of
// the file as it is while they are spliced, unchecked a second time: a
// region rewritten in place in that window reaches the host as it was
// rewritten, where the host's own checks refuse it. A file that ends
// before the region does cuts the line short as above. Anywhere else (a
// buffer, a regular file, a socket, another system) the harness reads and
// checks the region again as described.
type VettedStream struct {
	// From holds the answer; it is read only at Offset..Offset+Length.
	From io.ReaderAt
	// Offset and Length locate the answer in From.
	Offset, Length int64
	// Sum is the CRC-32C (Castagnoli) of the answer's bytes, as the PM
	// stored it with them.
	Sum uint32
	// Diagnose, when not nil, is called with the request's context once
	// the harness has checked the region and will send it: the PM sends
	// there the diagnostics that go with the answer (see
	// RawActivePlugins), rather than before returning the stream, so that
	// a refused region sends none and the path answering in its place
	// sends its own, once.
	Diagnose func(ctx context.Context)
	// Close, when not nil, is called once when the harness is done with
	// From: after the response is written, when it refuses the region, or
	// when the server stops first.
	Close func() error
}

// StreamedActivePlugins is VettedActivePlugins for answers the harness
// reads from a file region (see VettedStream). It is optional and tried
// first, before VettedActivePlugins, RawActivePlugins and the usual path,
// which answer when it declines or the harness refuses the region; the
// answer must be exactly what the usual path would answer to these params
// now, under the same rules as RawActivePlugins' (diagnostics included).
type StreamedActivePlugins interface {
	// ActivePluginsStreamed receives the request's params exactly as they
	// arrived (nil when the request had none) and returns either where to
	// read the complete result and true, or false to decline; a non-nil
	// error is answered as PM.ActivePlugins' errors are. The harness calls
	// the result's Close whenever ok is true, and only then.
	ActivePluginsStreamed(ctx context.Context, params json.RawMessage) (VettedStream, bool, error)
}

// streamChunk is the size of the buffer a streamed answer is read and
// written through: a pipe's default capacity on Linux.
const streamChunk = 64 << 10

// maxStreamed bounds the answer the harness streams.
const maxStreamed = 1 << 30

// castagnoli returns the CRC-32C table. crc32 builds it on the first call
// only, so a PM that never streams an answer never builds it: building it at
// package initialization cost every PM process about 0.2 ms.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// answerStream is a VettedStream checked once (vetStream) and held for the
// channel to write (writeStream).
type answerStream struct {
	VettedStream
	sums []uint32 // running CRC-32C at the end of each chunk, as first read
	buf  []byte
}

// vetStream reads vs's region once and checks it (see VettedStream); on
// success it returns the stream to write, with the checksums noted. It
// closes vs on failure.
func vetStream(vs VettedStream) (*answerStream, error) {
	st := &answerStream{VettedStream: vs}
	if err := st.vet(); err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

func (st *answerStream) vet() error {
	n := st.Length
	switch {
	case st.From == nil:
		return errors.New("no file to read it from")
	case n < 2 || st.Offset < 0:
		return fmt.Errorf("a region of %d bytes at offset %d cannot hold a JSON array", n, st.Offset)
	case n > maxStreamed:
		return fmt.Errorf("%d bytes, more than the %d the harness sends", n, maxStreamed)
	}
	st.buf = make([]byte, min(n, streamChunk))
	st.sums = make([]uint32, 0, (n+streamChunk-1)/streamChunk)
	var sum uint32
	for off := int64(0); off < n; off += streamChunk {
		chunk, err := st.read(off)
		if err != nil {
			return err
		}
		if err := framed(chunk, off, n); err != nil {
			return err
		}
		sum = crc32.Update(sum, castagnoli(), chunk)
		st.sums = append(st.sums, sum)
	}
	if sum != st.Sum {
		return fmt.Errorf("checksum mismatch (CRC-32C %08x, stored %08x): the kept answer is damaged", sum, st.Sum)
	}
	return nil
}

// read reads the chunk of the answer at off (relative to the region).
func (st *answerStream) read(off int64) ([]byte, error) {
	chunk := st.buf[:min(int64(len(st.buf)), st.Length-off)]
	m, err := st.From.ReadAt(chunk, st.Offset+off)
	if m < len(chunk) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %d bytes at offset %d: %w", len(chunk), st.Offset+off, err)
	}
	return chunk, nil
}

// framed checks the framing of the chunk at off of an answer of n bytes.
func framed(chunk []byte, off, n int64) error {
	switch {
	case off == 0 && chunk[0] != '[':
		return errors.New("not a JSON array (it does not start with '[')")
	case off+int64(len(chunk)) == n && chunk[len(chunk)-1] != ']':
		return errors.New("not a JSON array (it does not end with ']')")
	case bytes.IndexByte(chunk, '\n') >= 0:
		return errors.New("not on one line")
	}
	return nil
}

// close releases the stream's source, once.
func (st *answerStream) close() {
	if st.Close != nil {
		st.Close()
		st.Close = nil
	}
}

// errCutShort marks the error of a response line writeStream cut short.
var errCutShort = errors.New("the response line was cut short")

// writeStream writes the response line head + st's answer + tail to w,
// splicing the answer from its file when w is a pipe (spliceRegion), else
// reading the answer again chunk by chunk and writing each only once its
// running checksum matches the first read's and it holds no newline. On a
// mismatch or a read error it ends the line at once, short of the answer's
// end (so the response never parses), and returns the error, which wraps
// errCutShort; a failed write is returned as it is. It closes st.
func writeStream(w io.Writer, head []byte, st *answerStream, tail []byte) error {
	defer st.close()
	growPipe(w, st.Length)
	if _, err := w.Write(head); err != nil {
		return err
	}
	if sent, ok, err := spliceRegion(w, st.From, st.Offset, st.Length); ok {
		switch {
		case errors.Is(err, syscall.EPIPE):
			return err // the host is gone, as with a failed write
		case err != nil:
			if _, werr := w.Write([]byte("\n")); werr != nil {
				err = errors.Join(err, werr)
			}
			return fmt.Errorf("sending the kept active_plugins answer: splicing %d bytes at offset %d: %w; %w", st.Length-sent, st.Offset+sent, err, errCutShort)
		}
		_, err := w.Write(tail)
		return err
	}
	var sum uint32
	for i, off := 0, int64(0); off < st.Length; i, off = i+1, off+streamChunk {
		chunk, err := st.read(off)
		if err == nil {
			sum = crc32.Update(sum, castagnoli(), chunk)
			if i >= len(st.sums) || sum != st.sums[i] {
				err = fmt.Errorf("the bytes at offset %d changed since they were checked", st.Offset+off)
			} else if ferr := framed(chunk, off, st.Length); ferr != nil {
				err = fmt.Errorf("the bytes at offset %d changed since they were checked: %w", st.Offset+off, ferr)
			}
		}
		if err != nil {
			if _, werr := w.Write([]byte("\n")); werr != nil {
				err = errors.Join(err, werr)
			}
			return fmt.Errorf("sending the kept active_plugins answer: %w; %w", err, errCutShort)
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	_, err := w.Write(tail)
	return err
}

// streamResult checks vs (vetStream) and holds it for the channel to write
// as the result of the response to the request ctx belongs to. It reports
// false, having closed vs, when the region is refused: the caller then
// answers as if the PM had declined.
func (s *server) streamResult(ctx context.Context, method string, vs VettedStream) (any, bool) {
	r, _ := ctx.Value(requestKey{}).(*request)
	if r == nil {
		if vs.Close != nil {
			vs.Close()
		}
		return nil, false
	}
	st, err := vetStream(vs)
	if err != nil {
		s.logger().Warn("refusing the PM's kept answer; answering without it", "method", method, "err", err)
		return nil, false
	}
	if vs.Diagnose != nil {
		vs.Diagnose(ctx)
	}
	s.ch.holdStream(r.id, st)
	return json.RawMessage(rawPlaceholder), true
}

// holdStream keeps st as the result of the response to the request with
// the given id, for Send to stream in place of the placeholder.
func (c *lineChannel) holdStream(id json.RawMessage, st *answerStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams == nil {
		c.streams = make(map[string]*answerStream)
	}
	if old := c.streams[framing.IDKey(id)]; old != nil {
		old.close()
	}
	c.streams[framing.IDKey(id)] = st
}

// takeStream removes and returns the stream held for the response msg, the
// response to the request with the given id and key, with the head to
// write before it; st is nil when none is held or msg is not the
// placeholder result (jrpc2 answered the request otherwise, say once it
// was cancelled: the stream is then closed, and msg sent as it is). The
// caller holds mu.
func (c *lineChannel) takeStream(msg []byte, id json.RawMessage, key string) (head []byte, st *answerStream) {
	st, ok := c.streams[key]
	if !ok {
		return nil, nil
	}
	delete(c.streams, key)
	if h, ok := placeholderHead(msg, id); ok {
		return h, st
	}
	st.close()
	return nil, nil
}

// closeStreams closes every stream still held; the caller holds mu.
func (c *lineChannel) closeStreams() {
	for k, st := range c.streams {
		st.close()
		delete(c.streams, k)
	}
}
