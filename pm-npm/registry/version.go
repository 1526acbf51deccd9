package registry

import (
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// CanonicalVersion returns the canonical form of the npm version v, as
// node-semver's valid() gives it and as npm publishes and locks versions:
// surrounding whitespace, a leading "v" and build metadata dropped
// (" 1.0.0", "1.0.0\n", "v1.0.0" and "1.0.0+build" are all "1.0.0"). It
// reports false when v is not a version (node-semver's strict grammar, as
// sdk/versions.NPM parses it). Only a canonical version names a cache
// directory or is answered as a package's version.
func CanonicalVersion(v string) (string, bool) {
	if _, err := versions.NPM.Compare(v, v); err != nil {
		return "", false
	}
	c := strings.TrimPrefix(strings.TrimSpace(v), "v")
	c, _, _ = strings.Cut(c, "+")
	return c, true
}

// exactVersion reports whether the spec names one version, as
// npm-package-arg classifies a registry spec (semver.valid(spec, loose)),
// and returns that version as npm-pick-manifest looks it up
// (semver.clean): a leading "=" or "v", repeated or spaced, is dropped as
// well. Loose forms beyond these prefixes (leading zeros, a pre-release
// without its "-") are read as ranges, as sdk/versions.NPM reads them.
func exactVersion(spec string) (string, bool) {
	return CanonicalVersion(strings.TrimLeft(spec, "=v \t\n\v\f\r"))
}
