package gitregistry

import (
	"context"
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The hook path. The active_plugins answer of a commit depends on nothing
// but the commit's entries, the registry's name (the pm of every id) and the
// commit's directory (the root of every offer): the deps asked about are
// ignored. So the answer is encoded once, when the index is persisted, and
// kept in the index file keyed by that name and directory (answer). A hook
// then reads the index file, checks it whole (checksum, format, commit),
// checks the stamps of the commit's directories, sends the diagnostics of
// the entries not offered, and hands the answer to the harness as it is:
// no entry is decoded and no offer encoded. The answer came from
// pmserver.EncodeOffers when it was kept and the head's checksum, checked
// on every read, covers it, so it is served as vetted
// (pmserver.VettedActivePlugins): the harness checks its framing but does
// not scan megabytes of it again for JSON validity.
// Anything else (no answer kept, another name or directory, a damaged
// index, a stamp that moved) declines, and the usual path answers, builds
// or repairs what it must, and keeps the answer for the next hook.

// ActivePluginsVetted serves the active_plugins answer kept with the
// current commit's persisted index (pmserver.VettedActivePlugins): bytes
// EncodeOffers produced, read back only through the head's checksum
// (decodeHead), so a damaged answer is never served. It declines, for
// the usual path to answer, whenever that answer is not known to be exactly
// what the usual path would send: params it would refuse, a registry never
// fetched, an index not intact or not for this name and directory, a
// directory whose stamps moved.
func (p *PM) ActivePluginsVetted(ctx context.Context, params json.RawMessage) (pmserver.Vetted, bool, error) {
	if len(params) > 0 && string(params) != "null" {
		var ap protocol.ActivePluginsParams
		if json.Unmarshal(params, &ap) != nil {
			return nil, false, nil // the usual path says what is wrong
		}
	}
	c, snap, ok, err := p.current(ctx)
	if err != nil || !ok {
		return nil, false, nil
	}
	head := p.answerHead(c, snap)
	if head == nil {
		return nil, false, nil
	}
	head.diagnose(ctx, p.cfg.Name, snap.Dir)
	p.log.Debug("served the kept active_plugins answer", "commit", snap.Commit, "bytes", len(head.Answer.JSON))
	return pmserver.Vetted(head.Answer.JSON), true, nil
}

// answerHead returns the head of the commit's persisted index (decodeHead)
// when it holds an answer for this registry's name and the commit's
// directory and the directory's stamps hold; nil otherwise.
func (p *PM) answerHead(c *gitcache.Cache, snap gitcache.Snapshot) *index {
	p.mu.Lock()
	head, seen := p.heads[snap.Commit]
	p.mu.Unlock()
	if seen {
		return head
	}
	data, err := readIndexHead(c.SidecarPath(snap.Commit, indexSuffix))
	if err != nil {
		return nil
	}
	head, stamps, err := decodeHead(data, snap.Commit)
	if err != nil || len(head.Answer.JSON) == 0 || !head.Answer.matches(p.cfg.Name, snap.Dir) || !stampsHold(snap.Dir, stamps) {
		return nil
	}
	head.report(p.log)
	p.mu.Lock()
	p.heads[snap.Commit] = head
	p.mu.Unlock()
	return head
}

// keepAnswer persists idx again with its active_plugins answer when the
// persisted one is missing or was encoded for another name or directory,
// so that the next hook serves it (ActivePluginsVetted).
func (p *PM) keepAnswer(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot, idx *index) {
	p.mu.Lock()
	kept := idx.Answer.matches(p.cfg.Name, snap.Dir)
	p.mu.Unlock()
	if kept {
		return
	}
	a := p.encodeAnswer(ctx, snap, idx)
	if len(a.JSON) == 0 {
		return
	}
	stamps, err := idx.takeStamps(snap.Dir)
	if err != nil {
		return
	}
	p.mu.Lock()
	idx.Answer = a
	withAnswer := *idx
	p.mu.Unlock()
	p.writeIndex(c, snap, &withAnswer, stamps)
}

// matches reports whether the answer was encoded for this registry name
// and commit directory.
func (a answer) matches(name, dir string) bool {
	return len(a.JSON) > 0 && a.Name == name && a.Dir == dir
}

// encodeAnswer encodes idx's active_plugins answer for this registry's
// name and the commit's directory exactly as the harness sends it
// (pmserver.EncodeOffers). Outside a request (ctx is not one the harness
// serves) no answer is kept.
func (p *PM) encodeAnswer(ctx context.Context, snap gitcache.Snapshot, idx *index) answer {
	b, err := pmserver.EncodeOffers(ctx, p.offers(snap, idx))
	if err != nil {
		p.log.Debug("cannot encode the active_plugins answer; not keeping it", "err", err)
		return answer{}
	}
	return answer{Name: p.cfg.Name, Dir: snap.Dir, JSON: b}
}
