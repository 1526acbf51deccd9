package versions

import "deps.dev/util/semver"

// Cargo is cargo's version semantics: a bare requirement means caret
// (1.2.3 is ^1.2.3), comma is AND, and a pre-release matches only a
// comparator that names a pre-release of the same major.minor.patch.
var Cargo Scheme = system{eco: "cargo", sys: semver.Cargo}
