package cargopm

import (
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// snapLoad is one read of the persisted snapshot, shared by the requests
// of a hook. list_deps and active_plugins both need the snapshot (its
// dependencies, and the layout the plugins are looked up in), and a host
// pipelines them, so both used to read the entry and stat every input it
// records at the same moment: one stat per member manifest, twice. A read
// is reused for depcache.VerifiedWindow, as depcache.Verified trusts a
// stamp, and a request arriving while it is in flight waits for it.
type snapLoad struct {
	key  string
	done chan struct{} // closed once raw, ok and at are set
	raw  []byte
	ok   bool
	at   time.Time
}

// loadSnapshot returns the persisted snapshot entry under key in cache
// (depcache.Cache.Load), reading it at most once per
// depcache.VerifiedWindow.
func (p *PM) loadSnapshot(cache *depcache.Cache, key string) ([]byte, bool) {
	p.mu.Lock()
	if l := p.snap; l != nil && l.key == key {
		p.mu.Unlock()
		<-l.done
		if l.ok && time.Since(l.at) < depcache.VerifiedWindow {
			return l.raw, true
		}
		p.mu.Lock()
		if p.snap != l { // another request started a fresh read meanwhile
			l = p.snap
			p.mu.Unlock()
			if l != nil && l.key == key {
				<-l.done
				return l.raw, l.ok
			}
			return cache.Load(key)
		}
	}
	l := &snapLoad{key: key, done: make(chan struct{})}
	p.snap = l
	p.mu.Unlock()
	l.raw, l.ok = cache.Load(key)
	l.at = time.Now()
	close(l.done)
	return l.raw, l.ok
}

// forgetSnapshot drops the shared read after the snapshot was computed
// and stored again, so that the next request reads what was stored.
func (p *PM) forgetSnapshot() {
	p.mu.Lock()
	p.snap = nil
	p.mu.Unlock()
}
