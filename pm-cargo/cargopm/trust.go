package cargopm

import (
	"os"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// A persisted active_plugins answer is stamped on what a user edits and
// trusts what cargo owns (see ActivePlugins):
//
//   - a crate cargo unpacked under $CARGO_HOME/registry/src/<index>/ is
//     written once per version, completed by its .cargo-ok marker, and
//     never rewritten: cargo adds and removes such directories, which
//     changes the listing of <index>, and that listing is the record;
//   - a crate `cargo vendor` wrote carries .cargo-checksum.json, which
//     cargo checks every file of the crate against before it builds, so a
//     hand edit there is not a state cargo accepts. `cargo vendor`
//     removes and rewrites every directory it vendors without a version
//     suffix, and adds and removes the others, which changes the listing
//     of the vendor directory: that listing is the record, with the
//     workspace's Cargo.lock, which changes when a vendored git
//     dependency moves to another revision of the same version.
//
// A crate without its marker (a hand-made tree, a link where cargo writes
// a directory) is stamped file by file, as are path dependencies and
// workspace members: what the user edits.

// checksumFile is the file `cargo vendor` writes in every crate it
// vendors, and without which cargo refuses a directory source.
const checksumFile = ".cargo-checksum.json"

// unpackedMarker is the file cargo writes in a registry source once it is
// completely unpacked.
const unpackedMarker = ".cargo-ok"

// ownedBy reports whether dir is a real directory (not a link) holding
// marker as a regular file: the sign that cargo wrote the crate and owns
// its content.
func ownedBy(dir, marker string) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	fi, err := os.Lstat(filepath.Join(dir, marker))
	return err == nil && fi.Mode().IsRegular()
}

// unpacked reports whether cargo completely unpacked the registry source
// dir, a directory of the index directory sd, and whether that source is
// cargo's own (see ownedBy). The record of an owned source is sd's
// listing, recorded in rec; any other source is recorded by its directory
// and its marker, so that a marker written later is seen.
func (s *sources) unpacked(sd, dir string) (ok, owned bool) {
	if s.rec != nil {
		s.rec.ObserveDir(sd)
	}
	if ownedBy(dir, unpackedMarker) {
		return true, true
	}
	// An absent dir is covered by sd's listing; an existing one by its own
	// stamp, which changes when the marker appears.
	s.rec.Observe(dir)
	marker := filepath.Join(dir, unpackedMarker)
	s.rec.Observe(marker)
	_, err := os.Stat(marker)
	return err == nil, false
}

// crateRecorder returns the recorder the files of crate lc are recorded
// in: none for a crate cargo owns, whose record is its container's
// listing, taken when the crate was found.
func crateRecorder(lc localCrate, rec *depcache.Recorder) *depcache.Recorder {
	if lc.Owned {
		return nil
	}
	return rec
}
