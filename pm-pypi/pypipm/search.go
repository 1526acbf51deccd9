package pypipm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"crypto/sha256"
	"encoding/hex"

	"github.com/symposium-dev/symposium-pm/pm-pypi/distinfo"
	"github.com/symposium-dev/symposium-pm/pm-pypi/simpleapi"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// MaxSearchHits bounds the substring matches search resolves.
const MaxSearchHits = 20

// checkInterval is how old the cached project list may be before refresh
// at update level "check" fetches it again.
const checkInterval = time.Hour

type projectList struct {
	Index   string    `json:"index"` // redacted
	Fetched time.Time `json:"fetched"`
	Names   []string  `json:"names"`
}

func (p *PM) projectListPath() string {
	p.indexClient()
	sum := sha256.Sum256([]byte(p.indexCfg.Index))
	return filepath.Join(p.cache, "projects-"+hex.EncodeToString(sum[:8])+".json")
}

// maxProjectList bounds the cached project list read back (256 MiB): it
// holds the names of a root listing, which is itself read up to 256 MiB.
const maxProjectList = 256 << 20

func (p *PM) readProjectList() (*projectList, bool) {
	data, err := pkgfile.ReadUserFile(p.projectListPath(), maxProjectList)
	if err != nil {
		return nil, false
	}
	var pl projectList
	if json.Unmarshal(data, &pl) != nil {
		return nil, false
	}
	return &pl, true
}

// Refresh caches the index's project list (its root listing), which search
// matches substrings against. "none" never touches the network; "check"
// fetches a list older than an hour; "fetch" always fetches.
func (p *PM) Refresh(ctx context.Context, update protocol.UpdateLevel, force bool) (bool, error) {
	switch update {
	case protocol.UpdateNone:
		return false, nil
	case protocol.UpdateCheck, "":
		if pl, ok := p.readProjectList(); ok && time.Since(pl.Fetched) < checkInterval {
			return false, nil
		}
	case protocol.UpdateFetch:
	default:
		return false, protocol.NewError(protocol.CodeInvalidParams, nil, "unknown update level %q", update)
	}
	client := p.indexClient()
	names, err := client.ProjectNames(ctx)
	if err != nil {
		return false, p.indexError(protocol.PackageID{PM: Name, Name: "*", Version: "*"}, err)
	}
	sort.Strings(names)
	pl := projectList{Index: redact.URL(p.indexCfg.Index), Fetched: time.Now().UTC(), Names: names}
	data, err := json.Marshal(pl)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(p.projectListPath()), 0o755); err != nil {
		return false, err
	}
	if err := atomicfile.WriteFile(p.projectListPath(), data, 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// Search looks the query up as an exact (normalized) project name on the
// index, and matches it as a substring against the project list refresh
// cached. Hits carry the newest version and, when known, the summary.
func (p *PM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	q := pyname.Normalize(strings.TrimSpace(query))
	hits := []protocol.SearchHit{}
	if q == "" {
		return hits, nil
	}
	var names []string
	if pyname.Valid(q) {
		names = append(names, q)
	}
	if pl, ok := p.readProjectList(); ok {
		var subs []string
		for _, n := range pl.Names {
			if n != q && strings.Contains(n, q) {
				subs = append(subs, n)
			}
		}
		// Prefix matches first, then shorter names.
		sort.SliceStable(subs, func(i, j int) bool {
			pi, pj := strings.HasPrefix(subs[i], q), strings.HasPrefix(subs[j], q)
			if pi != pj {
				return pi
			}
			if len(subs[i]) != len(subs[j]) {
				return len(subs[i]) < len(subs[j])
			}
			return subs[i] < subs[j]
		})
		if len(subs) > MaxSearchHits {
			subs = subs[:MaxSearchHits]
		}
		names = append(names, subs...)
	}
	results := make([]*protocol.SearchHit, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = p.describe(ctx, n)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r != nil {
			hits = append(hits, *r)
		} else if errs[i] != nil {
			p.log.Debug("search: skipping", "name", names[i], "err", errs[i])
		}
	}
	if len(hits) == 0 {
		for _, err := range errs {
			if err != nil {
				return nil, p.indexError(protocol.PackageID{PM: Name, Name: q, Version: "*"}, err)
			}
		}
	}
	return hits, nil
}

// describe returns the hit for a project: newest version, and the summary
// from an installed copy, the cache or the index's core metadata.
func (p *PM) describe(ctx context.Context, name string) (*protocol.SearchHit, error) {
	proj, err := p.indexClient().Project(ctx, name)
	if err != nil {
		var nf *simpleapi.NotFoundError
		if errors.As(err, &nf) {
			return nil, nil
		}
		return nil, err
	}
	c, ok, _ := pick(name, "", p.pythonVersion(), proj.Files)
	if !ok {
		return nil, nil
	}
	hit := &protocol.SearchHit{ID: pkgID(name, c.version)}
	if env := p.environment(); env != nil {
		if d, ok := env.Lookup(name); ok && canon(d.Version) == c.version {
			hit.Description = d.Summary
			return hit, nil
		}
	}
	// The tree of the very file the index publishes (its sha256 names it),
	// if it was unpacked.
	if validSHA256(c.file.SHA256) {
		if in, ok := p.tree(name, c.version, c.file.SHA256, nil); ok && in.distInfo != "" {
			if data, err := pkgfile.ReadFile(in.distInfo, "METADATA", pkgfile.MaxManifest); err == nil {
				if m, err := distinfo.ParseMetadata(data); err == nil {
					hit.Description = m.Summary
					return hit, nil
				}
			}
		}
	}
	if c.file.CoreMetadata {
		if data, err := p.indexClient().CoreMetadata(ctx, c.file); err == nil {
			if m, err := distinfo.ParseMetadata(data); err == nil {
				hit.Description = m.Summary
			}
		}
	}
	return hit, nil
}
