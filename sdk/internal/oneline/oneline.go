// Package oneline keeps text that comes from a PM or a package on one line
// of a report or a table row.
package oneline

import "strings"

// Flatten returns s with each line break (CRLF, LF or CR) and each tab
// replaced by one space, so that it stays on its line and in its column.
func Flatten(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}
