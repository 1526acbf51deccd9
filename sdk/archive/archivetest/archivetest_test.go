package archivetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
)

// TestWritten counts the bytes written to a file.
func TestWritten(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	n, err := Written(func() { os.WriteFile(f, make([]byte, 3<<20), 0o644) })
	if errors.Is(err, ErrUnmeasured) {
		t.Skip(err)
	}
	if err != nil || n < 3<<20 || n > 3<<20+64<<10 {
		t.Fatalf("Written = %d, %v; want about %d", n, err, 3<<20)
	}
}

// TestBombs: the bombs are about 1 MB and unpack, capless, to what they
// say (checked on small ones); under the default caps they are refused.
func TestBombs(t *testing.T) {
	extra := map[string]string{"top/a.txt": "hello"}
	open := func(t *testing.T) *os.Root {
		root, err := os.OpenRoot(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		return root
	}
	noCap := archive.Options{Limits: archive.Limits{MaxBytes: 1 << 40, MaxEntries: 1000}}
	tgz := TgzBomb("top/", 3, extra)
	if err := archive.ExtractTarGz(context.Background(), bytes.NewReader(tgz), int64(len(tgz)), open(t), noCap); err != nil {
		t.Fatalf("tgz: %v", err)
	}
	for _, declare := range []uint64{0, 1 << 10} {
		z := ZipBomb("top/", 3, declare, extra)
		err := archive.ExtractZip(context.Background(), bytes.NewReader(z), int64(len(z)), open(t), noCap)
		if declare == 0 && err != nil {
			t.Fatalf("zip: %v", err)
		}
	}
	for name, data := range map[string][]byte{"tgz": TgzBomb("top/", 900, extra), "zip": ZipBomb("top/", 900, 0, extra)} {
		if len(data) < 900<<10 || len(data) > 1100<<10 {
			t.Errorf("%s bomb is %d bytes, want about 1 MB", name, len(data))
		}
	}
}
