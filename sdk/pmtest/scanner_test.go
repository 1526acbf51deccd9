package pmtest

import "testing"

// TestScannerExcerptIgnoresWriteBoundaries checks that the excerpt no-secrets
// reports around a leaked credential is the same whether the PM's lines
// reach the scanner one write each, together, or split mid-secret: a loaded
// machine coalesces pipe reads, and the report must not change with it.
func TestScannerExcerptIgnoresWriteBoundaries(t *testing.T) {
	line := "read a line; proxy is http://pmtest:" + secretValue + "@127.0.0.1:9\n"
	before := "starting up with a long first line of no interest at all\n"
	const want = "read a line; proxy is http://pmtest:" + secretValue + "@127.0.0.1:9 "
	for name, writes := range map[string][]string{
		"line by line": {before, line, line},
		"one write":    {before + line + line},
		"split secret": {before + line[:40], line[40:] + line},
	} {
		t.Run(name, func(t *testing.T) {
			s := &scanner{needs: [][]byte{[]byte(secretValue)}}
			for _, w := range writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if s.found != want {
				t.Errorf("excerpt %q, want %q", s.found, want)
			}
		})
	}
}
