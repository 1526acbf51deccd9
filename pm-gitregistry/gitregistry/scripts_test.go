package gitregistry_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/host/cli"
	"github.com/symposium-dev/symposium-pm/testscript/pmscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, pmscript.Commands(map[string]func(){
		"symposium-pm-gitregistry": func() { gitregistry.Main() },
		"symposium-pm":             func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	}))
}

// TestScripts drives the built binary over stdin and stdout with pmcall
// (testdata/script/*.txtar). Scripts get two commands:
//
//	commit DIR       git init (once), add everything and commit in DIR; sets $COMMIT
//	gitserve         serve $WORK over git smart HTTP (git http-backend); sets $GITURL
//	expand FILE...   replace $VAR and ${VAR} in files with the script's environment
func TestScripts(t *testing.T) {
	gittest.NeedGit(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			for _, kv := range gittest.Env() {
				if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_") {
					env.Setenv(k, v)
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"commit": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: commit DIR")
				}
				dir := ts.MkAbs(args[0])
				git := func(a ...string) string {
					cmd := exec.Command("git", a...)
					cmd.Dir = dir
					cmd.Env = gittest.Env()
					out, err := cmd.CombinedOutput()
					if err != nil {
						ts.Fatalf("git %s: %v\n%s", strings.Join(a, " "), err, out)
					}
					return strings.TrimSpace(string(out))
				}
				if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
					git("init", "-q", "-b", "main")
				}
				git("add", "-A")
				git("commit", "-q", "--allow-empty", "-m", "registry")
				ts.Setenv("COMMIT", git("rev-parse", "HEAD"))
			},
			"expand": func(ts *testscript.TestScript, neg bool, args []string) {
				for _, f := range args {
					p := ts.MkAbs(f)
					b, err := os.ReadFile(p)
					ts.Check(err)
					ts.Check(os.WriteFile(p, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
				}
			},
			"gitserve": func(ts *testscript.TestScript, neg bool, args []string) {
				srv := gittest.Serve(scriptTB{ts: ts}, ts.Getenv("WORK"))
				ts.Setenv("GITURL", srv.URL)
			},
		},
	})
}

// scriptTB adapts a TestScript to the parts of testing.TB gittest uses.
type scriptTB struct {
	testing.TB
	ts *testscript.TestScript
}

func (s scriptTB) Helper()                      {}
func (s scriptTB) Fatalf(f string, args ...any) { s.ts.Fatalf(f, args...) }
func (s scriptTB) Skipf(f string, args ...any)  { s.ts.Fatalf(f, args...) }
func (s scriptTB) Skip(args ...any)             { s.ts.Fatalf("%v", args) }
func (s scriptTB) Cleanup(f func())             { s.ts.Defer(f) }
