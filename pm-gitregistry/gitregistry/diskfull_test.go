//go:build linux

package gitregistry

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// liveChildren lists the commands of this process's live children.
func liveChildren(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if i < 0 || len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() {
			out = append(out, s[strings.IndexByte(s, '(')+1:i])
		}
	}
	return out
}

// TestRefreshDiskFull is issue 14 item 9 seen from the host: with the cache
// on a full disk, refresh answers -32603 naming the cause and the file, the
// PM answers every request and ends at end of input, and no git process is
// left. Before the fix refresh never answered and the PM never ended.
func TestRefreshDiskFull(t *testing.T) {
	repo := gittest.NewRepo(t)
	r := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)]
	}
	repo.Write(map[string]string{"tidy/SKILL.md": "---\nname: tidy\ndescription: Tidy\n---\n", "tidy/data.txt": string(big)})
	repo.Commit("registry")
	bare := repo.Bare()

	cache := t.TempDir()
	pm := New(Config{Name: "recs", URL: bare})
	pm.beforeWrite = func(path string, n int) error {
		if strings.Contains(path, "tmp_pack_") {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- pmserver.Serve(context.Background(), pm, inR, outW)
		outW.Close()
	}()
	go func() {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":%q,"cache_dir":%q,"env":{}}}`+"\n", t.TempDir(), cache)
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"refresh","params":{"update":"fetch","force":true}}`)
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":3,"method":"active_plugins","params":{"deps":[]}}`)
		inW.Close()
	}()
	type answer struct {
		ID    int `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	answers := map[int]answer{}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(2 * time.Minute)
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break read
			}
			var a answer
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatalf("answer %q: %v", l, err)
			}
			answers[a.ID] = a
		case <-deadline:
			var got []int
			for id := range answers {
				got = append(got, id)
			}
			t.Fatalf("the PM did not end at end of input with the disk full; answered ids %v; children %v", got, liveChildren(t))
		}
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ref, ok := answers[2]
	if !ok || ref.Error == nil {
		t.Fatalf("refresh answer = %+v, want an error", ref)
	}
	if ref.Error.Code != -32603 || !strings.Contains(ref.Error.Message, "no space left on device") ||
		!strings.Contains(ref.Error.Message, filepath.Join(cache, "recs")) || !strings.Contains(ref.Error.Message, "tmp_pack_") {
		t.Fatalf("refresh error = %d %q; want -32603 with the cause and the file", ref.Error.Code, ref.Error.Message)
	}
	if ap, ok := answers[3]; !ok || ap.Error != nil {
		t.Fatalf("active_plugins answer = %+v, want a result", ap)
	}
	if kids := liveChildren(t); len(kids) > 0 {
		t.Fatalf("processes left behind: %v", kids)
	}
}
