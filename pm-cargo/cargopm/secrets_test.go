package cargopm

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Planted secrets: none may appear in any response, log line or stderr
// byte of the PM.
const (
	urlPassword = "s3cr3t-url-pass"
	envToken    = "tok-s3cr3t-from-env"
	globalToken = "tok-s3cr3t-crates-io"
	fileToken   = "tok-s3cr3t-from-credentials"
	cfgToken    = "tok-s3cr3t-in-config"
)

// TestSecretsNeverLeak runs the PM binary with SYMPOSIUM_LOG=debug against
// a registry whose index URL carries a password, with registry tokens in
// the environment and in $CARGO_HOME/credentials.toml, and provokes every
// failure it can: a tampered checksum, HTTP 500s, an unreachable registry,
// search through the same registry, a crate that is not there, and
// malformed configuration lines holding a token or a password (which
// cargo quotes in its diagnostics). A wanted code of -1 accepts any answer.
func TestSecretsNeverLeak(t *testing.T) {
	cargotest.Cargo(t)
	if testing.Short() {
		t.Skip("runs cargo")
	}
	reg, err := fakeregistry.New(
		fakeregistry.Crate{Name: "good", Version: "1.0.0", Description: "fine"},
		fakeregistry.Crate{Name: "tampered", Version: "1.0.0", Cksum: strings.Repeat("cd", 32)},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	withPass := func(base string) string {
		return strings.Replace(base, "http://", "http://user:"+urlPassword+"@", 1)
	}
	index := withPass(reg.IndexURL())
	cargotest.WriteFiles(t, env.CargoHome, map[string]string{
		"config.toml": `[source.crates-io]
replace-with = "private"

[source.private]
registry = "` + index + `"

[registries.private]
index = "` + index + `"

[net]
retry = 0
`,
		"credentials.toml": "[registry]\ntoken = \"" + globalToken + "\"\n\n[registries.private]\ntoken = \"" + fileToken + "\"\n",
	})
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	cargotest.WriteFiles(t, ws, map[string]string{
		"Cargo.toml":              "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\ngood = \"1\"\npriv = { version = \"1\", registry = \"private\" }\n",
		"src/lib.rs":              "",
		".cargo/config.toml":      "[registries.mirror]\nindex = \"" + withPass("sparse+http://127.0.0.1:9/index/") + "\"\n",
		"Cargo.lock":              "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"good\"]\n\n[[package]]\nname = \"good\"\nversion = \"1.0.0\"\nsource = \"" + "registry+" + withPass("sparse+http://127.0.0.1:9/index/") + "\"\n",
		".cargo/credentials.toml": "[registries.mirror]\ntoken = \"" + fileToken + "\"\n",
	})
	initEnv := envMap(env)
	initEnv["CARGO_REGISTRIES_PRIVATE_TOKEN"] = envToken
	initEnv["CARGO_REGISTRY_TOKEN"] = globalToken
	initEnv["HOME"] = dir
	procEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SYMPOSIUM_LOG=debug", "CARGO_REGISTRIES_PRIVATE_TOKEN=" + envToken}
	procEnv = append(procEnv, env.Vars...)

	pm := startPM(t, procEnv, ws, filepath.Join(dir, "cache"), initEnv)
	var responses []pmtest.Response
	call := func(method string, params any, wantCode protocol.Code) {
		t.Helper()
		r := pm.Call(method, params)
		responses = append(responses, r)
		if wantCode != -1 && r.Code() != wantCode {
			t.Errorf("%s %v: %s; want code %d", method, params, r.Raw, wantCode)
		}
	}
	call("list_deps", nil, 0)
	call("workspace", nil, 0)
	call("fetch", pkgParams("good", "1", "fetch"), 0)
	call("active_plugins", map[string]any{"deps": []map[string]string{{"pm": Name, "name": "good", "version": "1.0.0"}}}, 0)
	call("fetch", pkgParams("tampered", "1.0.0", "fetch"), -32013)
	call("fetch", pkgParams("absent", "*", "fetch"), -32010)
	call("search", map[string]any{"query": "goo"}, 0)
	reg.SetStatus(500)
	call("fetch", pkgParams("good", "*", "fetch"), -32012)
	call("load_plugin", pkgParams("other", "1", ""), -32012)
	call("search", map[string]any{"query": "goo"}, -32012)
	reg.SetStatus(0)
	// Unreachable: nothing listens on the registry's port any more.
	addr := strings.TrimPrefix(reg.URL(), "http://")
	reg.Close()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s still answers", addr)
	}
	call("fetch", pkgParams("good", "*", "fetch"), -32012)
	call("search", map[string]any{"query": "goo"}, -32012)

	// Malformed configuration whose broken lines hold a token and a
	// password: cargo quotes the offending line in its diagnostics.
	cargotest.WriteFiles(t, ws, map[string]string{
		".cargo/config.toml": "[registry]\ntoken = \"" + cfgToken + "\" oops\n",
	})
	call("list_deps", nil, 0)
	call("fetch", pkgParams("good", "*", "fetch"), -32012)
	call("search", map[string]any{"query": "goo"}, -1)
	cargotest.WriteFiles(t, ws, map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"x\"\n[source.x]\nregistry = \"" + withPass("sparse+http://127.0.0.1:9/index/") + "\" oops\n",
	})
	call("fetch", pkgParams("good", "*", "fetch"), -32012)
	call("active_plugins", map[string]any{"deps": []map[string]string{{"pm": Name, "name": "good", "version": "1.0.0"}}}, 0)
	call("search", map[string]any{"query": "goo"}, -1)
	pm.Close()

	stderr := pm.Stderr()
	if !strings.Contains(stderr, "DEBUG") && !strings.Contains(stderr, "level=debug") && !strings.Contains(strings.ToLower(stderr), "debug") {
		t.Errorf("no debug logging on stderr; the check would prove nothing:\n%s", stderr)
	}
	for _, secret := range []string{urlPassword, envToken, globalToken, fileToken, cfgToken} {
		if strings.Contains(stderr, secret) {
			t.Errorf("stderr contains %q:\n%s", secret, stderr)
		}
		for _, r := range responses {
			if strings.Contains(r.Raw, secret) {
				t.Errorf("response contains %q: %s", secret, r.Raw)
			}
		}
	}
	if t.Failed() || testing.Verbose() {
		for _, r := range responses {
			t.Log(r.Raw)
		}
	}
}

// TestCargoFailureRedacts checks the message of a failed cargo run: URL
// passwords and quoted source lines never survive.
func TestCargoFailureRedacts(t *testing.T) {
	for _, tc := range []struct{ stderr, gone, kept string }{
		{"error: failed to download from `http://u:" + urlPassword + "@127.0.0.1:1/x`", urlPassword, "http://***@127.0.0.1:1/x"},
		{"Caused by:\n  TOML parse error at line 2, column 32\n    |\n  2 | token = \"" + cfgToken + "\" oops\n    |                                ^\n  unexpected key", cfgToken, "unexpected key"},
		{"  12 |   token='" + fileToken + "'\n", fileToken, "elided"},
	} {
		got := (&cargoFailure{args: []string{"fetch"}, stderr: tc.stderr}).Error()
		if strings.Contains(got, tc.gone) || !strings.Contains(got, tc.kept) {
			t.Errorf("%q -> %q", tc.stderr, got)
		}
	}
}
