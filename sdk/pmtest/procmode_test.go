package pmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// procModeEnv, set in a child's environment, makes the test binary run as
// one of the misbehaving or echoing programs of procMode, for the tests of
// Proc.
const procModeEnv = "PMTEST_PROC_MODE"

// procMode runs the test binary as a program that Proc's tests start:
//
//   - "crash" reads a line, writes its last words to stderr and exits with
//     status 3 without answering it;
//   - "silent" writes to stderr, reads its input to the end and answers
//     nothing;
//   - "garbage" writes to stderr and a line that is not JSON to stdout;
//   - "echo" answers every request with the request, the initialize params
//     it was given, its arguments, environment, working directory and pid,
//     and exits at the end of its input;
//   - "stubborn" answers like echo but does not exit at the end of its
//     input;
//   - "parent" answers like stubborn, after starting a "sleeper" child
//     whose pid it adds to its answers;
//   - "sleeper" sleeps.
func procMode(mode string) int {
	switch mode {
	case "crash":
		bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Fprintln(os.Stderr, "boom: the last words of a crashing PM")
		return 3
	case "silent":
		fmt.Fprintln(os.Stderr, "stuck on purpose")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "garbage":
		fmt.Fprintln(os.Stderr, "about to write garbage")
		fmt.Println("this line is not JSON")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "sleeper":
		time.Sleep(10 * time.Minute)
		return 0
	case "echo", "stubborn", "parent":
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	child := 0
	if mode == "parent" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cmd := exec.Command(exe)
		cmd.Env = []string{procModeEnv + "=sleeper"}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		child = cmd.Process.Pid
	}
	wd, _ := os.Getwd()
	var init json.RawMessage
	sc := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if req.Method == "initialize" {
			init = req.Params
		}
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
			"request": json.RawMessage(append([]byte(nil), sc.Bytes()...)),
			"init":    init,
			"args":    os.Args[1:],
			"env":     os.Environ(),
			"dir":     wd,
			"pid":     os.Getpid(),
			"child":   child,
		}})
	}
	if mode != "echo" {
		time.Sleep(10 * time.Minute)
	}
	return 0
}
