package gitcache

import (
	"context"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// A remote whose HEAD is detached (a local work tree checked out at a tag or
// an older commit) advertises HEAD as a commit, without the symref that
// names its branch. go-git then guesses HEAD's branch among the refs at the
// same commit, and when none is there it fails every ls-remote and every
// fetch with "reference not found", whatever ref is asked for; git reads
// such a remote. Each transport go-git uses is wrapped so that, in that one
// case, the advertised HEAD is handed to go-git as an ordinary ref at its
// commit: the other refs list and fetch as they do, and HEAD (the default
// ref) resolves to that commit, fetched by its name as git fetches it.
//
// The wrapping is installed when the package is initialized, before any
// fetch, so that go-git's table of transports is never written while read.
func init() {
	schemes := make([]string, 0, len(client.Protocols))
	for s := range client.Protocols {
		schemes = append(schemes, s)
	}
	for _, s := range schemes {
		if t := client.Protocols[s]; t != nil {
			client.InstallProtocol(s, detachedHeadTransport{t})
		}
	}
}

// detachedHeadTransport wraps a transport's upload-pack sessions in
// detachedHeadSession.
type detachedHeadTransport struct{ transport.Transport }

func (t detachedHeadTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	s, err := t.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return detachedHeadSession{s}, nil
}

// detachedHeadSession passes on the session's advertised refs through
// detachHead.
type detachedHeadSession struct{ transport.UploadPackSession }

func (s detachedHeadSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	ar, err := s.UploadPackSession.AdvertisedReferences()
	detachHead(ar)
	return ar, err
}

func (s detachedHeadSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.UploadPackSession.AdvertisedReferencesContext(ctx)
	detachHead(ar)
	return ar, err
}

// detachHead makes an advertised HEAD that go-git cannot place an ordinary
// ref named HEAD at its commit: a HEAD with no symref naming its target
// and, when the remote sends no symrefs at all, no ref at its commit for
// go-git to take as its branch (AdvRefs.resolveHead, which fails then). It
// leaves every other advertisement as go-git reads it.
func detachHead(ar *packp.AdvRefs) {
	if ar == nil || ar.Head == nil {
		return
	}
	for _, v := range ar.Capabilities.Get(capability.SymRef) {
		if strings.HasPrefix(v, "HEAD:") {
			return
		}
	}
	if !ar.Capabilities.Supports(capability.SymRef) {
		for _, h := range ar.References {
			if h == *ar.Head {
				return // go-git takes that ref for HEAD's branch, as before
			}
		}
	}
	if ar.References == nil {
		ar.References = map[string]plumbing.Hash{}
	}
	ar.References[plumbing.HEAD.String()] = *ar.Head
	ar.Head = nil
}
