package benchkit

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// PeakRSS runs cmd (built but not started) to completion through a small
// helper process and returns the peak resident set size of cmd's process
// in KiB, or 0 where the system does not report it; it fails tb if cmd
// fails. Spawned from the benchmark process itself, the kernel would start
// cmd's peak at the benchmark's own (hundreds of MiB after generating a
// large workspace): the helper's peak, that of a bare Go binary, is the
// floor instead. cmd's output is discarded.
func PeakRSS(tb testing.TB, cmd *exec.Cmd) int64 {
	tb.Helper()
	helper := floor(tb, "peakrss")
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	wrapped := exec.Command(helper, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	wrapped.Dir, wrapped.Env, wrapped.Stdin = cmd.Dir, cmd.Env, cmd.Stdin
	var errb bytes.Buffer
	wrapped.Stderr = &errb
	wrapped.ExtraFiles = []*os.File{w}
	err = wrapped.Start()
	w.Close()
	if err != nil {
		tb.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	var report bytes.Buffer
	_, rerr := report.ReadFrom(r)
	if err := wrapped.Wait(); err != nil || rerr != nil {
		tb.Fatalf("%s (peak memory run): %v %v\n%s", strings.Join(cmd.Args, " "), err, rerr, errb.String())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(report.String()), 10, 64)
	if err != nil {
		tb.Fatalf("%s: peak memory report %q: %v", strings.Join(cmd.Args, " "), report.String(), err)
	}
	return kib
}
