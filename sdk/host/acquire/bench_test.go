package acquire

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkInstalled is the hook path's cost per PM with an installation
// source: one receipt read and one stat, no toolchain.
func BenchmarkInstalled(b *testing.B) {
	cache := b.TempDir()
	gobin := filepath.Join(b.TempDir(), "go")
	script := "#!/bin/sh\nmkdir -p \"$GOBIN\" && : > \"$GOBIN/pm\" && chmod +x \"$GOBIN/pm\"\n"
	if err := os.WriteFile(gobin, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	src := Source{PM: "p", Kind: Go, Module: "example.com/p", Version: "v1.0.0"}
	if _, err := Acquire(context.Background(), cache, src, Options{Env: append(os.Environ(), "SYMPOSIUM_GO="+gobin)}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Installed(cache, src); err != nil {
			b.Fatal(err)
		}
	}
}
