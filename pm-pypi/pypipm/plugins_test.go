package pypipm

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTOML checks that a SYMPOSIUM.toml is decoded into the untyped
// table sdk/manifest takes, and that a malformed one is skipped with a
// warning naming the file and the line.
func TestReadTOML(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	p := newPM(t, dir, t.TempDir(), nil)
	p.log = slog.New(slog.NewTextHandler(&logs, nil))

	id := pkgID("x", "1")
	good := filepath.Join(dir, "good")
	os.MkdirAll(good, 0o755)
	os.WriteFile(filepath.Join(good, ManifestFile), []byte("name = \"x\"\n[[skills]]\nsource.path = \"guidance\"\n"), 0o644)
	tbl, ok, _ := p.readTOML(context.Background(), id, good, nil)
	skills, _ := tbl["skills"].([]any)
	if !ok || tbl["name"] != "x" || len(skills) != 1 {
		t.Errorf("good manifest: %#v %v", tbl, ok)
	}

	badDir := filepath.Join(dir, "bad")
	os.MkdirAll(badDir, 0o755)
	bad := filepath.Join(badDir, ManifestFile)
	os.WriteFile(bad, []byte("name = \"x\"\n[[skills]\n"), 0o644)
	if tbl, ok, _ := p.readTOML(context.Background(), id, badDir, nil); ok || tbl != nil {
		t.Errorf("malformed manifest accepted: %#v", tbl)
	}
	if !strings.Contains(logs.String(), bad+":2: invalid TOML") {
		t.Errorf("warning does not name %s:2:\n%s", bad, logs.String())
	}
	if _, ok, _ := p.readTOML(context.Background(), id, filepath.Join(dir, "missing"), nil); ok {
		t.Error("missing manifest read")
	}
}
