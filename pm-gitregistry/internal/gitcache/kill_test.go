//go:build unix

package gitcache

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// stallProxy forwards requests to a smart HTTP git server; while stall is
// set, the response to an upload-pack POST (the pack) is cut short after
// its first bytes and held open until release is closed or the client
// goes away.
type stallProxy struct {
	upstream string
	stall    atomic.Bool
	reached  chan struct{} // closed when a pack response has stalled
	once     sync.Once
	release  chan struct{}
}

func newStallProxy(t *testing.T, upstream string) (*stallProxy, *httptest.Server) {
	p := &stallProxy{upstream: upstream, reached: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(p)
	// Cleanups run last-in first-out: release the handler before Close
	// waits for it.
	t.Cleanup(srv.Close)
	t.Cleanup(p.unblock)
	return p, srv
}

func (p *stallProxy) unblock() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

func (p *stallProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	req.ContentLength = r.ContentLength
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	maps.Copy(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	pack := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack")
	if !pack || !p.stall.Load() {
		io.Copy(w, resp.Body)
		return
	}
	// Part of the pack, then nothing until released.
	if _, err := io.CopyN(w, resp.Body, 64<<10); err != nil {
		return // too short to stall mid-pack; the test will notice
	}
	http.NewResponseController(w).Flush()
	p.once.Do(func() { close(p.reached) })
	select {
	case <-p.release:
	case <-r.Context().Done():
	}
}

// TestKillDuringFetch kills a process while the pack of its clone (or of
// an incremental fetch) is halfway through, and checks that the cache
// shows nothing partial and that the next process fills it correctly.
func TestKillDuringFetch(t *testing.T) {
	for _, tc := range []struct {
		name string
		// warm updates the cache to the first commit before the kill.
		warm bool
	}{
		{"clone", false},
		{"fetch", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t)
			repo.Write(sample)
			os.Chmod(filepath.Join(repo.Dir, "group/nested/deep/script.sh"), 0o755)
			// Incompressible content so the pack is far larger than what
			// the proxy lets through before stalling.
			repo.Write(map[string]string{"big/blob.bin": randomText(1, 1<<20)})
			c1 := repo.Commit("first")
			bare := repo.Bare()
			want := c1
			srv := gittest.Serve(t, filepath.Dir(bare))
			proxy, psrv := newStallProxy(t, srv.URL)
			url := psrv.URL + "/registry.git"
			root := t.TempDir()
			cfg := Config{Root: root, Name: "kill", URL: url, Logger: testLogger(t)}
			ctx := context.Background()

			if tc.warm {
				c, err := Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				snap, _, err := c.Update(ctx, Fetch)
				c.Close()
				if err != nil || snap.Commit != c1 {
					t.Fatalf("warm update = %+v, %v; want commit %s", snap, err, c1)
				}
				repo.Write(map[string]string{"big/blob.bin": randomText(2, 1<<20), "rust/SYMPOSIUM.toml": "name = \"rust2\"\n"})
				want = repo.Commit("second")
				repo.Push(bare)
			}

			proxy.stall.Store(true)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelperProcess$")
			cmd.Env = append(os.Environ(), "GITCACHE_KILL_HELPER=1", "GITCACHE_ROOT="+root, "GITCACHE_URL="+url)
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-proxy.reached:
			case err := <-done:
				t.Fatalf("helper exited before the pack stalled: %v\n%s", err, out)
			case <-time.After(8 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("the pack never stalled\n%s", out)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err := <-done
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper did not die of SIGKILL: %v\n%s", err, out)
			}
			proxy.stall.Store(false)
			proxy.unblock()

			dir := Dir(cfg)
			commits := filepath.Join(dir, "commits")
			// Nothing but the warm commit may look complete; anything
			// else must be a temporary directory the sweep recognizes.
			ents, err := os.ReadDir(commits)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				n := e.Name()
				switch {
				case strings.HasPrefix(n, ".tmp-"):
					t.Logf("left behind: commits/%s (swept at the next exclusive Open)", n)
				case tc.warm && (n == c1 || strings.HasPrefix(n, c1+".")): // its directory and sidecars
				default:
					t.Errorf("commits/%s is visible after a killed fetch", n)
				}
			}
			st, err := readStateFile(filepath.Join(dir, "state.json"))
			switch {
			case !tc.warm && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("state.json after a killed clone: %+v, %v; want none", st, err)
			case tc.warm && (err != nil || st.Commit != c1):
				t.Errorf("state.json after a killed fetch: %+v, %v; want commit %s", st, err, c1)
			}
			if st != nil {
				if fi, err := os.Stat(filepath.Join(commits, st.Commit)); err != nil || !fi.IsDir() {
					t.Errorf("state.json names %s, whose tree is missing: %v", st.Commit, err)
				} else {
					checkTree(t, repo.Dir, st.Commit, filepath.Join(commits, st.Commit))
				}
			}

			// A fresh open sweeps the leftovers, serves what state.json
			// says without the network, and then updates.
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tmps, _ := filepath.Glob(filepath.Join(commits, ".tmp-*")); len(tmps) > 0 {
				t.Errorf("temporary directories survived a fresh Open: %v", tmps)
			}
			cur, err := c.Current(ctx)
			switch {
			case !tc.warm && !errors.Is(err, ErrNotCached):
				t.Errorf("Current after a killed clone = %+v, %v; want ErrNotCached", cur, err)
			case tc.warm && (err != nil || cur.Commit != c1):
				t.Errorf("Current after a killed fetch = %+v, %v; want %s", cur, err, c1)
			}
			snap, changed, err := c.Update(ctx, Fetch)
			if err != nil {
				t.Fatalf("update after the kill: %v", err)
			}
			if !changed || snap.Commit != want {
				t.Fatalf("update after the kill = %+v changed=%v; want commit %s changed", snap, changed, want)
			}
			checkTree(t, repo.Dir, want, snap.Dir)
		})
	}
}

