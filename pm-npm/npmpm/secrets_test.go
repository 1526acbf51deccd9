package npmpm

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestSecretsNeverLeak plants npm credentials in every place npm reads them
// from — a nerf-darted :_authToken in the project .npmrc, :_auth and
// :username/:_password in the user's ~/.npmrc, npm_config_//…:_authToken in
// the process environment and in initialize's env, a registry URL with
// user:password, a proxy URL with user:password — and makes a real PM process (SYMPOSIUM_LOG=debug) use them
// and then fail every way a registry can: 401, 404, 500, an integrity
// mismatch and an unreachable host. No stdout byte (responses, error
// messages and data) and no stderr byte (logs) may hold a credential, in
// plain, base64 or URL-escaped form.
func TestSecretsNeverLeak(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	type scenario struct {
		name string
		// config returns the files to write (relative to the workspace's
		// parent: "ws/.npmrc", "home/.npmrc"), the process and initialize
		// environments, for the registry at regURL (ending in "/") whose
		// nerf dart is nerf ("//127.0.0.1:PORT/").
		config  func(regURL, nerf string) (files, procEnv, initEnv map[string]string)
		auth    string   // the Authorization header the registry demands ("" to demand none)
		secrets []string // every form of the credentials that must not appear
	}
	const (
		tokProject = "npm_PROJECTtoken7f3a9c1e"
		authPass   = "AuthPassw0rdQ8"
		plainPass  = "PlainPassw0rdZ4"
		tokEnv     = "npm_ENVtoken5d2b8e4f"
		tokInit    = "npm_INITtoken9a6c3f0d"
		urlPass    = "UrlPassw0rdK7"
		proxyPass  = "ProxyPassw0rdM2"
	)
	scenarios := []scenario{{
		name: "project npmrc _authToken",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			return map[string]string{"ws/.npmrc": "registry=" + reg + "\n" + nerf + ":_authToken=" + tokProject + "\n"}, nil, nil
		},
		auth:    "Bearer " + tokProject,
		secrets: []string{tokProject},
	}, {
		name: "user npmrc _auth",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			return map[string]string{"home/.npmrc": "registry=" + reg + "\n" + nerf + ":_auth=" + b64("alice:"+authPass) + "\n"}, nil, nil
		},
		auth:    "Basic " + b64("alice:"+authPass),
		secrets: []string{authPass, b64("alice:" + authPass)},
	}, {
		name: "user npmrc username and _password",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			return map[string]string{"home/.npmrc": "registry=" + reg + "\n" + nerf + ":username=bob\n" + nerf + ":_password=" + b64(plainPass) + "\n"}, nil, nil
		},
		auth:    "Basic " + b64("bob:"+plainPass),
		secrets: []string{plainPass, b64(plainPass), b64("bob:" + plainPass)},
	}, {
		name: "process env npm_config_//…:_authToken",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			return nil, map[string]string{"npm_config_registry": reg, "npm_config_" + nerf + ":_authToken": tokEnv}, nil
		},
		auth:    "Bearer " + tokEnv,
		secrets: []string{tokEnv},
	}, {
		name: "initialize env npm_config_//…:_authToken",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			return nil, nil, map[string]string{"npm_config_registry": reg, "npm_config_" + nerf + ":_authToken": tokInit}
		},
		auth:    "Bearer " + tokInit,
		secrets: []string{tokInit},
	}, {
		name: "registry URL with user:password",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			withUser := strings.Replace(reg, "http://", "http://carol:"+urlPass+"@", 1)
			return map[string]string{"ws/.npmrc": "registry=" + withUser + "\n"}, nil, nil
		},
		// The credentials go with requests to the URL that carries them
		// (packuments, search); tarball URLs come from the registry without
		// them, so the registry here demands nothing on success.
		secrets: []string{urlPass, b64("carol:" + urlPass)},
	}, {
		name: "proxy URL with user:password",
		config: func(reg, nerf string) (map[string]string, map[string]string, map[string]string) {
			// The fake registry doubles as the HTTP proxy to a registry on a
			// host that does not resolve (loopback targets bypass proxies).
			proxy := strings.Replace(reg, "http://", "http://dave:"+proxyPass+"@", 1)
			return map[string]string{"ws/.npmrc": "registry=http://registry.invalid/\nproxy=" + proxy + "\n"}, nil, nil
		},
		secrets: []string{proxyPass, b64("dave:" + proxyPass)},
	}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			reg := fakeregistry.New()
			defer reg.Close()
			reg.Publish(fakeregistry.Version{Name: "pkg", Version: "1.0.0", Description: "a package"})
			reg.Publish(fakeregistry.Version{Name: "other", Version: "1.0.0"})
			reg.Publish(fakeregistry.Version{Name: "tampered", Version: "1.0.0",
				Integrity: "sha512-" + b64(strings.Repeat("x", 64))})
			u, _ := url.Parse(reg.URL())
			root := t.TempDir()
			files, procEnv, initEnv := sc.config(reg.URL(), "//"+u.Host+"/")
			writeFiles(t, root, map[string]string{"ws/package.json": `{"name":"app","version":"1.0.0"}`, "home/.keep": ""})
			writeFiles(t, root, files)
			env := isolatedEnv(t, procEnv)
			env["HOME"] = filepath.Join(root, "home")
			p := startPM(t, filepath.Join(root, "ws"), filepath.Join(root, "cache"), env, initEnv)

			// The credentials are really in use.
			reg.RequireAuthorization(sc.auth)
			if _, perr := p.fetch("pkg", "^1", protocol.UpdateCheck); perr != nil {
				t.Fatalf("fetch with the credentials: %v\nstderr:\n%s", perr, p.Stderr())
			}
			// 401: the registry wants other credentials.
			reg.RequireToken("a-token-nobody-has")
			_, perr := p.fetch("other", "*", protocol.UpdateCheck)
			wantStatus(t, "401", perr, 401)
			wantCall(t, p, "search on 401", protocol.MethodSearch, protocol.SearchParams{Query: "pkg"}, protocol.CodeRegistry)
			wantCall(t, p, "load_plugin on 401", protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: npmID("other", "1.0.0")}, protocol.CodeRegistry)
			reg.RequireAuthorization("")
			// 404 and an integrity mismatch.
			_, perr = p.fetch("missing", "^1", protocol.UpdateCheck)
			wantCode(t, "404", perr, protocol.CodeNotFound)
			_, perr = p.fetch("tampered", "1.0.0", protocol.UpdateCheck)
			wantCode(t, "integrity", perr, protocol.CodeIntegrity)
			// 500.
			reg.Fail(500)
			_, perr = p.fetch("pkg", "^1", protocol.UpdateFetch)
			wantStatus(t, "500", perr, 500)
			wantCall(t, p, "search on 500", protocol.MethodSearch, protocol.SearchParams{Query: "pkg"}, protocol.CodeRegistry)
			// Unreachable.
			reg.Close()
			_, perr = p.fetch("other", "^1", protocol.UpdateCheck)
			wantCode(t, "unreachable", perr, protocol.CodeRegistry)
			wantCall(t, p, "search unreachable", protocol.MethodSearch, protocol.SearchParams{Query: "pkg"}, protocol.CodeRegistry)
			p.close()

			stderr, stdout := p.Stderr(), p.Stdout()
			if !strings.Contains(stderr, "level=DEBUG") {
				t.Errorf("no debug log on stderr, so the check below proves little:\n%s", stderr)
			}
			for _, s := range sc.secrets {
				forms := map[string]bool{s: true, url.QueryEscape(s): true, url.PathEscape(s): true}
				for form := range forms {
					if strings.Contains(stderr, form) {
						t.Errorf("stderr holds the credential %q:\n%s", form, stderr)
					}
					if strings.Contains(stdout, form) {
						t.Errorf("stdout holds the credential %q:\n%s", form, stdout)
					}
				}
			}
			t.Logf("%d bytes of stdout and %d of stderr checked", len(stdout), len(stderr))
			if t.Failed() {
				t.Logf("stderr:\n%s\nstdout:\n%s", stderr, stdout)
			}
		})
	}
}

// wantStatus fails unless err is -32012 with the HTTP status in its data.
func wantStatus(t *testing.T, what string, err *protocol.Error, status int) {
	t.Helper()
	wantCode(t, what, err, protocol.CodeRegistry)
	if err == nil {
		return
	}
	var data struct{ Status int }
	if json.Unmarshal(err.Data, &data); data.Status != status {
		t.Errorf("%s: data %s, want status %d", what, err.Data, status)
	}
}

// wantCall makes a call that must fail with code.
func wantCall(t *testing.T, p *pmProc, what, method string, params any, code protocol.Code) {
	t.Helper()
	r := p.Call(method, params)
	wantCode(t, what, r.Error, code)
}
