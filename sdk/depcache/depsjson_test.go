package depcache_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// checkDepsJSON checks DepsJSON on the lines of a persisted snapshot: it
// must answer exactly what encoding/json makes of the ids ParseDeps reads
// from them, and decline what ParseDeps refuses or the harness would
// refuse in an answer (an empty version).
func checkDepsJSON(t *testing.T, lines []byte) {
	t.Helper()
	got, ok := depcache.DepsJSON(lines, "cargo")
	deps, err := depcache.ParseDeps(lines, "cargo")
	if err != nil || slices.ContainsFunc(deps, func(d protocol.PackageID) bool { return d.Version == "" }) {
		if ok {
			t.Errorf("DepsJSON(%q) = %s, want it declined (ParseDeps: %v)", lines, got, err)
		}
		return
	}
	want, err := json.Marshal(deps)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !bytes.Equal(got, want) {
		t.Errorf("DepsJSON(%q) = %s, %v; want %s", lines, got, ok, want)
	}
}

func TestDepsJSON(t *testing.T) {
	for _, lines := range []string{
		"",
		"serde 1.0.0\n",
		"serde 1.0.0\ntokio *\nserde 2.0.0-rc.1+build\n",
		"a\"b 1\nc\\d 2\n",
		"x<y>&z 1\n",
		"caf\u00e9 1\nline\u2028sep 1\n",
		"bad\xffutf8 1\n",
		"tab\there 1\nctl\x01 1\n",
		"noversion \n",
		"nospace\n",
		" 1.0.0\n",
		"cr\r 1\n",
		"a 1 2\n",
		"a 1\r\n",
		"last-without-newline 1",
	} {
		checkDepsJSON(t, []byte(lines))
	}
}

func FuzzDepsJSON(f *testing.F) {
	for _, s := range []string{"serde 1.0.0\n", "a\"<b 1\nc *\n", "x \n", "caf\u00e9 1", "\xff 1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lines []byte) { checkDepsJSON(t, lines) })
}
