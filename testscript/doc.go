// Package testscript holds the cross-PM testscript scenarios (see
// testdata/) and, in pmscript, the commands PM modules use in their own.
package testscript
