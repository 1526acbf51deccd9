package npmpm

import (
	"archive/tar"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/testscript/pmscript"
)

// TestMain makes the test binary the PM when asPMEnv is set (startPM), and
// symposium-pm-npm (Main) for the scripts; after the tests it removes the
// installers they shared (installSharedTools).
func TestMain(m *testing.M) {
	if os.Getenv(asPMEnv) == "1" {
		Main()
		return
	}
	testscript.Main(removeSharedTools{m}, pmscript.Commands(map[string]func(){
		"symposium-pm-npm": func() { Main() },
	}))
}

// publish fills the fake registry the scenarios use.
func publish(r *fakeregistry.Registry) {
	skill := map[string]string{"skills/js/SKILL.md": "---\nname: js\ndescription: JavaScript help\n---\nBody\n"}
	r.Publish(fakeregistry.Version{Name: "@acme/agent-skills", Version: "1.0.0", Description: "Agent skills for JS", Files: skill})
	r.Publish(fakeregistry.Version{Name: "@acme/agent-skills", Version: "1.1.0", Description: "Agent skills for JS", Files: skill})
	r.Publish(fakeregistry.Version{Name: "@acme/agent-skills", Version: "2.0.0-beta.1", Files: skill})
	r.Publish(fakeregistry.Version{Name: "plain", Version: "0.4.2", Description: "No plugin"})
	r.Publish(fakeregistry.Version{Name: "tampered", Version: "1.0.0",
		Integrity: "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="})
	r.Publish(fakeregistry.Version{Name: "escaping", Version: "1.0.0", Tarball: fakeregistry.Tarball(
		fakeregistry.Entry{Name: "package/package.json", Body: "{}"},
		fakeregistry.Entry{Name: "package/../../evil", Body: "x"})})
	r.Publish(fakeregistry.Version{Name: "linking", Version: "1.0.0", Tarball: fakeregistry.Tarball(
		fakeregistry.Entry{Name: "package/l", Type: tar.TypeSymlink, Linkname: "/etc/passwd"})})
}

// TestScripts runs testdata/script/*.txtar against the binary (Main) with a fresh
// loopback registry ($REGISTRY) per scenario and a HOME of its own.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			r := fakeregistry.New()
			env.Defer(r.Close)
			publish(r)
			env.Setenv("REGISTRY", r.URL())
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("npm_config_globalconfig", filepath.Join(env.WorkDir, "global-npmrc"))
			return nil
		},
	})
}
