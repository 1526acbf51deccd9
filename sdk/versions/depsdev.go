package versions

import (
	"strings"

	"deps.dev/util/semver"
)

// system adapts a deps.dev semver.System to Scheme.
type system struct {
	eco string
	sys semver.System
}

func (s system) Ecosystem() string { return s.eco }

func (s system) Compare(a, b string) (int, error) {
	va, err := s.sys.Parse(a)
	if err != nil {
		return 0, errVersion(s.eco, a, err)
	}
	vb, err := s.sys.Parse(b)
	if err != nil {
		return 0, errVersion(s.eco, b, err)
	}
	return va.Compare(vb), nil
}

func (s system) Matches(req, v string) (bool, error) {
	ver, err := s.sys.Parse(v)
	if err != nil {
		return false, errVersion(s.eco, v, err)
	}
	req = strings.TrimSpace(req)
	if req == "" {
		req = "*"
	}
	c, err := s.sys.ParseConstraint(req)
	if err != nil {
		return false, errRequirement(s.eco, req, err)
	}
	return c.MatchVersion(ver), nil
}
