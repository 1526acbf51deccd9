// Command benchreport writes bench/report.md from the output of every
// module's benchmarks, and measures the peak resident memory of the PM
// binaries over a hook path. scripts/bench.sh runs it (make bench).
//
// Usage:
//
//	benchreport report [-procs N] [-benchtime T] [-machine S] [-go S] [-plots DIR] < raw.txt > report.md
//	benchreport rss -bin DIR -floors DIR -root DIR >> raw.txt
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/internal/benchreport"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "report":
		err = report(os.Args[2:])
	case "rss":
		err = rss(ctx, os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchreport report [flags] < raw.txt > report.md\n       benchreport rss -bin DIR -floors DIR -root DIR")
	os.Exit(2)
}

func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	procs := fs.Int("procs", runtime.GOMAXPROCS(0), "the GOMAXPROCS the benchmarks ran with (their name suffix)")
	info := benchreport.Info{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Go: runtime.Version()}
	fs.StringVar(&info.Benchtime, "benchtime", "1s", "the -benchtime the benchmarks ran with")
	fs.StringVar(&info.Machine, "machine", fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()), "the machine, for the header")
	fs.StringVar(&info.Go, "go", info.Go, "the Go version, for the header")
	fs.StringVar(&info.Duration, "duration", "", "how long the run took, for the header")
	plots := fs.String("plots", "", "write each growth curve's plot as DIR/<name>.svg, linked from the report as plots/<name>.svg")
	fs.Parse(args)
	info.CPUs = fmt.Sprintf("%d CPUs", *procs)
	results, err := benchreport.Parse(os.Stdin, *procs)
	if err != nil {
		return err
	}
	groups := benchreport.Groups(results)
	if *plots != "" {
		info.Plots = filepath.Base(*plots)
		if err := writePlots(*plots, benchreport.Curves(groups)); err != nil {
			return err
		}
	}
	return benchreport.Write(os.Stdout, info, groups)
}

// writePlots writes each curve's SVG into dir, replacing the plots of an
// earlier run.
func writePlots(dir string, curves []*benchreport.Curve) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, c := range curves {
		f, err := os.CreateTemp(dir, ".plot-*")
		if err != nil {
			return err
		}
		err = c.WriteSVG(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), filepath.Join(dir, c.Slug()+".svg"))
		}
		if err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("plot %s: %w", c.Slug(), err)
		}
	}
	return nil
}

func rss(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rss", flag.ExitOnError)
	bin := fs.String("bin", "bin", "the directory holding the PM binaries (make build)")
	floors := fs.String("floors", "", "the directory holding the nullpm and barego binaries")
	root := fs.String("root", ".", "the repository root")
	fs.Parse(args)
	for _, p := range []*string{bin, floors, root} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	ws := filepath.Join(*root, "examples", "workspace")
	tmp, err := os.MkdirTemp("", "benchreport-rss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	listDeps := []benchreport.Request{{Method: protocol.MethodListDeps}}
	probes := []benchreport.Probe{
		{Name: "barego", Bin: filepath.Join(*floors, "barego")},
		{Name: "nullpm", Bin: filepath.Join(*floors, "nullpm"), Requests: listDeps},
		{Name: "cargo", Bin: filepath.Join(*bin, "symposium-pm-cargo"), Requests: listDeps},
		{Name: "npm", Bin: filepath.Join(*bin, "symposium-pm-npm"), Requests: listDeps},
		{Name: "pypi", Bin: filepath.Join(*bin, "symposium-pm-pypi"), Requests: listDeps},
	}
	if reg, err := gitRegistry(ctx, filepath.Join(*root, "examples", "registry"), filepath.Join(tmp, "registry")); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: git registry not measured: %v\n", err)
	} else {
		active := benchreport.Request{Method: protocol.MethodActivePlugins, Params: map[string]any{"deps": []any{}}}
		probes = append(probes, benchreport.Probe{
			Name: "gitregistry", Bin: filepath.Join(*bin, "symposium-pm-gitregistry"),
			Args:         []string{"--name", "team", "--url", reg},
			Requests:     []benchreport.Request{active},
			ColdRequests: []benchreport.Request{{Method: protocol.MethodRefresh, Params: protocol.RefreshParams{Update: protocol.UpdateCheck, Force: true}}, active},
		})
	}
	fmt.Println("pkg: rss")
	for _, p := range probes {
		cache := filepath.Join(tmp, "cache-"+p.Name)
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return err
		}
		if err := p.Measure(ctx, os.Stdout, ws, cache); err != nil {
			fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		}
	}
	return nil
}

// gitRegistry makes a git repository at dst holding the files of src, one
// commit, and returns its path.
func gitRegistry(ctx context.Context, src, dst string) (string, error) {
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "registry"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dst
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return dst, nil
}
