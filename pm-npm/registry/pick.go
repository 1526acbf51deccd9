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
// npm-pick-manifest: an exact version names the version listed under its
// canonical form and no other (a packument key " 1.0.0" or "1.0.0+build"
// is not the 1.0.0 asked for, as npm answers ETARGET); a spec that is not
// a valid range is a dist-tag, naming the key it gives as written;
// otherwise the "latest" tag wins when it satisfies the range (always for
// "*" or ""), else the highest satisfying version, preferring versions that
// are not deprecated (a deprecated version is still chosen when nothing
// else satisfies). Keys are matched against ranges as node-semver reads
// them (" 1.0.1" satisfies ^1), and the Version picked is always canonical
// (see CanonicalVersion). Engine constraints are not considered: plugins
// are read, not run by node.
func Pick(p *Packument, spec string) (*Version, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = "*"
	}
	if exact, ok := exactVersion(spec); ok {
		v, ok := p.Versions[exact]
		if !ok {
			return nil, fmt.Errorf("%s@%s: no version %s in the packument: %w", p.Name, spec, exact, ErrNoMatch)
		}
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
	bestKey := ""
	for key, v := range p.Versions {
		m, err := versions.NPM.Matches(spec, key)
		if err != nil || !m {
			continue
		}
		if best == nil || better(v, key, best, bestKey) {
			best, bestKey = v, key
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s@%s: %w", p.Name, spec, ErrNoMatch)
	}
	return best, nil
}

// better orders candidates: not deprecated first, then the higher version;
// between keys of one version ("1.0.0" and " 1.0.0"), the canonical key,
// then the lesser key, so that the choice does not depend on map order.
func better(a *Version, aKey string, b *Version, bKey string) bool {
	da, db := a.IsDeprecated(), b.IsDeprecated()
	if da != db {
		return !da
	}
	c, err := versions.NPM.Compare(a.Version, b.Version)
	if err != nil || c != 0 {
		return err == nil && c > 0
	}
	if ac, bc := aKey == a.Version, bKey == b.Version; ac != bc {
		return ac
	}
	return aKey < bKey
}
