package npmpm

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// newPM initializes a PM on workspace with a fresh cache dir and env.
func newPM(t testing.TB, workspace string, env map[string]string) (*PM, string) {
	t.Helper()
	cache := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = t.TempDir() // never read the user's ~/.npmrc
	}
	if _, ok := env["npm_config_globalconfig"]; !ok {
		env["npm_config_globalconfig"] = filepath.Join(t.TempDir(), "npmrc")
	}
	p := New()
	err := p.Initialize(context.Background(), &pmserver.Session{
		ProtocolVersion: protocol.Version,
		Workspace:       workspace,
		CacheDir:        cache,
		Env:             pmserver.NewEnv(env),
		Logger:          slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, cache
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

// writeFiles writes path → content under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// needNPM skips the test when npm is absent.
func needNPM(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed")
	}
}

// oracleRegistry begins an oracle test that drives npm (or tools installed
// with it) for minutes, as what says: it skips without npm, and with -short,
// which make race passes (make oracle runs it); it runs in parallel, and
// returns a fake registry serving the universe.
func oracleRegistry(t *testing.T, what string) *fakeregistry.Registry {
	t.Helper()
	needNPM(t)
	if testing.Short() {
		t.Skip("an oracle test that " + what + " for minutes: make oracle runs it; -short (make race) skips it")
	}
	t.Parallel()
	reg := fakeregistry.New()
	t.Cleanup(reg.Close)
	publishUniverse(reg)
	return reg
}

// runNPM runs npm against reg in dir and returns its stdout.
func runNPM(t testing.TB, reg *fakeregistry.Registry, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := fakeregistry.NPMCommand(ctx, reg.URL(), dir, t.TempDir(), args...)
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("npm %v: %v\n%s", args, err, stderr)
	}
	return out
}

func ids(deps []protocol.PackageID) []string {
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		out = append(out, d.Name+"@"+d.Version)
	}
	return out
}

// offerIDs returns each offer as "name@version root", sorted.
func offerIDs(offers []protocol.Offer) []string {
	out := []string{}
	for _, o := range offers {
		out = append(out, o.ID.Name+"@"+o.ID.Version+" "+o.Root)
	}
	slices.Sort(out)
	return out
}

// listThenActive runs list_deps on a PM opened at dir, then active_plugins
// on its answer, as the host does.
func listThenActive(t *testing.T, dir string) ([]protocol.PackageID, []protocol.Offer) {
	t.Helper()
	p, _ := newPM(t, dir, nil)
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	offers, err := p.ActivePlugins(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	return deps, offers
}

// nodeResolve returns where Node's require.resolve finds name/package.json
// from dir, or "" when it finds none; it skips the test without node.
func nodeResolve(t *testing.T, dir, name string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	out, err := exec.Command("node", "-e",
		`try{console.log(require.resolve(process.argv[1]+"/package.json",{paths:[process.argv[2]]}))}catch(e){console.log("")}`,
		name, dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
