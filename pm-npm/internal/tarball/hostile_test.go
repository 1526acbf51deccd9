package tarball

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// countingReader counts the compressed bytes the extractor consumed.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestExtractHostileCorpus runs the shared corpus of malicious tarballs
// through Extract with the limits the PM uses: each is a ContentError
// naming the cause, nothing lands beside the output directory, and the
// gzip bombs are refused after reading a small part of their input.
func TestExtractHostileCorpus(t *testing.T) {
	for _, h := range fakeregistry.HostileTarballs() {
		t.Run(h.Name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cr := &countingReader{r: bytes.NewReader(h.Tgz)}
			err := Extract(cr, dir, DefaultLimits)
			var ce *ContentError
			if !errors.As(err, &ce) || !strings.Contains(ce.Detail, h.Detail) {
				t.Fatalf("err %v, want a ContentError mentioning %q", err, h.Detail)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 {
				t.Errorf("wrote beside the output directory: %v", ents)
			}
			if strings.HasPrefix(h.Name, "bomb") && cr.n > int64(len(h.Tgz))/10 {
				t.Errorf("read %d of %d compressed bytes before refusing the bomb", cr.n, len(h.Tgz))
			}
		})
	}
}

// TestExtractCollisionsAllowed: what is not a collision still unpacks.
func TestExtractCollisionsAllowed(t *testing.T) {
	dir := t.TempDir()
	tgz := fakeregistry.Tarball(
		fakeregistry.Entry{Name: "package/", Type: '5'},
		fakeregistry.Entry{Name: "package/lib/", Type: '5'},
		fakeregistry.Entry{Name: "package/lib/", Type: '5'}, // a directory listed twice is harmless
		fakeregistry.Entry{Name: "package/lib/a.js", Body: "a"},
		fakeregistry.Entry{Name: "package/lib/b.js", Body: "b"},
		fakeregistry.Entry{Name: "package/lib.js", Body: "c"},
		fakeregistry.Entry{Name: "toplevel", Body: "dropped"},
		fakeregistry.Entry{Name: "toplevel", Body: "dropped again"},
	)
	if err := Extract(bytes.NewReader(tgz), dir, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"lib/a.js", "lib/b.js", "lib.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
