package pypipm

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestCredentialsNeverLogged uses an index that requires basic auth given
// in PIP_INDEX_URL: the PM authenticates, and neither its debug log nor its
// errors ever contain the password.
func TestCredentialsNeverLogged(t *testing.T) {
	const secret = "hunter2-very-secret"
	ix := fakeindex.Start(demoPackages()[0])
	ix.User, ix.Password = "alice", secret
	t.Cleanup(ix.Close)
	u, _ := url.Parse(ix.URL)
	var logs bytes.Buffer
	run := func(pass string) (string, error) {
		u.User = url.UserPassword("alice", pass)
		p := New()
		p.Initialize(context.Background(), &pmserver.Session{
			ProtocolVersion: 1, Workspace: t.TempDir(), CacheDir: t.TempDir(),
			Env:    pmserver.NewEnv(testEnv(t, map[string]string{"PIP_INDEX_URL": u.String()})),
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		res, err := p.Fetch(context.Background(), id("demo-plugin", "*"), protocol.UpdateCheck)
		if err != nil {
			return "", err
		}
		hits, err := p.Search(context.Background(), "demo-plugin")
		if err != nil || len(hits) != 1 {
			t.Errorf("search with credentials: %v %v", hits, err)
		}
		return res.ID.Version, nil
	}
	if v, err := run(secret); err != nil || v != "1.0.0" {
		t.Fatalf("authenticated fetch: %v %v", v, err)
	}
	_, err := run("wrong-" + secret)
	if code(err) != protocol.CodeRegistry {
		t.Errorf("wrong password: %v", err)
	}
	if pe, ok := err.(*protocol.Error); ok && strings.Contains(string(pe.Data)+pe.Message, secret) {
		t.Errorf("error carries the password: %s %s", pe.Message, pe.Data)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("log carries the password:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "alice") && !strings.Contains(logs.String(), "***") {
		t.Logf("log: %s", logs.String())
	}
}
