// Package gittest builds git repositories with the real git command and
// serves them over git's smart HTTP protocol (the real git http-backend
// behind net/http/cgi) on loopback, for tests.
package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Repo is a non-bare repository in a test's temporary directory.
type Repo struct {
	t   testing.TB
	Dir string
}

// NeedGit skips the test when git is not installed.
func NeedGit(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	return p
}

// Env is the environment the helpers run git with: no user or system
// configuration, fixed identity and dates, no automatic gc.
func Env() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		// No automatic gc: after a commit of many files it runs detached and
		// races the removal of the test's directories.
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
	)
}

// NewRepo runs git init on a new temporary directory with branch main.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	NeedGit(t)
	r := &Repo{t: t, Dir: t.TempDir()}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the repository and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	return Run(r.t, r.Dir, args...)
}

// Run runs git in dir and returns its trimmed output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Write writes files (slash-separated path → content) into the work tree.
// A content starting with "->" makes a symbolic link to the rest.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		os.Remove(p)
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Remove deletes paths from the work tree.
func (r *Repo) Remove(names ...string) {
	r.t.Helper()
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(r.Dir, filepath.FromSlash(n))); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit stages everything and commits; it returns the commit id.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Bare clones the repository into a bare repository in a temporary
// directory, suitable for serving, and returns its path.
func (r *Repo) Bare() string {
	r.t.Helper()
	dir := filepath.Join(r.t.TempDir(), "registry.git")
	Run(r.t, filepath.Dir(dir), "clone", "-q", "--bare", r.Dir, dir)
	return dir
}

// Push pushes every branch and tag to a bare repository made by Bare.
func (r *Repo) Push(bare string) {
	r.t.Helper()
	r.Git("push", "-q", "--force", "--all", bare)
	r.Git("push", "-q", "--force", "--tags", bare)
}

// FetchCheckout updates clone, a git clone of a bare repository made by
// Bare, as a user updates a work tree: git fetch, then git checkout of the
// fetched main branch. Benchmarks time it beside the cache's own update.
func FetchCheckout(tb testing.TB, clone string) {
	tb.Helper()
	for _, args := range [][]string{{"fetch", "-q", "origin"}, {"checkout", "-q", "--detach", "origin/main"}} {
		Run(tb, clone, args...)
	}
}

// Server serves the bare repositories below a directory over git's smart
// HTTP protocol.
type Server struct {
	*httptest.Server
	// Requests counts the HTTP requests served.
	Requests atomic.Int64
}

// Serve starts a loopback server running git http-backend for the
// repositories below root: a repository root/x.git is at URL + "/x.git".
func Serve(t testing.TB, root string) *Server {
	t.Helper()
	return ServeAuth(t, root, "", "")
}

// ServeAuth is Serve requiring HTTP basic authentication with user and
// password (when user is not empty).
func ServeAuth(t testing.TB, root, user, password string) *Server {
	t.Helper()
	NeedGit(t)
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend not installed: %v", err)
	}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
		},
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.Requests.Add(1)
		if user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	return s
}
