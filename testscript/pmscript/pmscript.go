// Package pmscript provides the commands that testscript scenarios use to
// drive package-manager binaries over stdin and stdout.
//
// Register them with testscript.Main (or RunMain) next to the binaries under
// test:
//
//	func TestMain(m *testing.M) {
//		testscript.Main(m, pmscript.Commands(map[string]func(){
//			"symposium-pm-cargo": func() { cargopm.Main() },
//		}))
//	}
//
// and use them in scripts as ordinary commands: exec pmcall reqs.jsonl -- symposium-pm-cargo
package pmscript

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/host"
)

// Commands returns the pmscript commands merged with mains, the binaries
// under test, ready for testscript.Main.
func Commands(mains map[string]func()) map[string]func() {
	out := map[string]func(){
		"pmcall":  func() { os.Exit(PMCall(os.Args[1:], os.Stdout, os.Stderr)) },
		"pmalive": func() { os.Exit(PMAlive(os.Args[1:], os.Stdout, os.Stderr)) },
	}
	for k, v := range mains {
		out[k] = v
	}
	return out
}

const pmcallUsage = `usage: pmcall [-timeout D] [-raw] REQUESTS -- COMMAND [ARGS...]

Starts COMMAND, writes the requests in the file REQUESTS (one JSON message a
line; $VAR and ${VAR} are expanded from the environment) to its stdin, closes
stdin, and prints every response line sorted by id, with the value of $WORK
replaced by the text $WORK, so goldens are stable. Keys are sorted within each
response unless -raw. The exit code is the PM's; 124 when it did not exit
within the timeout (it is then killed).
`

// PMCall is the pmcall command.
func PMCall(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pmcall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 30*time.Second, "how long the PM may take to answer everything and exit")
	raw := fs.Bool("raw", false, "print response lines as the PM wrote them")
	fs.Usage = func() { fmt.Fprint(fs.Output(), pmcallUsage); fs.PrintDefaults() }
	dash := slices.Index(args, "--")
	flags := args
	if dash >= 0 {
		flags = args[:dash]
	}
	// What the flag package prints is held until the outcome is known:
	// help asked for goes to stdout, as careful tools print it (the SDK's
	// commands do the same); a usage error and the usage stay on stderr.
	var printed bytes.Buffer
	fs.SetOutput(&printed)
	err := fs.Parse(flags)
	if errors.Is(err, flag.ErrHelp) {
		printed.WriteTo(stdout)
		return 0
	}
	fs.SetOutput(stderr)
	printed.WriteTo(stderr)
	if err != nil {
		return 2
	}
	if dash < 0 || dash == len(args)-1 || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	reqs, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "pmcall: %v\n", err)
		return 2
	}
	input := os.Expand(string(reqs), os.Getenv)
	command := args[dash+1:]

	var out bytes.Buffer
	code, err := run(command, input, *timeout, &out, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pmcall: %v\n", err)
		return 2
	}
	if code == 124 {
		fmt.Fprintf(stderr, "pmcall: %s did not finish within %v\n", command[0], *timeout)
	}
	lines, err := sortResponses(out.Bytes(), *raw)
	if err != nil {
		fmt.Fprintf(stderr, "pmcall: %v\n", err)
		return 1
	}
	work := os.Getenv("WORK")
	for _, l := range lines {
		if work != "" {
			l = strings.ReplaceAll(l, work, "$WORK")
		}
		fmt.Fprintln(stdout, l)
	}
	return code
}

// run starts command through the host's PM client (in a process group of
// its own), writes input to its stdin and closes it, copies its stdout to
// out and its stderr to stderr, and returns its exit code once it has exited
// and its output is read: 124 when it did not exit within timeout, in which
// case it and its process group are killed.
func run(command []string, input string, timeout time.Duration, out, stderr io.Writer) (int, error) {
	p, err := host.StartProcess(host.Spec{Command: command[0], Args: command[1:]},
		host.ProcessOptions{StderrTo: stderr, StdoutTo: out, StderrLines: 1})
	if err != nil {
		return 0, err
	}
	go func() {
		// A PM that does not read its input is killed at the timeout,
		// which ends the write.
		p.Write([]byte(input))
		p.CloseInput()
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			// Every byte read is copied to out, lines over the bound too.
			var tooLong *framing.TooLongError
			if _, err := p.ReadLine(); err != nil && !errors.As(err, &tooLong) {
				return
			}
		}
	}()
	// The input is closed by the writer, once written: the PM is given the
	// timeout to answer it all and exit by itself.
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	byItself := false
	select {
	case <-p.Exited():
		byItself = true
	case <-timer.C:
	}
	p.Stop(host.Timeouts{Drain: time.Second}, nil) // and what it left in its group
	// A process the PM started outside its group may hold its stdout.
	select {
	case <-read:
	case <-time.After(time.Second):
		p.CloseOutput()
		<-read
	}
	if !byItself {
		return 124, nil
	}
	var ee *exec.ExitError
	if err := p.ExitErr(); errors.As(err, &ee) {
		return ee.ExitCode(), nil
	} else if err != nil {
		return 0, err
	}
	return 0, nil
}

// sortResponses splits output into lines and orders them by id: numbers
// first in numeric order, then strings, then null.
func sortResponses(out []byte, raw bool) ([]string, error) {
	type line struct {
		text string
		num  *float64
		str  *string
	}
	var lines []line
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		text := sc.Text()
		var env struct {
			ID any `json:"id"`
		}
		if err := json.Unmarshal([]byte(text), &env); err != nil {
			lines = append(lines, line{text: text}) // garbage is printed as is, last
			continue
		}
		if !raw {
			var v any
			json.Unmarshal([]byte(text), &v)
			b, _ := json.Marshal(v)
			text = string(b)
		}
		l := line{text: text}
		switch id := env.ID.(type) {
		case float64:
			l.num = &id
		case string:
			l.str = &id
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading responses: %w", err)
	}
	rank := func(l line) int {
		switch {
		case l.num != nil:
			return 0
		case l.str != nil:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(lines, func(a, b line) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		switch {
		case a.num != nil:
			return cmp.Compare(*a.num, *b.num)
		case a.str != nil:
			return strings.Compare(*a.str, *b.str)
		}
		return 0
	})
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	return texts, nil
}

// PMAlive is the pmalive command: pmalive PIDFILE exits 0 when any process
// listed in PIDFILE (one pid a line) is still running, and 1 when none is,
// so that `! pmalive pids` asserts a PM left nothing behind.
func PMAlive(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: pmalive PIDFILE")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "pmalive: %v\n", err)
		return 2
	}
	alive := false
	for _, f := range strings.Fields(string(data)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err != nil || pid <= 0 {
			fmt.Fprintf(stderr, "pmalive: bad pid %q\n", f)
			return 2
		}
		if processAlive(pid) {
			fmt.Fprintf(stdout, "process %d is alive\n", pid)
			alive = true
		}
	}
	if alive {
		return 0
	}
	return 1
}
