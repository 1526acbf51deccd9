package cargopm

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
)

// TestBombWritesAtMostTheCap: a 1 MB .crate of 900 files of 1 MiB of
// zeros (900 MiB expanded) is refused by the PM's audit as a decompression
// bomb under the caps of sdk/archive, and the audit writes nothing at all
// (cargo unpacks crates itself, and refuses more than 512 MiB unpacked:
// TestOracleHostileCrates' "bomb" case, through real cargo).
func TestBombWritesAtMostTheCap(t *testing.T) {
	data := archivetest.TgzBomb("bomb-1.0.0/", 900, map[string]string{
		"bomb-1.0.0/Cargo.toml": "[package]\nname = \"bomb\"\nversion = \"1.0.0\"\n"})
	if len(data) > 1100<<10 {
		t.Fatalf("the bomb is %d bytes; the test wants about 1 MB", len(data))
	}
	var err error
	written, merr := archivetest.Written(func() {
		err = auditCrate(context.Background(), bytes.NewReader(data), int64(len(data)), "bomb-1.0.0.crate", "bomb-1.0.0", archive.DefaultLimits)
	})
	if errors.Is(merr, archivetest.ErrUnmeasured) {
		t.Skip(merr)
	}
	if !archive.IsContent(err) {
		t.Fatalf("audit: %v, want a refusal", err)
	}
	// Nothing is written; a few KiB of slack for the test's own output.
	if written > 64<<10 {
		t.Errorf("auditing the %d-byte bomb wrote %d bytes; it writes nothing", len(data), written)
	}
	t.Logf("%d-byte crate, %d bytes written: %v", len(data), written, err)
}
