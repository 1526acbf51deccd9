package pmserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// depsSeeds are active_plugins params near the shape scanDeps reads, on
// both sides of its edge.
var depsSeeds = []string{
	`{"deps":[{"pm":"npm","name":"a","version":"1.0.0"},{"pm":"npm","name":"@s/b","version":"2.0.0-rc.1"}]}`,
	`{"deps":[]}`,
	` { "deps" : [ { "version" : "1" , "name" : "é名" , "pm" : "cargo" } ] } `,
	"{\"deps\":[\n{\"pm\":\"pypi\",\r\n\"name\":\"x\",\t\"version\":\"*\"}]}",
	`{"deps":[{}]}`,
	`{"deps":[{"pm":"npm"}]}`,
	`{"deps":[{"pm":"npm","name":"a\u00e9","version":"1"}]}`,
	`{"deps":[{"pm":"npm","name":"a\"b","version":"1"}]}`,
	`{"deps":[{"pm":"npm","pm":"cargo","name":"a","version":"1"}]}`,
	`{"deps":[{"PM":"npm","Name":"a","VERSION":"1"}]}`,
	`{"deps":[{"pm":"npm","name":"a","version":"1","extra":2}]}`,
	`{"deps":[{"pm":null,"name":"a","version":"1"}]}`,
	`{"deps":[{"pm":1,"name":"a","version":"1"}]}`,
	`{"deps":null}`, `{"deps":{}}`, `{}`, `null`, `[]`, `{"deps":[]}x`, `{"deps":[],"deps":[{}]}`,
	`{"deps":[],"other":1}`, `{"deps":[{"pm":"npm","name":"a","version":"1"},]}`, `{"deps":[{"pm":"npm","name":"a","version":"1"}`,
	"{\"deps\":[{\"pm\":\"n\xffpm\"}]}",
}

// FuzzScanDeps: wherever scanDeps reads params, encoding/json decodes the
// same dependencies from them (nil and empty alike), so answering from
// scanDeps is answering as before.
func FuzzScanDeps(f *testing.F) {
	for _, s := range depsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		deps, ok := scanDeps(raw)
		if !ok {
			return
		}
		var want protocol.ActivePluginsParams
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("scanDeps read %q, which encoding/json refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(deps, want.Deps) {
			t.Fatalf("%q: scanDeps read %#v, encoding/json %#v", raw, deps, want.Deps)
		}
	})
}

// TestScanDepsReadsHostParams: params encoded as hosts encode them are read
// by scanDeps, not left to encoding/json, and the seeds it must leave are
// left.
func TestScanDepsReadsHostParams(t *testing.T) {
	for _, p := range []protocol.ActivePluginsParams{
		{Deps: []protocol.PackageID{}},
		{Deps: []protocol.PackageID{{PM: "npm", Name: "@scope/a-b", Version: "1.2.3-beta.1+build"}, {PM: "pypi", Name: "zope.interface", Version: "*"}}},
		{Deps: []protocol.PackageID{{PM: "cargo", Name: "naïve", Version: "0.1.0"}}},
	} {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		deps, ok := scanDeps(raw)
		if !ok || !reflect.DeepEqual(deps, p.Deps) {
			t.Errorf("%s: scanDeps read %v (%v), want %v", raw, deps, ok, p.Deps)
		}
	}
	for i, s := range depsSeeds {
		_, ok := scanDeps([]byte(s))
		if want := i < 6; ok != want {
			t.Errorf("%s: scanDeps reports %v, want %v", s, ok, want)
		}
	}
}
