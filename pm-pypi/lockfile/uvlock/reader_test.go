package uvlock

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestParseReader checks that reading a lockfile a table at a time from
// the file gives what Parse gives from its bytes, for every test file.
func TestParseReader(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a directory
		}
		want, werr := Parse(data)
		got, gerr := ParseReader(bytes.NewReader(data))
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("%s: ParseReader error %v, Parse error %v", f, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ParseReader read %+v, Parse %+v", f, got, want)
		}
	}
	if len(files) == 0 {
		t.Fatal("no test files")
	}
}
