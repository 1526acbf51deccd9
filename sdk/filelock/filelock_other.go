//go:build !unix && !windows

package filelock

import (
	"errors"
	"os"
)

func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func tryLock(*os.File, Mode) (bool, error) {
	return false, errors.ErrUnsupported
}

func unlock(*os.File) error { return nil }
