package protocol

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrResource reports a failure of the machine a PM runs on (a full disk,
// a cache directory removed underneath it, a permission) as what it is: an
// internal error (-32603) whose message says the cause and the path, as in
// "fetching npm:x@1.0.0: no space left on device writing /cache/tmp/x".
// what says what the PM was doing ("" for nothing). It is not for problems
// of a package or a registry, which have codes of their own.
func ErrResource(what string, err error) *Error {
	msg := DescribeIO(err)
	if what != "" {
		msg = what + ": " + msg
	}
	return NewError(CodeInternalError, nil, "%s", msg)
}

// IsResource reports whether err is a failure of the file system or the
// operating system (it wraps an *fs.PathError, *os.LinkError or
// *os.SyscallError), rather than one of content or protocol.
func IsResource(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se)
}

// DescribeIO words a file-system failure as "<cause> <doing> <path>", e.g.
// "no space left on device writing /cache/x", adding a hint when a file
// the PM made has vanished. Other errors are returned as their message.
func DescribeIO(err error) string {
	var le *os.LinkError
	if errors.As(err, &le) {
		return describeErrno(le.Err) + " " + verb(le.Op) + " " + le.Old + " to " + le.New + hint(le.Err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return describeErrno(pe.Err) + " " + verb(pe.Op) + " " + pe.Path + hint(pe.Err)
	}
	return err.Error()
}

func describeErrno(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

func hint(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return " (was the directory removed while the PM was using it?)"
	}
	return ""
}

func verb(op string) string {
	switch op {
	case "write", "writeat":
		return "writing"
	case "read", "readat":
		return "reading"
	case "open", "openat":
		return "opening"
	case "close":
		return "closing"
	case "mkdir", "mkdirat":
		return "creating"
	case "rename", "renameat":
		return "renaming"
	case "remove", "unlinkat":
		return "removing"
	case "stat", "lstat", "fstatat":
		return "checking"
	case "chmod", "fchmod":
		return "setting the mode of"
	case "seek":
		return "seeking in"
	case "sync", "fsync":
		return "syncing"
	case "":
		return "at"
	}
	return "(" + op + ")"
}
