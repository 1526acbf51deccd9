package packagelock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// decodeTyped is the encoding/json decode scanLock stands in for.
func decodeTyped(data []byte) (json.RawMessage, map[string]Package, json.RawMessage, error) {
	var typed struct {
		LockfileVersion json.RawMessage    `json:"lockfileVersion"`
		Packages        map[string]Package `json:"packages"`
		Dependencies    json.RawMessage    `json:"dependencies"`
	}
	err := json.Unmarshal(data, &typed)
	return typed.LockfileVersion, typed.Packages, typed.Dependencies, err
}

// checkScan fails t when scanLock accepts data and its result differs
// from encoding/json's, or encoding/json rejects what it accepted.
func checkScan(t *testing.T, data []byte) bool {
	t.Helper()
	v, pkgs, deps, ok := scanLock(data)
	if !ok {
		return false
	}
	wv, wpkgs, wdeps, err := decodeTyped(data)
	if err != nil {
		t.Fatalf("scanLock accepted %q, which encoding/json rejects: %v", data, err)
	}
	if !bytes.Equal(v, wv) || !bytes.Equal(deps, wdeps) || !reflect.DeepEqual(pkgs, wpkgs) {
		t.Fatalf("scanLock(%q) = %s %v %s, encoding/json %s %v %s", data, v, pkgs, deps, wv, wpkgs, wdeps)
	}
	return true
}

var scanSeeds = []string{
	`{"lockfileVersion":3,"packages":{"":{"name":"a"},"node_modules/x":{"version":"1.0.0","resolved":"https://r/x.tgz","integrity":"sha512-A","dev":true,"optional":false,"link":false,"license":"MIT","engines":{"node":">=1"},"bin":{"x":"a.js"},"cpu":["x64"]}}}`,
	`{"lockfileVersion":2,"packages":{"node_modules/x":{"version":"1.0.0"}},"dependencies":{"x":{"version":"1.0.0"}}}`,
	`{"packages":{"node_modules/x":{"version":"1","version":"2"},"node_modules/x":{"dev":true}}}`,
	`{"packages":{"node_modules/\u00e9":{"version":"caf\u00e9 \"q\""}},"x":[1,-2.5e3,true,null,"\ud83d\ude00"]}`,
	`{"PACKAGES":{}}`,
	`{"packages":{"a":{"Version":"1"}}}`,
	`{"packages":{"a":{"version":null}}}`,
	`{"packages":{"a":null}}`,
	`{"packages":{"a":{"version":1}}}`,
	`{"packages":{},"packages":{"a":{}}}`,
	`{"lockfileVersion":01}`,
	`{"x":"\x01"}`,
	"{\"packages\":{\"a\":{\"name\":\"\xff\"}}}",
	`{"packages":{"a":{}}} x`,
	`{"lockfileVersion":1.5e+2,"packages":null}`,
	`{"lockfileVersion":3,"packages":{"a":{"link":true,"resolved":"packages/a"}}}`,
	` {} `,
}

// TestScanMatchesDecode: scanLock accepts the shape npm writes and answers
// what encoding/json answers; everything it does not handle it leaves to
// encoding/json.
func TestScanMatchesDecode(t *testing.T) {
	accepted := 0
	for _, s := range scanSeeds {
		if checkScan(t, []byte(s)) {
			accepted++
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !checkScan(t, data) {
			t.Errorf("%s: npm's own shape not scanned", f)
		}
	}
	if accepted < 6 {
		t.Errorf("only %d of the seeds scanned", accepted)
	}
	for _, s := range []string{`{"PACKAGES":{}}`, `{"packages":{"a":{"Version":"1"}}}`, `{"packages":{},"packages":{"a":{}}}`, `{"lockfileVersion":01}`, `{"packages":{"a":{}}} x`} {
		if _, _, _, ok := scanLock([]byte(s)); ok {
			t.Errorf("scanLock accepted %s", s)
		}
	}
}

// FuzzScanMatchesDecode holds scanLock to encoding/json's answer.
func FuzzScanMatchesDecode(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

// TestScanAcrossTheSample: a packages map longer than the sample read
// before the map is made (sampleEntries), or exactly as long, or with
// repeated keys inside the sample and across its end, is what
// encoding/json decodes: the last entry of a key wins.
func TestScanAcrossTheSample(t *testing.T) {
	for _, n := range []int{sampleEntries - 1, sampleEntries, sampleEntries + 1, 3 * sampleEntries} {
		var b bytes.Buffer
		b.WriteString(`{"lockfileVersion":2,"packages":{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			key := i
			if i == 20 || i == n-1 {
				key = 3 // repeated inside the sample, and after it
			}
			fmt.Fprintf(&b, `"node_modules/p%d":{"version":"1.0.%d"}`, key, i)
		}
		b.WriteString(`},"dependencies":{"p1":{"version":"1.0.1"}}}`)
		if !checkScan(t, b.Bytes()) {
			t.Errorf("%d entries: not scanned", n)
		}
	}
	if got := sizeHint(64, 6400, 1<<40); got != 64+maxHint {
		t.Errorf("sizeHint for a huge rest = %d, want it bounded at %d more", got, maxHint)
	}
}
