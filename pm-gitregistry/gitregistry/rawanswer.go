package gitregistry

import (
	"context"
	"encoding/json"
	"os"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The hook path. The active_plugins answer of a commit depends on nothing
// but the commit's entries, the registry's name (the pm of every id) and the
// commit's directory (the root of every offer): the deps asked about are
// ignored. So the answer is encoded once, when the index is persisted, and
// kept in the index file, after its head, keyed by that name and directory
// (answer). A hook then reads and checks the index's head alone (its
// checksum, format and commit; a few hundred bytes whatever the registry's
// size), checks the stamps of the commit's directories and hands the harness
// the open file with where the answer is and the CRC-32C the head gives for
// it (pmserver.StreamedActivePlugins): no entry is decoded, no offer
// encoded, and the answer, megabytes at 10,000 entries, is never held in
// memory. The harness reads it through one 64 KiB buffer, checks it whole
// against that checksum and its framing before it answers, then sends it:
// to the host's pipe on Linux by splice(2) from the index file, without
// reading it again, elsewhere by reading it again as it writes it, each
// chunk matched against the first read's checksum; a damaged answer is
// never sent. Once the first read holds, the PM sends the diagnostics of
// the entries not offered (VettedStream.Diagnose). Index files are
// replaced by rename, never rewritten in place, so the descriptor gives
// the same bytes to the check and to the host. The
// answer came from pmserver.EncodeOffers when it was kept, so it is valid
// JSON: the harness checks its framing but does not scan it for JSON
// validity. Anything else (no answer kept, another name or directory, a
// damaged index, a stamp that moved) declines, as does the harness on an
// answer that fails its checks, and the usual path answers, builds or
// repairs what it must, and keeps the answer for the next hook.

// ActivePluginsStreamed serves the active_plugins answer kept with the
// current commit's persisted index (pmserver.StreamedActivePlugins): the
// index file, open, with the answer's place and checksum as the head
// gives them, the head's own checksum checked (decodeHead). It declines,
// for the usual path to answer, whenever that answer is not known to be
// exactly what the usual path would send: params it would refuse, a
// registry never fetched, an index not intact or not for this name and
// directory, a directory whose stamps moved.
func (p *PM) ActivePluginsStreamed(ctx context.Context, params json.RawMessage) (pmserver.VettedStream, bool, error) {
	if len(params) > 0 && string(params) != "null" {
		var ap protocol.ActivePluginsParams
		if json.Unmarshal(params, &ap) != nil {
			return pmserver.VettedStream{}, false, nil // the usual path says what is wrong
		}
	}
	c, snap, ok, err := p.current(ctx)
	if err != nil || !ok {
		return pmserver.VettedStream{}, false, nil
	}
	f, head, off, ok := p.answerHead(c, snap)
	if !ok {
		return pmserver.VettedStream{}, false, nil
	}
	return pmserver.VettedStream{
		From: f, Offset: off, Length: head.Answer.Size, Sum: head.Answer.Sum,
		Diagnose: func(ctx context.Context) {
			p.reportOnce(head)
			head.diagnose(ctx, p.cfg.Name, snap.Dir)
			p.log.Debug("served the kept active_plugins answer", "commit", snap.Commit, "bytes", head.Answer.Size)
		},
		Close: f.Close,
	}, true, nil
}

// answerHead opens the commit's persisted index and returns it, its head
// (decodeHead) and the offset of its answer when the head holds an answer
// for this registry's name and the commit's directory that the file is
// long enough to hold, and the directory's stamps hold; ok is false, and
// the file closed, otherwise.
func (p *PM) answerHead(c *gitcache.Cache, snap gitcache.Snapshot) (*os.File, *index, int64, bool) {
	path := c.SidecarPath(snap.Name(), indexSuffix)
	f, size, err := openIndex(path)
	if err != nil {
		return nil, nil, 0, false
	}
	data, err := readHead(f, size, path)
	if err == nil {
		head, stamps, err := decodeHead(data, snap.Commit)
		off := int64(len(data))
		if err == nil && head.Answer.Size > 0 && head.Answer.matches(p.cfg.Name, snap.Dir) &&
			off+head.Answer.Size <= size && stampsHold(snap.Dir, stamps) {
			return f, head, off, true
		}
	}
	f.Close()
	return nil, nil, 0, false
}

// reportOnce logs the problems of the head of a commit's index on the
// first hook of the connection that serves it.
func (p *PM) reportOnce(head *index) {
	p.mu.Lock()
	seen := p.reported[head.Commit]
	p.reported[head.Commit] = true
	p.mu.Unlock()
	if !seen {
		head.report(p.log)
	}
}

// keepAnswer persists idx again with its active_plugins answer when the
// persisted one is missing or was encoded for another name or directory,
// so that the next hook serves it (ActivePluginsStreamed).
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
	return (len(a.JSON) > 0 || a.Size > 0) && a.Name == name && a.Dir == dir
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
