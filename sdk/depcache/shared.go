package depcache

import (
	"sync"
	"time"
)

// SharedRead shares reads of a cache entry among the requests of one
// connection. A host pipelines list_deps and active_plugins, and a PM
// whose two answers are read from the same persisted entry would
// otherwise read it, and stat every input it records, twice at the same
// moment. A read, whether it found the entry fresh or missed (the entry
// absent, stale or unusable), is reused for VerifiedWindow from its start,
// as Verified uses a stamp, and a request arriving while a read is in
// flight waits for it: a cold hook reads an absent entry once, and the
// request that computes the answer and stores it calls Forget. The zero
// value is ready to use and it is safe for concurrent use.
type SharedRead struct {
	mu   sync.Mutex
	last *sharedRead
}

type sharedRead struct {
	key  string
	at   time.Time     // when the read began
	done chan struct{} // closed once data and ok are set
	data []byte
	ok   bool
}

// Load returns c.Load(key), from the last read of key when it began within
// VerifiedWindow, waiting for it if it is still in flight. The bytes
// returned are shared: the caller must not modify them.
func (s *SharedRead) Load(c *Cache, key string) ([]byte, bool) {
	now := time.Now()
	s.mu.Lock()
	if r := s.last; r != nil && r.key == key && now.Sub(r.at) < VerifiedWindow {
		s.mu.Unlock()
		<-r.done
		return r.data, r.ok
	}
	r := &sharedRead{key: key, at: now, done: make(chan struct{})}
	s.last = r
	s.mu.Unlock()
	r.data, r.ok = c.Load(key)
	close(r.done)
	return r.data, r.ok
}

// Forget drops the last read, so that the next Load reads the entry: call
// it after storing the entry again.
func (s *SharedRead) Forget() {
	s.mu.Lock()
	s.last = nil
	s.mu.Unlock()
}
