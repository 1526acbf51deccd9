// Command peakrss runs a command and writes the peak resident set size of
// its process, in KiB, on file descriptor 3 (one decimal number), then exits
// with the command's status. It is small on purpose: on Linux a process
// starts its peak at the peak of the process that spawned it, so benchkit
// spawns the measured binary through this one instead of through a large
// benchmark process. Its own peak (that of a bare Go binary) is the floor
// of what it can report.
//
// Usage: peakrss BIN [ARG...]
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss BIN [ARG...]")
		os.Exit(2)
	}
	report := os.NewFile(3, "report")
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	p, err := os.StartProcess(os.Args[1], os.Args[1:], &os.ProcAttr{Dir: wd, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	st, err := p.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	if report != nil {
		fmt.Fprintf(report, "%d\n", peakKiB(st))
	}
	os.Exit(st.ExitCode())
}
