package pypipm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// recordingProxy is an HTTP proxy that records the URLs asked of it and
// answers each with 404 ("no such project": enough to see it arrived).
type recordingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	urls []string
}

func startRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	p := &recordingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.urls = append(p.urls, r.URL.String())
		p.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *recordingProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	urls := p.urls
	p.urls = nil
	return urls
}

// TestProxySettingsPipHonours: the PM sends its requests through the proxy
// pip 23.2 would use (each case checked with pip download against
// recording proxies): ALL_PROXY/all_proxy (urllib's "all" key, which
// requests falls back to), PIP_PROXY, or proxy = in pip.conf (the file the
// index configuration is read from), the last two over HTTP(S)_PROXY and
// NO_PROXY; not around it, straight to the index.
func TestProxySettingsPipHonours(t *testing.T) {
	const index = "http://pypi.proxytest.invalid/simple/"
	want, other := startRecordingProxy(t), startRecordingProxy(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "pip.conf")
	os.WriteFile(conf, []byte("[global]\nindex-url = "+index+"\nproxy = "+want.URL+"\n"), 0o644)
	installConf := filepath.Join(dir, "install.conf")
	os.WriteFile(installConf, []byte("[global]\nindex-url = "+index+"\nproxy = "+other.URL+"\n[install]\nproxy = "+want.URL+"\n"), 0o644)
	for name, env := range map[string]map[string]string{
		"HTTP_PROXY":                 {"PIP_INDEX_URL": index, "HTTP_PROXY": want.URL},
		"ALL_PROXY":                  {"PIP_INDEX_URL": index, "ALL_PROXY": want.URL},
		"all_proxy":                  {"PIP_INDEX_URL": index, "all_proxy": want.URL},
		"http_proxy over HTTP_PROXY": {"PIP_INDEX_URL": index, "http_proxy": want.URL, "HTTP_PROXY": other.URL},
		"PIP_PROXY":                  {"PIP_INDEX_URL": index, "PIP_PROXY": want.URL},
		"PIP_PROXY over the env":     {"PIP_INDEX_URL": index, "PIP_PROXY": want.URL, "HTTP_PROXY": other.URL, "ALL_PROXY": other.URL},
		"PIP_PROXY despite NO_PROXY": {"PIP_INDEX_URL": index, "PIP_PROXY": want.URL, "NO_PROXY": "pypi.proxytest.invalid"},
		"PIP_PROXY over pip.conf":    {"PIP_CONFIG_FILE": installConf, "PIP_PROXY": want.URL, "HTTP_PROXY": other.URL},
		"pip.conf proxy =":           {"PIP_CONFIG_FILE": conf},
		"pip.conf over HTTP_PROXY":   {"PIP_CONFIG_FILE": conf, "HTTP_PROXY": other.URL},
		"pip.conf [install] proxy":   {"PIP_CONFIG_FILE": installConf},
	} {
		t.Run(name, func(t *testing.T) {
			want.take()
			other.take()
			p := newPM(t, t.TempDir(), t.TempDir(), env)
			_, err := p.Fetch(context.Background(), id("demo", "*"), protocol.UpdateCheck)
			if got := want.take(); len(got) == 0 {
				t.Errorf("no request went through the proxy pip uses (%v); through the other: %q", err, other.take())
			} else if got[0] != index+"demo/" {
				t.Errorf("through the proxy: %q", got)
			}
			if got := other.take(); len(got) != 0 {
				t.Errorf("through the proxy pip does not use: %q", got)
			}
		})
	}
}
