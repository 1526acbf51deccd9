package versions

import "deps.dev/util/semver"

// PEP440 is the version and specifier semantics of PEP 440 (PyPI).
var PEP440 Scheme = system{eco: "pypi", sys: semver.PyPI}
