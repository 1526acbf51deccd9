package pmserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// streamPM is rawPM whose active_plugins answer is served streamed
// (pmserver.StreamedActivePlugins) from src at off, n bytes, with sum as
// its stored checksum; it declines while src is nil.
type streamPM struct {
	*rawPM
	src    io.ReaderAt
	off, n int64
	sum    uint32
	calls  int
	closes atomic.Int32
}

func (p *streamPM) ActivePluginsStreamed(ctx context.Context, params json.RawMessage) (pmserver.VettedStream, bool, error) {
	p.calls++
	if p.src == nil {
		return pmserver.VettedStream{}, false, nil
	}
	return pmserver.VettedStream{From: p.src, Offset: p.off, Length: p.n, Sum: p.sum,
		Diagnose: func(ctx context.Context) { pmserver.Warn(ctx, pmserver.Diagnostic{Message: "from the kept answer"}) },
		Close:    func() error { p.closes.Add(1); return nil }}, true, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// keep places answer in a file between other bytes and serves it from
// there, with its checksum.
func (p *streamPM) keep(t *testing.T, answer []byte) []byte {
	t.Helper()
	file := append(append([]byte("head bytes\n"), answer...), "\nentries"...)
	path := filepath.Join(t.TempDir(), "kept")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p.src, p.off, p.n, p.sum = f, int64(len("head bytes\n")), int64(len(answer)), crc32.Checksum(answer, castagnoli)
	return file
}

// bigAnswer is a JSON array of n small objects, several chunks long.
func bigAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", i%50))
	}
	b.WriteString("]")
	return b.Bytes()
}

// sentKept reports whether a hook's output holds the diagnostic that goes
// with the streamed answer.
func sentKept(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "from the kept answer") {
			n++
		}
	}
	return n
}

// TestStreamedAnswerAsUsual: an answer streamed from a file is the usual
// path's answer byte for byte, tried before every other path, with the
// diagnostic that goes with it sent once; a large one
// (many chunks) is one well-formed line followed by the next response on
// its own line; the source is closed once per answer.
func TestStreamedAnswerAsUsual(t *testing.T) {
	pm := &streamPM{rawPM: newRawPM()}
	first, _ := answers(t, hook(t, pm))
	pm.keep(t, pm.answers[rawParams])
	pm.decline = true // the raw path would answer otherwise
	lines := hook(t, pm)
	second, codes := answers(t, lines)
	if n := sentKept(lines); n != 1 {
		t.Errorf("the streamed answer's diagnostic was sent %d times, want 1", n)
	}
	if pm.computed != 1 || pm.calls != 2 || pm.closes.Load() != 1 {
		t.Fatalf("ActivePlugins ran %d times, ActivePluginsStreamed %d, Close %d; want 1, 2, 1", pm.computed, pm.calls, pm.closes.Load())
	}
	if codes["2"] != 0 || second["2"] != first["2"] {
		t.Errorf("streamed answer %s (code %d), usual answer %s", second["2"], codes["2"], first["2"])
	}

	big := bigAnswer(30000)
	if len(big) < 5*64<<10 {
		t.Fatalf("the answer is %d bytes, want several chunks", len(big))
	}
	pm.keep(t, big)
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n" + req(3, protocol.MethodListDeps, "") + "\n"
	lines = rawServe(t, pm, in)
	if len(lines) != 4 {
		t.Fatalf("want 3 response lines and a diagnostic, got %d lines", len(lines))
	}
	want := `{"jsonrpc":"2.0","id":2,"result":` + string(big) + `}`
	found := 0
	for _, l := range lines[1:] {
		switch {
		case strings.Contains(l, "from the kept answer"):
		case strings.HasPrefix(l, `{"jsonrpc":"2.0","id":2,`):
			found++
			if l != want || !json.Valid([]byte(l)) {
				t.Errorf("the streamed answer was not sent as it is (%d bytes, want %d)", len(l), len(want))
			}
		case decodeRsp(t, l).code() == 0 && string(decodeRsp(t, l).ID) == "3":
			found++
		default:
			t.Errorf("unexpected response %.200s", l)
		}
	}
	if found != 2 || pm.closes.Load() != 2 {
		t.Errorf("found %d of the 2 responses; Close called %d times, want 2", found, pm.closes.Load())
	}
}

