package versions

import (
	"fmt"
	"regexp"
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

// semverStrict is SemVer 2.0's grammar: no leading zeros in numeric parts.
var semverStrict = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

type cargoScheme struct{ system }

func (s cargoScheme) check(v string) error {
	if !semverStrict.MatchString(strings.TrimSpace(v)) {
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
