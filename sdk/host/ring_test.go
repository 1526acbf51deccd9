package host

import (
	"strings"
	"testing"
)

func TestRing(t *testing.T) {
	r := newRing(3)
	var seen []string
	long := strings.Repeat("x", 3*maxStderrLine)
	r.drain(strings.NewReader("one\ntwo\r\n\n"+long+"\nthree\nfour"), func(s string) { seen = append(seen, s) })
	got := r.lines()
	if len(got) != 3 || got[0] != strings.Repeat("x", maxStderrLine) || got[1] != "three" || got[2] != "four" {
		t.Errorf("kept %q", got)
	}
	if len(seen) != 5 {
		t.Errorf("passed on %d lines, want 5 (blank lines skipped)", len(seen))
	}
}
