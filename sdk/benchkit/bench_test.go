package benchkit_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// BenchmarkHookPath compares the null PM's hook path with a Go binary that
// only starts and exits: the cost the harness adds to every hook.
func BenchmarkHookPath(b *testing.B) {
	ws, cache := b.TempDir(), b.TempDir()
	b.Run("barego", func(b *testing.B) {
		bin := benchkit.BareGo(b)
		for b.Loop() {
			benchkit.Run(b, ws, bin)
		}
	})
	b.Run("nullpm", func(b *testing.B) {
		bin := benchkit.NullPM(b)
		for b.Loop() {
			benchkit.HookPath(b, bin, nil, ws, cache)
		}
	})
}

var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, ([0-9.]+) ms clock`)

// BenchmarkInitCost reports the package initialization time of the null PM
// (GODEBUG=inittrace=1), the part of startup the harness's imports add.
func BenchmarkInitCost(b *testing.B) {
	bin := benchkit.NullPM(b)
	var total float64
	for b.Loop() {
		cmd := exec.Command(bin, "--version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(&errb)
		for sc.Scan() {
			if m := initLine.FindStringSubmatch(sc.Text()); m != nil {
				ms, _ := strconv.ParseFloat(m[2], 64)
				total += ms
			}
		}
	}
	b.ReportMetric(total*1e6/float64(b.N), "init-ns/op")
}

func startNull(b *testing.B) *host.Conn {
	b.Helper()
	c, err := host.Start(context.Background(), host.Spec{Name: "null", Command: benchkit.NullPM(b)},
		host.Options{Workspace: b.TempDir(), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkRoundTrip is the sequential latency of one request on a running PM.
func BenchmarkRoundTrip(b *testing.B) {
	c := startNull(b)
	ctx := context.Background()
	for b.Loop() {
		var deps []protocol.PackageID
		if err := c.Call(ctx, protocol.MethodListDeps, struct{}{}, &deps); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThroughput64 keeps 64 requests in flight on one connection.
func BenchmarkThroughput64(b *testing.B) {
	c := startNull(b)
	ctx := context.Background()
	b.ResetTimer()
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var deps []protocol.PackageID
			if err := c.Call(ctx, protocol.MethodListDeps, struct{}{}, &deps); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkIdleRSS reports the resident memory of an initialized, idle PM.
func BenchmarkIdleRSS(b *testing.B) {
	var kb float64
	for b.Loop() {
		c := startNull(b)
		status, err := os.ReadFile("/proc/" + strconv.Itoa(c.PID()) + "/status")
		if err != nil {
			b.Skip("no /proc on this system: idle RSS not measured")
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				v, _ := strconv.ParseFloat(strings.Fields(rest)[0], 64)
				kb += v
			}
		}
		c.Close()
	}
	b.ReportMetric(kb/float64(b.N), "RSS-KiB")
}

// TestClosedProxies: every proxy variable a tool may read, in either case,
// points at the closed loopback port.
func TestClosedProxies(t *testing.T) {
	env := benchkit.ClosedProxies()
	for _, name := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		if !slices.Contains(env, name+"=http://127.0.0.1:9") {
			t.Errorf("ClosedProxies() = %q: no %s at the closed port", env, name)
		}
	}
}

// TestBuildStatic: the binaries the benchmarks measure are built as
// releases are, statically linked, even where cgo is on: no program
// interpreter (the dynamic loader) to start before the PM. The null PM
// links package net, which makes a cgo build dynamic.
func TestBuildStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the null PM without cgo")
	}
	t.Setenv("CGO_ENABLED", "1")
	for _, bin := range []string{benchkit.NullPM(t), benchkit.Build(t, "github.com/symposium-dev/symposium-pm/sdk/benchkit/internal/nullpm", t.TempDir())} {
		f, err := elf.Open(bin)
		if err != nil {
			t.Skipf("%s: not an ELF binary on this system: %v", bin, err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has a program interpreter: dynamically linked", bin)
			}
		}
		f.Close()
	}
}

// TestRunCmdOutput: RunCmd returns exactly what each run wrote, however
// large, though it reads every run into a buffer an earlier run used: a
// short output after a long one carries none of the long one's bytes, and
// a Hook's Out stays as it was after later runs.
func TestRunCmdOutput(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 300_000) // 4.6 MiB: grows the buffer many times
	if err := os.WriteFile(dir+"/big", big, 0o644); err != nil {
		t.Fatal(err)
	}
	var hooks []benchkit.Hook
	want := [][]byte{big, []byte("short\n"), {}, big}
	for _, w := range want {
		var cmd *exec.Cmd
		switch {
		case len(w) == len(big):
			cmd = exec.Command("cat", "big")
		case len(w) == 0:
			cmd = exec.Command("true")
		default:
			cmd = exec.Command("echo", "short")
		}
		hooks = append(hooks, benchkit.RunCmd(t, cmd, dir))
	}
	for i, h := range hooks {
		if !bytes.Equal(h.Out, want[i]) {
			t.Errorf("run %d: Out is %d bytes (%.20q...), want %d", i, len(h.Out), h.Out, len(want[i]))
		}
		if h.Wall <= 0 {
			t.Errorf("run %d: Wall %v", i, h.Wall)
		}
	}
}

// TestRunWholeHooks runs two null PMs' whole hooks at once and checks that
// each one's own output reaches check, and that the run's CPU is theirs
// summed.
func TestRunWholeHooks(t *testing.T) {
	null := benchkit.NullPM(t)
	ws := t.TempDir()
	hooks := []benchkit.WholeHook{
		{Bin: null, Workspace: ws, CacheDir: t.TempDir()},
		{Bin: null, Workspace: ws, CacheDir: t.TempDir(), Deps: []protocol.PackageID{{PM: "null", Name: "a", Version: "1"}}},
	}
	seen := map[int]int{}
	h := benchkit.RunWholeHooks(t, hooks, func(i int, h benchkit.Hook) {
		seen[i] = len(h.Results(t))
	})
	if len(seen) != 2 || seen[0] != 3 || seen[1] != 3 {
		t.Errorf("check saw %v, want three responses from each of the two hooks", seen)
	}
	if h.Wall <= 0 || h.CPU <= 0 || len(h.Out) != 0 {
		t.Errorf("RunWholeHooks = wall %v, CPU %v, %d bytes of output; want positive times and no output", h.Wall, h.CPU, len(h.Out))
	}
}
