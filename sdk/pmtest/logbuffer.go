package pmtest

import (
	"bytes"
	"sync"
)

// LogBuffer is an io.Writer that collects what several goroutines write
// (a PM's slog output, a child's stderr) and can be read while they write.
// The zero value is ready to use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
