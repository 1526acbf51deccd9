package pypipm

import (
	"os"
	"path/filepath"
)

// What active_plugins trusts without a stamp of its own. Installers (pip,
// uv, poetry, pdm) write a distribution's files into site-packages once per
// install: the <name>-<version>.dist-info directory, the files it lists in
// RECORD (its top-level packages, SYMPOSIUM.toml among them) and RECORD
// itself (pip writes it last). They never rewrite them in place: an
// upgrade, a downgrade, a reinstall (--force-reinstall) or an uninstall
// removes the dist-info directory and, but for the uninstall, creates a
// new one, which changes the site-packages directory's own modification
// and change times. That stamp, recorded for every answer
// (recordEnvironment), is the installer's record of what is installed, so
// the files of such a distribution are not stamped one by one: a cached
// answer costs one stat per site-packages directory (and one per plugin
// root) rather than four per distribution. A hand edit inside an installed
// distribution is seen after the installer next installs or removes
// anything in that virtualenv, or once the PM's cache directory is deleted
// (see the README).
//
// What a user edits in ordinary work stays stamped file by file: the
// source tree of an editable install (direct_url.json with
// dir_info.editable, corroborated by a .pth file or __editable__ finder the
// distribution installed) and its dist-info, path dependencies' trees, and
// the copies unpacked in the PM's cache. A dist-info directory without a
// RECORD was not written by an installer that finished (a hand-made tree,
// or a pip install still running): it is stamped file by file too, so
// that the RECORD written when the install finishes is seen.

// ownedByInstaller reports whether the dist-info directory distInfo,
// found in a site-packages directory, holds a RECORD that is a regular
// file: the file pip writes last, which marks a distribution an installer
// installed and finished installing.
func ownedByInstaller(distInfo string) bool {
	fi, err := os.Lstat(filepath.Join(distInfo, "RECORD"))
	return err == nil && fi.Mode().IsRegular()
}