// TestStreamedRefused: a region that is damaged (its checksum does not
// hold), cut short by the end of the file, or not framed as one JSON array
// is never sent, nor the diagnostic that goes with it: the harness answers
// as if the PM had declined (here the usual path), and closes the source.
func TestStreamedRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		damage func(p *streamPM, file []byte)
	}{
		{"byte flipped", "", func(p *streamPM, file []byte) {
			b := bytes.Clone(file)
			b[p.off+p.n/2] ^= 0x01
			p.src = bytes.NewReader(b)
		}},
		{"truncated file", "", func(p *streamPM, file []byte) { p.src = bytes.NewReader(file[:p.off+p.n-1]) }},
		{"region past the end", "", func(p *streamPM, file []byte) { p.n += 100 }},
		{"no region", "", func(p *streamPM, file []byte) { p.n = 0 }},
		{"two lines", "[1,\n2]", nil},
		{"object", `{"a":1}`, nil},
		{"unclosed", `[{"id":1}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pm := &streamPM{rawPM: newRawPM()}
			pm.decline = true
			first, _ := answers(t, hook(t, pm))
			answer := pm.answers[rawParams]
			if tc.answer != "" {
				answer = []byte(tc.answer)
			}
			file := pm.keep(t, answer)
			if tc.damage != nil {
				tc.damage(pm, file)
			}
			lines := hook(t, pm)
			second, codes := answers(t, lines)
			if codes["2"] != 0 || second["2"] != first["2"] || sentKept(lines) != 0 {
				t.Errorf("answer %s (code %d, %d diagnostics of the kept answer), want the usual path's %s", second["2"], codes["2"], sentKept(lines), first["2"])
			}
			if pm.computed != 2 || pm.closes.Load() != 1 {
				t.Errorf("ActivePlugins ran %d times, Close %d; want 2 and 1", pm.computed, pm.closes.Load())
			}
		})
	}
}

// changingReader serves data for its first reads, then other bytes: a
// file rewritten in place between the harness's two reads.
type changingReader struct {
	first, then []byte
	reads       int // reads served from first
	n           int
}

func (r *changingReader) ReadAt(p []byte, off int64) (int, error) {
	r.n++
	src := r.first
	if r.n > r.reads {
		src = r.then
	}
	return bytes.NewReader(src).ReadAt(p, off)
}

// TestStreamedChangedWhileSent: when the bytes read while the response is
// written are not those checked, no valid-looking answer leaves the
// harness: the line is cut short (it does not parse), the stream stays
// line-framed, and serving stops with an error naming the cause.
func TestStreamedChangedWhileSent(t *testing.T) {
	big := bigAnswer(30000)
	chunks := (len(big) + 64<<10 - 1) / (64 << 10)
	for _, tc := range []struct {
		name   string
		change func([]byte)
	}{
		{"byte flipped in the third chunk", func(b []byte) { b[2*64<<10+10] ^= 0x01 }},
		{"newline written in the last chunk", func(b []byte) { b[len(b)-3] = '\n' }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			then := bytes.Clone(big)
			tc.change(then)
			pm := &streamPM{rawPM: newRawPM(), src: &changingReader{first: big, then: then, reads: chunks},
				n: int64(len(big)), sum: crc32.Checksum(big, castagnoli)}
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
			err := pmserver.Serve(ctx, pm, strings.NewReader(in), &out)
			if err == nil || !strings.Contains(err.Error(), "changed since they were checked") {
				t.Errorf("Serve: %v, want the change reported", err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if !strings.HasSuffix(out.String(), "\n") || len(lines) != 3 {
				t.Fatalf("want 3 lines (initialize, diagnostic, cut answer), each ended; got %d", len(lines))
			}
			if cut := lines[2]; json.Valid([]byte(cut)) || len(cut) >= len(big) || !strings.HasPrefix(cut, `{"jsonrpc":"2.0","id":2,"result":[`) {
				t.Errorf("the cut line (%d bytes of %d) parses or is whole: %.100s", len(cut), len(big), cut)
			}
			if pm.closes.Load() != 1 {
				t.Errorf("Close called %d times, want 1", pm.closes.Load())
			}
		})
	}
}

// countingWriter counts the bytes written and the lines ended.
type countingWriter struct{ n, lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// TestStreamedAnswerNotHeld: streaming an 8 MiB answer allocates a small
// fraction of it (one chunk buffer and the checksums), never the answer.
func TestStreamedAnswerNotHeld(t *testing.T) {
	big := bigAnswer(250000)
	if len(big) < 8<<20 {
		t.Fatalf("the answer is %d bytes, want 8 MiB", len(big))
	}
	pm := &streamPM{rawPM: newRawPM()}
	pm.keep(t, big)
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
	serve := func() uint64 {
		var w countingWriter
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := pmserver.Serve(context.Background(), pm, strings.NewReader(in), &w); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if w.lines != 3 || w.n < len(big) {
			t.Fatalf("wrote %d bytes in %d lines", w.n, w.lines)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	serve()
	if alloc := serve(); alloc > uint64(len(big))/8 {
		t.Errorf("serving allocated %d bytes for an answer of %d", alloc, len(big))
	}
	if pm.calls != 2 || pm.computed != 0 {
		t.Errorf("streamed %d times, computed %d; want 2 and 0", pm.calls, pm.computed)
	}
}

// errReader fails every read.
type errReader struct{}

func (errReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("device gone") }

// TestStreamedReadError: a source that cannot be read is refused like a
// damaged one.
func TestStreamedReadError(t *testing.T) {
	pm := &streamPM{rawPM: newRawPM(), src: errReader{}, n: 10}
	pm.decline = true
	_, codes := answers(t, hook(t, pm))
	if codes["2"] != 0 || pm.computed != 1 || pm.closes.Load() != 1 {
		t.Errorf("code %d, ActivePlugins ran %d times, Close %d; want 0, 1, 1", codes["2"], pm.computed, pm.closes.Load())
	}
}

// failingWriter accepts max bytes, then fails every write: a host gone.
type failingWriter struct{ n, max int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.max {
		return 0, errors.New("broken pipe")
	}
	w.n += len(p)
	return len(p), nil
}

// TestStreamedWriteFails: a host that stops reading mid-answer is not a
// changed answer: the source is closed and serving ends as with any
// failed write (at the end of input, no error), not as a cut line.
func TestStreamedWriteFails(t *testing.T) {
	pm := &streamPM{rawPM: newRawPM()}
	pm.keep(t, bigAnswer(30000))
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
	err := pmserver.Serve(context.Background(), pm, strings.NewReader(in), &failingWriter{max: 200 << 10})
	if err != nil {
		t.Errorf("Serve: %v, want the end of input as with any failed write", err)
	}
	if pm.closes.Load() != 1 {
		t.Errorf("Close called %d times, want 1", pm.closes.Load())
	}
}
