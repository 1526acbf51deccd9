package pypipm

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// secretSource is one way a user gives index credentials.
type secretSource struct {
	name string
	// config returns the process and initialize environments pointing at
	// indexURL (which carries the credentials).
	config func(t *testing.T, indexURL string) (procEnv []string, initEnv map[string]string)
	// creds returns the URL user info for secret.
	creds func(secret string) *url.Userinfo
}

var secretSources = []secretSource{
	{"PIP_INDEX_URL in initialize env",
		func(t *testing.T, u string) ([]string, map[string]string) {
			return baseProcEnv(t), map[string]string{"PIP_INDEX_URL": u}
		},
		func(s string) *url.Userinfo { return url.UserPassword("user", s) }},
	{"pip.conf named by PIP_CONFIG_FILE",
		func(t *testing.T, u string) ([]string, map[string]string) {
			conf := filepath.Join(t.TempDir(), "pip.conf")
			os.WriteFile(conf, []byte("[global]\nindex-url = "+u+"\ntimeout = 5\n"), 0o600)
			return baseProcEnv(t, "PIP_CONFIG_FILE="+conf), nil
		},
		func(s string) *url.Userinfo { return url.UserPassword("deploy", s) }},
	{"UV_INDEX_URL with a token",
		func(t *testing.T, u string) ([]string, map[string]string) {
			return baseProcEnv(t, "UV_INDEX_URL="+u), nil
		},
		func(s string) *url.Userinfo { return url.User(s) }},
}

// TestSecretsNeverPrinted plants index credentials three ways (the
// PIP_INDEX_URL of initialize, a pip.conf, a token in UV_INDEX_URL) and
// drives real PM processes with SYMPOSIUM_LOG=debug through every failure
// the index can cause: wrong credentials (401), a missing project (404),
// a server error (500), an unreachable index, a hash mismatch (-32013),
// hostile content (-32014) and a download cut halfway. No response, log
// line or stderr byte may contain the secret.
func TestSecretsNeverPrinted(t *testing.T) {
	for i, src := range secretSources {
		t.Run(strings.ReplaceAll(src.name, " ", "_"), func(t *testing.T) {
			secret := "s3cr3t" + strings.Repeat("Zq", 4) + string(rune('A'+i))
			ix := fakeindex.Start(demoPackages()...)
			t.Cleanup(ix.Close)
			if creds := src.creds(secret); true {
				ix.User = creds.Username()
				ix.Password, _ = creds.Password()
			}
			withCreds := func(base, s string) string {
				u, _ := url.Parse(base)
				u.User = src.creds(s)
				return u.String()
			}
			var procs []*pmtest.Proc
			var caches []string
			start := func(indexURL string) *pmtest.Proc {
				procEnv, initEnv := src.config(t, indexURL)
				cache := filepath.Join(t.TempDir(), "cache")
				caches = append(caches, cache)
				p := startPM(t, procEnv, t.TempDir(), cache, initEnv)
				procs = append(procs, p)
				return p
			}
			expect := func(p *pmtest.Proc, what string, code protocol.Code, method string, params any) {
				t.Helper()
				r := p.Call(method, params)
				if r.Code() != code {
					t.Errorf("%s: got %s, want code %d\nstderr:\n%s", what, r.Raw, code, p.Stderr())
				}
			}

			// The right credentials: success first (they are used), then
			// every content and index failure.
			p := start(withCreds(ix.URL, secret))
			expect(p, "authenticated fetch", 0, "fetch", fetchParams("demo-plugin", "*", "check"))
			expect(p, "hash mismatch", -32013, "fetch", fetchParams("tampered", "*", "check"))
			expect(p, "hostile wheel", -32014, "fetch", fetchParams("escaper", "*", "check"))
			expect(p, "zip bomb", -32014, "load_plugin", map[string]any{"id": map[string]string{"pm": Name, "name": "bomb", "version": "*"}})
			expect(p, "cut download", -32012, "fetch", fetchParams("cutoff", "*", "check"))
			expect(p, "404", -32010, "fetch", fetchParams("no-such-project", "*", "check"))
			expect(p, "search", 0, "search", map[string]any{"query": "demo-plugin"})
			expect(p, "refresh", 0, "refresh", map[string]any{"update": "fetch", "force": true})
			ix.FailStatus.Store(500)
			expect(p, "500", -32012, "fetch", fetchParams("plain", "*", "check"))
			expect(p, "500 load_plugin", -32012, "load_plugin", map[string]any{"id": map[string]string{"pm": Name, "name": "plain", "version": "*"}})
			p.Call("search", map[string]any{"query": "plain"})
			p.Call("refresh", map[string]any{"update": "fetch", "force": true})
			ix.FailStatus.Store(0)

			// Wrong credentials: 401 everywhere.
			q := start(withCreds(ix.URL, secret+"-wrong"))
			expect(q, "401", -32012, "fetch", fetchParams("demo-plugin", "*", "check"))
			q.Call("search", map[string]any{"query": "demo-plugin"})
			q.Call("refresh", map[string]any{"update": "fetch", "force": true})

			// An index nobody listens on.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := "http://" + l.Addr().String() + "/simple/"
			l.Close()
			r := start(withCreds(dead, secret))
			expect(r, "unreachable", -32012, "fetch", fetchParams("demo-plugin", "*", "check"))
			r.Call("search", map[string]any{"query": "demo-plugin"})
			r.Call("refresh", map[string]any{"update": "fetch", "force": true})

			// Nor does anything the PM stored.
			for _, c := range caches {
				for _, f := range onlyDirs(treeOf(t, c)) {
					if b, _ := os.ReadFile(filepath.Join(c, f)); strings.Contains(string(b), secret) {
						t.Errorf("%s stores the secret", f)
					}
				}
			}
			for _, p := range procs {
				p.Close()
				out, errOut := p.Stdout(), p.Stderr()
				if !strings.Contains(errOut, "level=") && !strings.Contains(errOut, `"level"`) {
					t.Errorf("no debug log on stderr (is SYMPOSIUM_LOG=debug honoured?):\n%s", errOut)
				}
				// The index URL is logged, redacted: the check above
				// looks where the secret would be.
				if !strings.Contains(errOut, "***@127.0.0.1") {
					t.Errorf("the debug log does not show the redacted index URL:\n%s", errOut)
				}
				for _, s := range []string{secret, url.QueryEscape(secret)} {
					if strings.Contains(out, s) {
						t.Errorf("a response carries the secret:\n%s", out)
					}
					if strings.Contains(errOut, s) {
						t.Errorf("stderr carries the secret:\n%s", errOut)
					}
				}
			}
		})
	}
}

