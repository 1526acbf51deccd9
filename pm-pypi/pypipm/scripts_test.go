package pypipm

import (
	"os"
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

// TestScripts drives the built binary over stdin and stdout with pmcall
// (testdata/script/*.txtar). Scripts get one extra command:
//
//	pyindex [-html]   start the demo index on loopback; sets $INDEX
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			for _, k := range []string{"VIRTUAL_ENV", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL"} {
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
		},
	})
}
