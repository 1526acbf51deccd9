package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// ErrNoMatch is returned (wrapped) when no version satisfies a spec.
var ErrNoMatch = errors.New("no version satisfies the requirement")

// Pick chooses the version of p that npm would install for spec, following
// npm-pick-manifest: a spec that is not a valid range is a dist-tag; an
// exact version is taken as is; otherwise the "latest" tag wins when it
// satisfies the range (always for "*" or ""), else the highest satisfying
// version, preferring versions that are not deprecated (a deprecated version
// is still chosen when nothing else satisfies). Engine constraints are not
// considered: plugins are read, not run by node.
func Pick(p *Packument, spec string) (*Version, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = "*"
	}
	if v, ok := p.Versions[spec]; ok {
		return v, nil
	}
	if _, err := versions.NPM.Matches(spec, "0.0.0"); err != nil {
		// Not a range: a dist-tag.
		tagged, ok := p.DistTags[spec]
		if !ok {
			return nil, fmt.Errorf("%s: no dist-tag or valid range %q: %w", p.Name, spec, ErrNoMatch)
		}
		v, ok := p.Versions[tagged]
		if !ok {
			return nil, fmt.Errorf("%s: dist-tag %q names %s, which the packument does not list: %w", p.Name, spec, tagged, ErrNoMatch)
		}
		return v, nil
	}
	if latest, ok := p.DistTags["latest"]; ok {
		if v, ok := p.Versions[latest]; ok && !v.IsDeprecated() {
			if spec == "*" {
				return v, nil
			}
			if m, err := versions.NPM.Matches(spec, latest); err == nil && m {
				return v, nil
			}
		}
	}
	var best *Version
	for ver, v := range p.Versions {
		m, err := versions.NPM.Matches(spec, ver)
		if err != nil || !m {
			continue
		}
		if best == nil || better(v, best) {
			best = v
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s@%s: %w", p.Name, spec, ErrNoMatch)
	}
	return best, nil
}

// better orders candidates: not deprecated first, then the higher version.
func better(a, b *Version) bool {
	da, db := a.IsDeprecated(), b.IsDeprecated()
	if da != db {
		return !da
	}
	c, err := versions.NPM.Compare(a.Version, b.Version)
	return err == nil && c > 0
}
