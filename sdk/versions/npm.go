package versions

import "deps.dev/util/semver"

// NPM is node-semver's range semantics: || alternatives, hyphen ranges,
// x-ranges, ~ and ^, and npm's pre-release rule.
var NPM Scheme = system{eco: "npm", sys: semver.NPM}
