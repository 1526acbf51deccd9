package versions

import (
	"fmt"
	"strings"

	"deps.dev/util/semver"
)

// Cargo is cargo's version semantics: a bare requirement means caret
// (1.2.3 is ^1.2.3), comma is AND, and a pre-release matches only a
// comparator that names a pre-release of the same major.minor.patch.
//
// Requirements follow deps.dev's Cargo system, which the differential test
// against the real cargo (cargo_test.go) shows agrees with cargo's resolver.
// Versions are stricter than deps.dev's: cargo (the semver crate) accepts
// only complete MAJOR.MINOR.PATCH versions with SemVer 2.0 pre-release and
// build identifiers, so "1" and "1.2" are requirements, never versions.
var Cargo Scheme = cargoScheme{system{eco: "cargo", sys: semver.Cargo}}

// strictSemver reports whether v follows SemVer 2.0's grammar exactly:
// MAJOR.MINOR.PATCH without leading zeros, optional dot-separated
// pre-release identifiers (numeric ones without leading zeros) and build
// identifiers. It is hand-written rather than a regular expression so the
// package costs nothing at program start.
func strictSemver(v string) bool {
	core, build, hasBuild := strings.Cut(v, "+")
	if hasBuild && !identifiers(build, false) {
		return false
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre && !identifiers(pre, true) {
		return false
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !numeric(p) || (len(p) > 1 && p[0] == '0') {
			return false
		}
	}
	return true
}

// identifiers checks dot-separated identifiers of [0-9A-Za-z-]; with
// noLeadingZero, purely numeric ones may not start with 0.
func identifiers(s string, noLeadingZero bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return false
			}
		}
		if noLeadingZero && numeric(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type cargoScheme struct{ system }

func (s cargoScheme) check(v string) error {
	if !strictSemver(strings.TrimSpace(v)) {
		return errVersion(s.eco, v, fmt.Errorf("want MAJOR.MINOR.PATCH[-PRE][+BUILD]"))
	}
	return nil
}

func (s cargoScheme) Compare(a, b string) (int, error) {
	if err := s.check(a); err != nil {
		return 0, err
	}
	if err := s.check(b); err != nil {
		return 0, err
	}
	return s.system.Compare(a, b)
}

func (s cargoScheme) Matches(req, v string) (bool, error) {
	if err := s.check(v); err != nil {
		return false, err
	}
	return s.system.Matches(req, v)
}
