package depcache

import (
	"sync"
	"time"
)

// SharedRead shares reads of a cache entry among the requests of one
// connection. A host pipelines list_deps and active_plugins, and a PM
// whose two answers are read from the same persisted entry would
// otherwise read it, and stat every input it records, twice at the same
// moment (Verified only spares a check that follows another). A read is
// reused for VerifiedWindow, as Verified trusts a stamp, and a request
// arriving while a read is in flight waits for it. The zero value is
// ready to use and it is safe for concurrent use.
type SharedRead struct {
	mu   sync.Mutex
	last *sharedRead
}

type sharedRead struct {
	key  string
	done chan struct{} // closed once data, ok and at are set
	data []byte
	ok   bool
	at   time.Time
}

// Load returns c.Load(key), from the last read of key when it found the
// entry fresh within VerifiedWindow or is still in flight. The bytes
// returned are shared: the caller must not modify them.
func (s *SharedRead) Load(c *Cache, key string) ([]byte, bool) {
	s.mu.Lock()
	if r := s.last; r != nil && r.key == key {
		s.mu.Unlock()
		<-r.done
		if r.ok && time.Since(r.at) < VerifiedWindow {
			return r.data, true
		}
		s.mu.Lock()
		if s.last != r { // another request started a fresh read meanwhile
			r = s.last
			s.mu.Unlock()
			if r != nil && r.key == key {
				<-r.done
				return r.data, r.ok
			}
			return c.Load(key)
		}
	}
	r := &sharedRead{key: key, done: make(chan struct{})}
	s.last = r
	s.mu.Unlock()
	r.data, r.ok = c.Load(key)
	r.at = time.Now()
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
