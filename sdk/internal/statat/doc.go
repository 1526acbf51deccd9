// Package statat stats many paths that lie below a few shared directories
// (node_modules, site-packages, a vendor directory) relative to those
// directories, opened once, so that the kernel walks the last two or three
// components of each path rather than all of them. It exists on Linux
// only; elsewhere callers stat paths whole.
package statat
