package pypipm

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// countingPM counts, in computed, the active_plugins requests the harness
// answers through ActivePlugins rather than from an encoded answer
// (ActivePluginsRaw).
type countingPM struct {
	*PM
	computed *atomic.Int32
}

func (c countingPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	c.computed.Add(1)
	return c.PM.ActivePlugins(ctx, deps)
}

// TestRawAnswerInvalidation: the second hook is answered from the encoded
// answer the first persisted (ActivePlugins is not called); after each
// change of cacheCases, the next hook computes the answer again and it is
// exactly what a PM without a cache answers; after a change the cache
// deliberately does not see (a hand edit inside an installed
// distribution), the next hook is still served the first answer.
func TestRawAnswerInvalidation(t *testing.T) {
	for _, tc := range cacheCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own workspace and cache
			ws := t.TempDir()
			deps := cacheProject(t, ws)
			if tc.setup != nil {
				tc.setup(t, ws)
			}
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			env := testEnv(t, nil)
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} }, Deps: deps,
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
			}
			cached := hook(t.TempDir())
			if !tc.unseen {
				pmtest.CheckServedEncoded(t, cached, hook(""), &computed, func() { tc.change(t, ws) })
				return
			}
			first := cached.Run(t).Offers
			tc.change(t, ws)
			computed.Store(0)
			got := cached.Run(t).Offers
			if n := computed.Load(); n != 0 {
				t.Errorf("after a hand edit inside an installed distribution the cached PM computed %d answers, want 0 (served encoded)", n)
			}
			checkUnseen(t, first, got, hook("").Run(t).Offers)
		})
	}
}
