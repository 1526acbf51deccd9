package config

import (
	"strconv"

	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// positions locates the keys of one config file, through tomlfile's index:
// a key path is its parts, with the index of an array-of-tables element or
// array item as a part ("package-manager", "0", "name").
type positions struct {
	file string
	idx  *tomlfile.Positions
}

// newPositions indexes data, the contents of file.
func newPositions(file string, data []byte) *positions {
	return &positions{file: file, idx: tomlfile.Index(data)}
}

// at returns the position of the key path, or of its nearest recorded
// parent, or the file alone.
func (p *positions) at(path ...string) Pos {
	return Pos{File: p.file, Line: p.idx.Near(path...).Line}
}

// item returns the position of element i of the array at path.
func (p *positions) item(i int, path ...string) Pos {
	return p.at(append(path, strconv.Itoa(i))...)
}
