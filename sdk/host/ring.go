package host

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// maxStderrLine is the longest stderr line kept; longer ones are cut.
const maxStderrLine = 1024

// ring keeps the last n lines written to a PM's stderr.
type ring struct {
	mu   sync.Mutex
	buf  []string
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]string, n)} }

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf[r.next] = line
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

// lines returns the kept lines, oldest first.
func (r *ring) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.buf[:r.next]...)
	}
	return append(append([]string(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// drain reads rd to its end, keeping each line (cut to maxStderrLine bytes)
// and passing it to each. It never stops reading, so a chatty PM never
// blocks on a full pipe.
func (r *ring) drain(rd io.Reader, each func(string)) {
	br := bufio.NewReaderSize(rd, 16<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxStderrLine {
			line = append(line, chunk[:min(len(chunk), maxStderrLine-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if s := string(bytes.TrimRight(line, "\r\n")); s != "" {
			r.add(s)
			each(s)
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}
