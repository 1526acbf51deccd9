package acquire

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

func TestParse(t *testing.T) {
	pm := func(source string, extra map[string]any) config.PackageManager {
		return config.PackageManager{Name: "p", Source: source, Extra: extra, Pos: config.Pos{File: "c.toml", Line: 3}}
	}
	for _, tc := range []struct {
		name string
		in   config.PackageManager
		want Source
		err  string
	}{
		{"go", pm("go", map[string]any{"module": "example.com/x/cmd/pm", "version": "v1.2.3"}),
			Source{PM: "p", Kind: Go, Module: "example.com/x/cmd/pm", Version: "v1.2.3"}, ""},
		{"cargo crate", pm("cargo", map[string]any{"crate": "tiny-pm", "version": "0.1.0", "locked": true}),
			Source{PM: "p", Kind: Cargo, Crate: "tiny-pm", Version: "0.1.0", Locked: true}, ""},
		{"cargo git", pm("cargo", map[string]any{"git": "https://example.com/r.git", "rev": "abc"}),
			Source{PM: "p", Kind: Cargo, Git: "https://example.com/r.git", Rev: "abc"}, ""},
		{"npm", pm("npm", map[string]any{"package": "@scope/pm", "version": "^1", "bin": "pm"}),
			Source{PM: "p", Kind: NPM, Package: "@scope/pm", Version: "^1", Bin: "pm"}, ""},
		{"unknown source", pm("pip", nil), Source{}, `c.toml:3: package manager "p": unknown installation source "pip"`},
		{"unknown key", pm("go", map[string]any{"module": "example.com/x", "crate": "y"}), Source{}, `unknown key "crate" for source "go"`},
		{"go without module", pm("go", map[string]any{"version": "v1.0.0"}), Source{}, "needs module"},
		{"bad module", pm("go", map[string]any{"module": "../x"}), Source{}, `module "../x"`},
		{"cargo nothing", pm("cargo", map[string]any{"version": "1.0.0"}), Source{}, "needs crate"},
		{"cargo two refs", pm("cargo", map[string]any{"git": "https://e/r", "tag": "a", "rev": "b"}), Source{}, "at most one"},
		{"cargo ref without git", pm("cargo", map[string]any{"crate": "x", "branch": "main"}), Source{}, "need git"},
		{"cargo option injection", pm("cargo", map[string]any{"crate": "x", "registry": "--config=x"}), Source{}, "not a valid value"},
		{"npm bad name", pm("npm", map[string]any{"package": "Bad Name"}), Source{}, "not an npm package name"},
		{"npm version flag", pm("npm", map[string]any{"package": "x", "version": "--global"}), Source{}, "not a version"},
		{"bin with slash", pm("npm", map[string]any{"package": "x", "bin": "../sh"}), Source{}, "not a plain file name"},
		{"wrong type", pm("npm", map[string]any{"package": 3}), Source{}, "package must be a string"},
		{"locked not bool", pm("cargo", map[string]any{"crate": "x", "locked": "yes"}), Source{}, "locked must be true or false"},
		{"unsafe name", config.PackageManager{Name: "../x", Source: "go", Extra: map[string]any{"module": "example.com/x"}}, Source{}, "name with an installation source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Pos = ""
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPinnedAndKey(t *testing.T) {
	for _, tc := range []struct {
		src    Source
		pinned bool
		key    string
	}{
		{Source{Kind: Go, Module: "m", Version: "v1.2.3"}, true, "v1.2.3"},
		{Source{Kind: Go, Module: "m", Version: "v0.0.0-20260101000000-abcdefabcdef"}, true, "v0.0.0-20260101000000-abcdefabcdef"},
		{Source{Kind: Go, Module: "m", Version: "v2.0.0+incompatible"}, true, "v2.0.0+incompatible"},
		{Source{Kind: Go, Module: "m", Version: "v1.2"}, false, "v1.2"},
		{Source{Kind: Go, Module: "m"}, false, "latest"},
		{Source{Kind: Go, Module: "m", Version: "master"}, false, "master"},
		{Source{Kind: Cargo, Crate: "c", Version: "0.1.0"}, true, "0.1.0"},
		{Source{Kind: Cargo, Crate: "c", Version: "=0.1.0"}, true, "_0.1.0-"},
		{Source{Kind: Cargo, Crate: "c", Version: "^0.1"}, false, "_0.1-"},
		{Source{Kind: Cargo, Git: "https://e/r", Rev: "abc"}, true, "git-"},
		{Source{Kind: Cargo, Git: "https://e/r", Branch: "main"}, false, "git-"},
		{Source{Kind: NPM, Package: "p", Version: "1.0.0-rc.1"}, true, "1.0.0-rc.1"},
		{Source{Kind: NPM, Package: "p", Version: ">=1 <2"}, false, "__1__2-"},
		{Source{Kind: NPM, Package: "p", Version: "../../x"}, false, "_.._x-"},
	} {
		if got := tc.src.Pinned(); got != tc.pinned {
			t.Errorf("%s: Pinned = %v, want %v", tc.src, got, tc.pinned)
		}
		if got := tc.src.Key(); !strings.HasPrefix(got, tc.key) || strings.ContainsAny(got, `/\ `) {
			t.Errorf("%s: Key = %q, want prefix %q and no separators", tc.src, got, tc.key)
		}
	}
	a := Source{Kind: NPM, Version: "^1.0"}.Key()
	b := Source{Kind: NPM, Version: "~1.0"}.Key()
	if a == b {
		t.Errorf("^1.0 and ~1.0 share the key %q", a)
	}
}

// fakeGo writes a stand-in go toolchain: it "installs" a file holding
// $FAKE_CONTENT into $GOBIN, first touching $FAKE_STARTED and sleeping
// $FAKE_SLEEP seconds.
func fakeGo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "go")
	script := `#!/bin/sh
[ -n "$FAKE_STARTED" ] && : > "$FAKE_STARTED"
mkdir -p "$GOBIN"
printf '%s' "$FAKE_CONTENT" > "$GOBIN/pm.partial"
sleep "${FAKE_SLEEP:-0}"
mv "$GOBIN/pm.partial" "$GOBIN/pm"
chmod +x "$GOBIN/pm"
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInterruptedAcquisitionLeavesNothing(t *testing.T) {
	cache := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	env := append(os.Environ(), "SYMPOSIUM_GO="+fakeGo(t), "FAKE_STARTED="+started, "FAKE_SLEEP=30", "FAKE_CONTENT=new")
	src := Source{PM: "slow", Kind: Go, Module: "example.com/slow", Version: "v1.0.0"}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 500 {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	begin := time.Now()
	_, err := Acquire(ctx, cache, src, Options{Env: env})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), `"slow"`) {
		t.Fatalf("err = %v, want an interruption naming the PM", err)
	}
	if time.Since(begin) > 20*time.Second {
		t.Errorf("the toolchain was not killed when the context ended")
	}
	if _, err := Installed(cache, src); !errors.Is(err, ErrNotAcquired) {
		t.Errorf("Installed after an interruption: %v", err)
	}
	assertNoTemp(t, cache, "slow")
}

func TestFloatingVersionSwapsAtomically(t *testing.T) {
	cache := t.TempDir()
	gobin := fakeGo(t)
	src := Source{PM: "float", Kind: Go, Module: "example.com/float"} // latest
	acquire := func(content string) *Result {
		t.Helper()
		res, err := Acquire(context.Background(), cache, src, Options{Env: append(os.Environ(), "SYMPOSIUM_GO="+gobin, "FAKE_CONTENT="+content)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := acquire("one")
	second := acquire("two")
	if first.Dir != second.Dir || !second.Changed {
		t.Errorf("dirs %s, %s (changed %v): a floating version keeps its directory and is re-acquired", first.Dir, second.Dir, second.Changed)
	}
	if b, _ := os.ReadFile(second.Path); string(b) != "two" {
		t.Errorf("after the swap the binary holds %q", b)
	}
	// The replaced copy waits (a hook may still run it), marked temporary.
	entries, _ := os.ReadDir(filepath.Join(cache, "pm-binaries", "float"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !strings.HasPrefix(names[0], ".tmp-replaced-latest-") || names[1] != "latest" {
		t.Errorf("entries %v, want the copy and one replaced copy", names)
	}
	// An acquisition failing later keeps the previous copy.
	_, err := Acquire(context.Background(), cache, src, Options{Env: []string{"PATH="}})
	if err == nil {
		t.Fatal("acquisition without a toolchain succeeded")
	}
	if inst, err := Installed(cache, src); err != nil || inst.Path != second.Path {
		t.Errorf("previous copy lost after a failure: %v", err)
	}
}

func TestConcurrentAcquisitions(t *testing.T) {
	cache := t.TempDir()
	env := append(os.Environ(), "SYMPOSIUM_GO="+fakeGo(t), "FAKE_CONTENT=x", "FAKE_SLEEP=0.2")
	src := Source{PM: "both", Kind: Go, Module: "example.com/both", Version: "v1.0.0"}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Acquire(context.Background(), cache, src, Options{Env: env, Force: true}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := Installed(cache, src); err != nil {
		t.Error(err)
	}
}

func TestInstalledRejectsAnotherSource(t *testing.T) {
	cache := t.TempDir()
	env := append(os.Environ(), "SYMPOSIUM_GO="+fakeGo(t), "FAKE_CONTENT=x")
	src := Source{PM: "p", Kind: Go, Module: "example.com/a", Version: "v1.0.0"}
	if _, err := Acquire(context.Background(), cache, src, Options{Env: env}); err != nil {
		t.Fatal(err)
	}
	other := src
	other.Module = "example.com/b"
	_, err := Installed(cache, other)
	if !errors.Is(err, ErrNotAcquired) || !strings.Contains(err.Error(), "example.com/a") {
		t.Errorf("err = %v, want not acquired, naming the old source", err)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tl tail
	for i := range 5000 {
		tl.Write([]byte(strings.Repeat("x", 10) + string(rune('a'+i%26)) + "\n"))
	}
	s := tl.String()
	if len(s) > tailMax || !strings.HasSuffix(s, "\n") || strings.HasPrefix(s, "x\n") {
		t.Errorf("tail of %d bytes", len(s))
	}
}
