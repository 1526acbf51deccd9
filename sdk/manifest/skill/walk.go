package skill

import (
	"context"
	"os"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/skilltree"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// The walk of a plugin's skill groups is package skilltree's, repeated
// here for callers that also parse skills.

// Limits bound the walk of one plugin's skill groups (see
// skilltree.Limits).
type Limits = skilltree.Limits

// WalkResult is what the walk of one plugin's skill groups found (see
// skilltree.WalkResult).
type WalkResult = skilltree.WalkResult

// The default walk bounds (see skilltree.DefaultDepth).
const (
	DefaultDepth   = skilltree.DefaultDepth
	DefaultEntries = skilltree.DefaultEntries
	DefaultTime    = skilltree.DefaultTime
)

// MaxProblems is how many of a walk's left-out entries are named in
// WalkResult.Problems; the rest are only counted.
const MaxProblems = skilltree.MaxProblems

// MarkerFile marks an installed copy of a skill; directories holding it are
// skipped when scanning skill groups.
const MarkerFile = skilltree.MarkerFile

// MaxFileSize bounds a SKILL.md read while checking a plugin: the
// cap of every manifest read from a package.
const MaxFileSize = pkgfile.MaxManifest

// Walk lists the SKILL.md files of the skill groups groups (paths relative
// to root) as Symposium scans them; see skilltree.Walk.
func Walk(ctx context.Context, root *os.Root, groups []string, lim Limits) WalkResult {
	return skilltree.Walk(ctx, root, groups, lim)
}

// LeadsOutside reports whether err is os.Root refusing a path that resolves
// outside the root; see skilltree.LeadsOutside.
func LeadsOutside(err error) bool { return skilltree.LeadsOutside(err) }

// Scan lists the SKILL.md files of a skill group directory; see
// skilltree.Scan.
func Scan(dir string) []string { return skilltree.Scan(dir) }

// Embeds reports whether root/skills holds a regular file named SKILL.md
// at any depth; see skilltree.Embeds.
func Embeds(root string) bool { return skilltree.Embeds(root) }
