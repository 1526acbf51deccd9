package protocol

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestErrResource(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("unpacking: %w", &fs.PathError{Op: "write", Path: "/c/tmp/x/a.js", Err: syscall.ENOSPC}),
			"fetching npm:x@1: no space left on device writing /c/tmp/x/a.js"},
		{&fs.PathError{Op: "open", Path: "/c/tmp/dl-1.tgz", Err: syscall.ENOENT},
			"fetching npm:x@1: no such file or directory opening /c/tmp/dl-1.tgz (was the directory removed while the PM was using it?)"},
		{&os.LinkError{Op: "rename", Old: "/c/tmp/x", New: "/c/pkg/x", Err: syscall.ENOENT},
			"fetching npm:x@1: no such file or directory renaming /c/tmp/x to /c/pkg/x"},
	} {
		e := ErrResource("fetching npm:x@1", tc.err)
		if e.Code != CodeInternalError || !strings.HasPrefix(e.Message, tc.want) {
			t.Errorf("ErrResource(%v) = %d %q, want -32603 %q", tc.err, e.Code, e.Message, tc.want)
		}
		if !IsResource(tc.err) {
			t.Errorf("IsResource(%v) = false", tc.err)
		}
	}
	if IsResource(fmt.Errorf("bad content")) {
		t.Error("a plain error is a resource failure")
	}
}