// TestProxySecretsNeverPrinted: credentials in HTTP_PROXY and in the index
// URL, with the proxy unreachable (loopback, so the index host, a name
// that never resolves, is only ever reached through it).
func TestProxySecretsNeverPrinted(t *testing.T) {
	const proxySecret, indexSecret = "pr0xyPassw0rdQ", "ind3xPassw0rdQ"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	procEnv := baseProcEnv(t, "HTTP_PROXY=http://puser:"+proxySecret+"@"+dead, "HTTPS_PROXY=http://puser:"+proxySecret+"@"+dead)
	p := startPM(t, procEnv, t.TempDir(), filepath.Join(t.TempDir(), "cache"),
		map[string]string{"PIP_INDEX_URL": "http://user:" + indexSecret + "@pypi.invalid/simple/"})
	if r := p.Call("fetch", fetchParams("demo-plugin", "*", "check")); r.Code() != -32012 {
		t.Errorf("through a dead proxy: %s", r.Raw)
	}
	p.Call("search", map[string]any{"query": "demo-plugin"})
	p.Call("refresh", map[string]any{"update": "fetch", "force": true})
	p.Close()
	all := p.Stdout() + p.Stderr()
	if !strings.Contains(all, "proxyconnect") {
		t.Errorf("the failure did not go through the proxy:\n%s", all)
	}
	for _, s := range []string{proxySecret, indexSecret} {
		if strings.Contains(all, s) {
			t.Errorf("output carries %q:\n%s", s, all)
		}
	}
}

// TestRequirementsSecretsNeverPrinted: tokens in the URLs of requirements
// files and pyproject.toml (remote includes, editable VCS URLs, ${VAR}
// expansion, unparseable direct references) are kept out of list_deps'
// warnings and answer.
func TestRequirementsSecretsNeverPrinted(t *testing.T) {
	secrets := []string{"rEqS3cretA", "rEqS3cretB", "rEqS3cretC", "rEqS3cretD", "rEqS3cretE", "rEqS3cretF", "rEqS3cretG"}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte(
		"-r https://user:"+secrets[0]+"@reqs.example/more.txt\n"+
			"-e git+https://"+secrets[1]+"@github.com/org/repo.git\n"+
			"-e git+https://${GIT_TOKEN}@github.com/org/other.git\n"+
			"broken @@ https://u:"+secrets[3]+"@files.example/x.whl\n"+
			"--index-url https://u:"+secrets[4]+"@idx.example/simple\n"+
			"fine==1.0\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte(
		"[project]\nname = \"app\"\nversion = \"0\"\ndependencies = [\"bad @@ https://u:"+secrets[5]+"@h.example/b.whl\", \"fine==1.0\", "+
			"\"private @ https://tok:"+secrets[6]+"@files.example/private-1.0-py3-none-any.whl\"]\n"), 0o644)
	cache := filepath.Join(t.TempDir(), "cache")
	p := startPM(t, baseProcEnv(t), ws, cache, map[string]string{"GIT_TOKEN": secrets[2]})
	if r := p.Call("list_deps", map[string]any{}); r.Error != nil || !strings.Contains(r.Raw, `"private"`) {
		t.Errorf("list_deps: %s", r.Raw)
	}
	p.Call("workspace", map[string]any{})
	p.Call("active_plugins", map[string]any{"deps": []map[string]string{{"pm": Name, "name": "private", "version": "*"}}})
	p.Close()
	// The persisted list_deps answer records ${GIT_TOKEN} by hash only.
	for _, f := range onlyDirs(treeOf(t, cache)) {
		if b, _ := os.ReadFile(filepath.Join(cache, f)); strings.Contains(string(b), secrets[2]) {
			t.Errorf("%s stores the expanded token", f)
		}
	}
	all := p.Stdout() + p.Stderr()
	// The warnings are still there, naming the line, redacted.
	for _, want := range []string{`https://***@reqs.example/more.txt`, `git+https://***@github.com/org/other.git`, `requirements.txt:4`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning mentioning %s:\n%s", want, all)
		}
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("output carries %q:\n%s", s, all)
		}
	}
}
