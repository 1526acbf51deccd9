// Command release writes the released form of every module of this
// repository into a staging directory and prints the tags to create, one a
// line. scripts/release.sh runs it; see RELEASING.md.
//
// Usage:
//
//	go run ./internal/cmd/release [-root DIR] -stage DIR VERSION
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/sdk/internal/release"
)

func main() {
	root := flag.String("root", "..", "the repository root (the directory holding go.work)")
	stage := flag.String("stage", "", "the staging directory (new or empty)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: release [-root DIR] -stage DIR VERSION")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *stage == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	absRoot, err := filepath.Abs(*root)
	if err == nil {
		*stage, err = filepath.Abs(*stage)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	plan, err := release.Prepare(ctx, release.Options{Root: absRoot, Version: flag.Arg(0), Stage: *stage, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	for _, m := range plan.Modules {
		fmt.Printf("%s %s\n", m.Tag(plan.Version), m.Dir)
	}
}