// TestKillHelperProcess is the process TestKillDuringFetch kills.
func TestKillHelperProcess(t *testing.T) {
	if os.Getenv("GITCACHE_KILL_HELPER") != "1" {
		t.Skip("helper process")
	}
	ctx := context.Background()
	c, err := Open(ctx, Config{Root: os.Getenv("GITCACHE_ROOT"), Name: "kill", URL: os.Getenv("GITCACHE_URL")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	snap, _, err := c.Update(ctx, Fetch)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("commit=" + snap.Commit)
}

func readStateFile(path string) (*state, error) {
	c := &Cache{statePath: path}
	return c.readState()
}

// randomText returns n bytes of incompressible printable text, the same for
// the same seed.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// checkTree compares a materialized directory with git's own listing of the
// commit (git ls-tree -r): the same paths, modes and blob ids.
func checkTree(t *testing.T, repoDir, commit, dir string) {
	t.Helper()
	checkSharedTree(t, repoDir, commit, dir, nil)
}

// checkSharedTree is checkTree for a directory that shares the directories
// of share with other commits' directories (beside it), each read there.
func checkSharedTree(t *testing.T, repoDir, commit, dir string, share Share) {
	t.Helper()
	want := map[string]string{}
	for _, l := range strings.Split(gittest.Run(t, repoDir, "ls-tree", "-r", commit), "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			t.Fatalf("git ls-tree line %q", l)
		}
		want[path] = f[0] + " " + f[2]
	}
	got := map[string]string{}
	addTree(t, got, dir, "")
	for p, home := range share {
		addTree(t, got, filepath.Join(filepath.Dir(dir), home, filepath.FromSlash(p)), p+"/")
	}
	if !maps.Equal(got, want) {
		t.Fatalf("tree of %s in %s\n got %v\nwant %v", commit, dir, got, want)
	}
}

// addTree adds to got the files below dir as git ls-tree shows them (mode
// and blob id by path), their paths prefixed with prefix.
func addTree(t *testing.T, got map[string]string, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var mode string
		var data []byte
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			mode = "120000"
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			data = []byte(target)
		default:
			mode = "100644"
			if fi.Mode()&0o111 != 0 {
				mode = "100755"
			}
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(data))
		h.Write(data)
		got[prefix+filepath.ToSlash(rel)] = mode + " " + hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
