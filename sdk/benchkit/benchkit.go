// Package benchkit measures the hook path of PM binaries side by side: the
// spawn → initialize → list_deps → exit sequence Symposium runs on every
// agent hook, and the floors any Go PM is compared with — a Go binary that
// only starts and exits, and a null PM built with this SDK that answers
// initialize and an empty list_deps.
package benchkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Build compiles the main package pkg (an import path in the current
// workspace) into dir and returns the binary's path.
func Build(tb testing.TB, pkg, dir string) string {
	tb.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

var (
	floorsOnce sync.Once
	floorsDir  string
	floorsErr  error
)

// NullPM returns the path of the null PM: the harness with empty answers.
func NullPM(tb testing.TB) string { return floor(tb, "nullpm") }

// BareGo returns the path of a Go binary that only starts and exits.
func BareGo(tb testing.TB) string { return floor(tb, "barego") }

func floor(tb testing.TB, name string) string {
	tb.Helper()
	floorsOnce.Do(func() {
		// One fixed directory, rebuilt by each process, so runs do not pile
		// up temporary directories.
		floorsDir = filepath.Join(os.TempDir(), "symposium-benchkit")
		if floorsErr = os.MkdirAll(floorsDir, 0o755); floorsErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "internal")
		for _, n := range []string{"nullpm", "barego"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(floorsDir, n), ".")
			cmd.Dir = filepath.Join(src, n)
			if b, err := cmd.CombinedOutput(); err != nil {
				floorsErr = fmt.Errorf("building %s: %v\n%s", n, err, b)
				return
			}
		}
	})
	if floorsErr != nil {
		tb.Fatal(floorsErr)
	}
	return filepath.Join(floorsDir, name)
}

// HookPath runs the hook path once against bin: spawn it in workspace, send
// initialize and list_deps, close its input, read both answers and wait for
// it to exit. It returns the list_deps result. A binary that is not a PM
// (BareGo) is simply run to completion.
func HookPath(tb testing.TB, bin string, args []string, workspace, cacheDir string) []protocol.PackageID {
	tb.Helper()
	init, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
		"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cacheDir, Env: map[string]string{}},
	})
	input := string(init) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"list_deps"}` + "\n"
	cmd := exec.Command(bin, args...)
	cmd.Dir = workspace
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s: %v\n%s", bin, err, errb.String())
	}
	var deps []protocol.PackageID
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var rsp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *protocol.Error `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rsp); err != nil {
			tb.Fatalf("%s: bad response line: %v", bin, err)
		}
		if rsp.Error != nil {
			tb.Fatalf("%s: request %d failed: %v", bin, rsp.ID, rsp.Error)
		}
		if rsp.ID == 2 {
			if err := json.Unmarshal(rsp.Result, &deps); err != nil {
				tb.Fatalf("%s: list_deps result: %v", bin, err)
			}
		}
	}
	return deps
}

// Run runs bin with args to completion, for comparison tools such as
// `cargo metadata` or `npm ls`; it fails the benchmark if bin fails.
func Run(tb testing.TB, dir, bin string, args ...string) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, b)
	}
}
