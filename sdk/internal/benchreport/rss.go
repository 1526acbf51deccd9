package benchreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Probe is one binary whose peak resident memory is measured over a hook
// path.
type Probe struct {
	// Name labels the binary in the report ("cargo", "nullpm").
	Name string
	// Bin and Args are the command line.
	Bin  string
	Args []string
	// Requests are the method and params sent after initialize; none for a
	// binary that is not a PM (it is only run).
	Requests []Request
	// ColdRequests, if set, replace Requests on the cold run (a git
	// registry refreshes before it can answer from its cache).
	ColdRequests []Request
}

// Request is one request of a probe.
type Request struct {
	Method string
	Params any
}

// Measure runs the probe twice in workspace with the cache directory cache
// (which should be empty): cold, then cached. It writes one result line
// per run to w in `go test -bench` format under "pkg: rss":
// RSS/<name>/<cold|cached> with the wall time and peak-RSS-KiB.
func (p Probe) Measure(ctx context.Context, w io.Writer, workspace, cache string) error {
	for _, run := range []string{"cold", "cached"} {
		reqs := p.Requests
		if run == "cold" && p.ColdRequests != nil {
			reqs = p.ColdRequests
		}
		wall, kb, err := hookPath(ctx, p.Bin, p.Args, workspace, cache, reqs)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", p.Name, run, err)
		}
		fmt.Fprintf(w, "BenchmarkRSS/%s/%s\t1\t%d ns/op\t%d peak-RSS-KiB\n", p.Name, run, wall.Nanoseconds(), kb)
	}
	return nil
}

// hookPath spawns bin, sends initialize and reqs, closes its input, waits
// for it to exit and checks every answer; it returns the wall time and the
// process's peak resident set size in KiB.
func hookPath(ctx context.Context, bin string, args []string, workspace, cache string, reqs []Request) (time.Duration, int64, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	if reqs != nil {
		enc.Encode(map[string]any{"jsonrpc": "2.0", "id": 0, "method": protocol.MethodInitialize,
			"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cache, Env: map[string]string{}}})
		for i, r := range reqs {
			m := map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": r.Method}
			if r.Params != nil {
				m["params"] = r.Params
			}
			enc.Encode(m)
		}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = workspace
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", bin, err, tail(errb.String()))
	}
	answered := 0
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rsp struct {
			ID    int             `json:"id"`
			Error *protocol.Error `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rsp); err != nil {
			return 0, 0, fmt.Errorf("%s: bad response line: %w", bin, err)
		}
		if rsp.Error != nil {
			return 0, 0, fmt.Errorf("%s: request %d failed: %v", bin, rsp.ID, rsp.Error)
		}
		answered++
	}
	if reqs != nil && answered != len(reqs)+1 {
		return 0, 0, fmt.Errorf("%s: %d answers to %d requests", bin, answered, len(reqs)+1)
	}
	kb, ok := maxRSSKiB(cmd.ProcessState)
	if !ok {
		return 0, 0, errors.New("peak resident memory is not reported on this system")
	}
	return wall, kb, nil
}

func tail(s string) string {
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}
