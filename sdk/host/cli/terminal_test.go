package cli

import (
	"os"
	"testing"
)

// TestIsTerminal: a character device that is not a terminal (/dev/null)
// gets no progress; a file neither. (Progress on a real terminal is
// exercised by testscript/testdata/cli-progress.txtar through script(1).)
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("a regular file is taken for a terminal")
	}
	done := progress(f, "working")
	done()
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("progress wrote %d bytes to a file", fi.Size())
	}
}
