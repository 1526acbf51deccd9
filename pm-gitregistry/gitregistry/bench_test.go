package gitregistry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// benchEntries is the size of the benchmark registry.
const benchEntries = 600

// bigRegistry builds a registry of benchEntries entries with the real git:
// half plugins with a manifest and a skills directory, half bare skills in
// nested groups.
func bigRegistry(b *testing.B) *gittest.Repo {
	repo := gittest.NewRepo(b)
	files := map[string]string{"README.md": "benchmark registry\n"}
	for i := range benchEntries / 2 {
		files[fmt.Sprintf("plugins/p%03d/SYMPOSIUM.toml", i)] = fmt.Sprintf(
			"name = \"plugin-%03d\"\ndepends-on = [\"crate-%03d>=1\"]\n\n[[skills]]\nsource.path = \"skills\"\n\n[[hooks]]\nname = \"h\"\nevent = \"PreToolUse\"\ncommand = { script = \"hook.sh\" }\n", i, i)
		files[fmt.Sprintf("plugins/p%03d/skills/s/SKILL.md", i)] = "---\nname: s\ndescription: inner\n---\n"
		files[fmt.Sprintf("plugins/p%03d/hook.sh", i)] = "#!/bin/sh\n"
		files[fmt.Sprintf("groups/g%02d/skill-%03d/SKILL.md", i%20, i)] = fmt.Sprintf(
			"---\nname: skill-%03d\ndescription: Skill number %d for the benchmark\ndepends-on: crate-%03d\n---\nBody.\n", i, i, i)
	}
	repo.Write(files)
	repo.Commit("registry")
	return repo
}

// activePlugins spawns the PM, sends initialize and active_plugins, closes
// its input and waits for it to exit; it returns the number of offers.
func activePlugins(b *testing.B, bin string, args []string, workspace, cacheDir string) int {
	init, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
		"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cacheDir, Env: map[string]string{}},
	})
	input := string(init) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"active_plugins","params":{"deps":[]}}` + "\n"
	cmd := exec.Command(bin, args...)
	cmd.Dir = workspace
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", bin, err, errb.String())
	}
	n := -1
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var rsp struct {
			ID     int              `json:"id"`
			Result []protocol.Offer `json:"result"`
			Error  *protocol.Error  `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rsp); err != nil && rsp.ID == 2 {
			b.Fatalf("bad response: %v", err)
		}
		if rsp.Error != nil {
			b.Fatalf("request %d: %v", rsp.ID, rsp.Error)
		}
		if rsp.ID == 2 {
			n = len(rsp.Result)
		}
	}
	return n
}

// BenchmarkActivePluginsNone measures the hook path of a git registry:
// a cold process answering initialize and active_plugins (update none,
// served from the cache) on a registry of benchEntries entries, beside `git
// ls-files` on the same checkout and the SDK's floors (a null PM's
// initialize + list_deps, a Go binary that only starts).
func BenchmarkActivePluginsNone(b *testing.B) {
	repo := bigRegistry(b)
	dir := b.TempDir()
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-gitregistry/cmd/symposium-pm-gitregistry", dir)
	ws, cache := b.TempDir(), b.TempDir()
	args := []string{"--name", "bench", "--url", repo.Dir}

	// Populate the cache once, the way a host's refresh would.
	refresh := exec.Command(bin, args...)
	refresh.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":"` + ws + `","cache_dir":"` + cache + `","env":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"refresh","params":{"update":"check","force":true}}` + "\n")
	if out, err := refresh.CombinedOutput(); err != nil || !bytes.Contains(out, []byte(`"refreshed":true`)) {
		b.Fatalf("refresh: %v\n%s", err, out)
	}
	if n := activePlugins(b, bin, args, ws, cache); n != benchEntries {
		b.Fatalf("active_plugins offered %d entries, want %d", n, benchEntries)
	}
	sidecars, _ := filepath.Glob(filepath.Join(cache, "bench", "*", "commits", "*.index.json"))
	if len(sidecars) != 1 {
		b.Fatalf("index sidecars: %v", sidecars)
	}

	b.Run("gitregistry", func(b *testing.B) {
		for b.Loop() {
			activePlugins(b, bin, args, ws, cache)
		}
	})
	b.Run("gitregistry-no-index", func(b *testing.B) {
		// The per-commit index removed before each run: enumerate the tree
		// and parse every manifest and SKILL.md.
		for b.Loop() {
			b.StopTimer()
			os.Remove(sidecars[0])
			b.StartTimer()
			activePlugins(b, bin, args, ws, cache)
		}
	})
	b.Run("in-process", func(b *testing.B) {
		// The same work without spawning: a fresh PM each time (open the
		// cache, read the state and the persisted index, encode the offers).
		for b.Loop() {
			pm := gitregistry.New(gitregistry.Config{Name: "bench", URL: repo.Dir})
			err := pm.Initialize(context.Background(), &pmserver.Session{ProtocolVersion: 1, Workspace: ws, CacheDir: cache, Env: pmserver.NewEnv(nil), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			offers, err := pm.ActivePlugins(context.Background(), nil)
			if err != nil || len(offers) != benchEntries {
				b.Fatal(len(offers), err)
			}
			if _, err := json.Marshal(offers); err != nil {
				b.Fatal(err)
			}
			pm.Close()
		}
	})
	b.Run("git-ls-files", func(b *testing.B) {
		for b.Loop() {
			benchkit.Run(b, repo.Dir, "git", "ls-files")
		}
	})
	b.Run("nullpm", func(b *testing.B) {
		null := benchkit.NullPM(b)
		for b.Loop() {
			benchkit.HookPath(b, null, nil, ws, cache)
		}
	})
	b.Run("barego", func(b *testing.B) {
		bare := benchkit.BareGo(b)
		for b.Loop() {
			benchkit.Run(b, ws, bare)
		}
	})
}
