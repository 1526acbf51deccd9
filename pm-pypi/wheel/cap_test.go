package wheel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
)

// logSlack covers what the process writes besides the extraction while a
// measurement runs.
const logSlack = 64 << 10

// TestBombWritesAtMostTheCap: a 1 MB wheel (honest or lying about its
// entries' sizes) or sdist of 900 files of 1 MiB of zeros (900 MiB
// expanded) makes the PM's unpacking, with the limits fetch uses, write at
// most the archive cap of sdk/archive for its size (100 × its size +
// 8 MiB), counted by the process's written bytes; it is refused as
// content and leaves nothing.
func TestBombWritesAtMostTheCap(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		extract func(context.Context, *os.File, string, string, archive.Limits) (*Info, error)
	}{
		{"a-1-py3-none-any.whl", archivetest.ZipBomb("a/", 900, 0, map[string]string{"a-1.dist-info/METADATA": meta}), ExtractWheelFile},
		{"lying-a-1-py3-none-any.whl", archivetest.ZipBomb("a/", 900, 1<<10, map[string]string{"a-1.dist-info/METADATA": meta}), ExtractWheelFile},
		{"a-1.tar.gz", archivetest.TgzBomb("a-1/", 900, map[string]string{"a-1/PKG-INFO": meta}), ExtractSdistFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.data) > 1100<<10 {
				t.Fatalf("the bomb is %d bytes; the test wants about 1 MB", len(tt.data))
			}
			src := writeTemp(t, tt.name, tt.data)
			f, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			parent := t.TempDir()
			size := int64(len(tt.data))
			written, merr := archivetest.Written(func() {
				_, err = tt.extract(context.Background(), f, tt.name, filepath.Join(parent, "out"), archive.DefaultLimits)
			})
			if errors.Is(merr, archivetest.ErrUnmeasured) {
				t.Skip(merr)
			}
			if !archive.IsContent(err) {
				t.Fatalf("extract: %v, want a refusal", err)
			}
			if budget := archive.DefaultLimits.Budget(size); written > budget+logSlack {
				t.Errorf("unpacking the %d-byte bomb wrote %d bytes; the cap is %d", size, written, budget)
			}
			t.Logf("%d-byte archive, %d bytes written (cap %d): %v", size, written, archive.DefaultLimits.Budget(size), err)
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}
