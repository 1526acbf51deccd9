// Package regcache holds the part of a git registry's cache layout that two
// programs share: symposium-pm-gitregistry, which writes the cache, and
// symposium-pm status, which finds a registry's cache by its name without
// starting the PM. A registry named N is cached under
// <cache_dir>/<NamePart(N)>/<NamePart(N)>-<hash of URL, ref and subdir>/ (the
// PM's own directory of cache_dir, as the protocol requires), with the commit
// it serves recorded in StateFile there.
package regcache

import "strings"

// StateFile is the file, in a registry's cache directory, that records the
// commit the configured ref resolved to at the last update.
const StateFile = "state.json"

// maxName bounds the name part, so a long registry name cannot make a path
// too long for the file system.
const maxName = 48

// NamePart renders a registry name for use in a directory name: letters,
// digits, '-', '_' and '.' are kept, anything else becomes '_', and the
// result is cut at 48 bytes. A name that renders empty or as dots only is
// "registry".
func NamePart(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= maxName {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || strings.Trim(b.String(), ".") == "" {
		return "registry"
	}
	return b.String()
}
