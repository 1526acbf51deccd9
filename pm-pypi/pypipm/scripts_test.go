package pypipm

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/testscript/pmscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, pmscript.Commands(map[string]func(){
		"symposium-pm-pypi": func() { Main() },
	}))
}

// sha256Run is a sha256 written in hex.
var sha256Run = regexp.MustCompile(`[0-9a-f]{64}`)

// treesIn lists the trees (directories named by a sha256) of a version's
// cache directory.
func treesIn(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var trees []string
	for _, e := range ents {
		if e.IsDir() && validSHA256(e.Name()) {
			trees = append(trees, e.Name())
		}
	}
	return trees
}

// TestScripts drives the built binary over stdin and stdout with pmcall
// (testdata/script/*.txtar). Scripts get three extra commands:
//
//	pyindex [-html]                 start the demo index on loopback; sets $INDEX
//	pytree VAR CACHE_DIR NAME VERSION
//	                                set $VAR to the one tree unpacked for
//	                                NAME@VERSION (its directory is the
//	                                sha256 of the file)
//	nosha FILE OUT                  copy FILE (stdout, say) to OUT, each
//	                                sha256 in hex written <sha256>
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			for _, k := range []string{"VIRTUAL_ENV", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL", "PIP_PROXY", "ALL_PROXY", "all_proxy"} {
				env.Setenv(k, "")
			}
			env.Setenv("PIP_CONFIG_FILE", os.DevNull)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"pyindex": func(ts *testscript.TestScript, neg bool, args []string) {
				ix := fakeindex.Start(demoPackages()...)
				if len(args) > 0 && args[0] == "-html" {
					ix.HTMLOnly.Store(true)
				}
				ts.Defer(ix.Close)
				ts.Setenv("INDEX", ix.URL)
			},
			"pytree": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 4 {
					ts.Fatalf("usage: pytree VAR CACHE_DIR NAME VERSION")
				}
				dir := ts.MkAbs(filepath.Join(args[1], "pypi", unpackedDir, args[2], args[3]))
				trees := treesIn(dir)
				if len(trees) != 1 {
					ts.Fatalf("%s holds the trees %q, want one", dir, trees)
				}
				ts.Setenv(args[0], filepath.Join(dir, trees[0]))
			},
			"nosha": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: nosha FILE OUT")
				}
				out := sha256Run.ReplaceAllString(ts.ReadFile(args[0]), "<sha256>")
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
			},
		},
	})
}
