// Package versions gives each ecosystem's version semantics one interface:
// comparing exact versions, matching a requirement, and selecting the best
// candidate for a requirement. Cargo, npm and PEP 440 (PyPI) each have their
// own rules for bare versions, pre-releases and operators; the host uses this
// package to evaluate depends-on gates and the PMs to resolve load_plugin and
// fetch requirements.
package versions

import (
	"fmt"
	"slices"
)

// Scheme is one ecosystem's version semantics.
type Scheme interface {
	// Ecosystem is the name of the PM whose semantics this is.
	Ecosystem() string
	// Compare orders two exact versions: -1, 0 or +1.
	Compare(a, b string) (int, error)
	// Matches reports whether the exact version v satisfies the requirement
	// req, following the ecosystem's pre-release rule. "*" is the empty
	// requirement.
	Matches(req, v string) (bool, error)
}

// Select returns the greatest candidate satisfying req under s. Candidates
// that are not valid versions are skipped. It reports false when none match.
func Select(s Scheme, req string, candidates []string) (string, bool, error) {
	var best string
	found := false
	for _, c := range candidates {
		ok, err := s.Matches(req, c)
		if err != nil {
			if _, perr := s.Compare(c, c); perr != nil {
				continue // not a version: skip it
			}
			return "", false, err
		}
		if !ok {
			continue
		}
		if !found {
			best, found = c, true
			continue
		}
		if cmp, err := s.Compare(c, best); err == nil && cmp > 0 {
			best = c
		}
	}
	return best, found, nil
}

// Sort sorts vs in ascending order under s; invalid versions sort first.
func Sort(s Scheme, vs []string) {
	slices.SortStableFunc(vs, func(a, b string) int {
		c, err := s.Compare(a, b)
		if err != nil {
			_, ea := s.Compare(a, a)
			_, eb := s.Compare(b, b)
			switch {
			case ea != nil && eb == nil:
				return -1
			case ea == nil && eb != nil:
				return 1
			}
			return 0
		}
		return c
	})
}

// ForPM returns the scheme for the PM named pm, if this package knows it.
func ForPM(pm string) (Scheme, bool) {
	switch pm {
	case "cargo":
		return Cargo, true
	case "npm":
		return NPM, true
	case "pypi":
		return PEP440, true
	}
	return nil, false
}

func errVersion(eco, v string, err error) error {
	return fmt.Errorf("%s: invalid version %q: %w", eco, v, err)
}

func errRequirement(eco, req string, err error) error {
	return fmt.Errorf("%s: invalid version requirement %q: %w", eco, req, err)
}
