package pmserver

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/symposium-dev/symposium-pm/sdk/internal/flaghelp"
)

// LogEnv is the environment variable holding the log level of a PM built on
// this package: debug, info, warn (the default) or error.
const LogEnv = "SYMPOSIUM_LOG"

// Main is the whole main function of a PM binary. It parses the command
// line (--version, --help, --max-message-size, and any flags the PM
// registered on flag.CommandLine before calling Main; --version and --help
// print on stdout, a bad command line and the usage after it on stderr),
// keeps the real stdout for the protocol while pointing os.Stdout and file
// descriptor 1 at stderr, serves pm on stdin and stdout until end of input,
// and exits: 0 after a clean end of input or SIGTERM (or after --version or
// --help), 1 on a transport failure, 2 on a bad command line.
func Main(pm PM, opts ...Option) {
	os.Exit(run(pm, os.Args[1:], opts))
}

func run(pm PM, args []string, opts []Option) int {
	if _, ok := pm.(StreamedActivePlugins); ok {
		// A kept answer is checked with CRC-32C before it is sent, and
		// building the table takes about 0.25 ms: build it on another
		// core while this one parses flags and reads the first requests.
		go castagnoli()
	}
	cfg := newConfig(opts)
	prog := filepath.Base(os.Args[0])
	fs := flag.CommandLine
	fs.Init(prog, flag.ContinueOnError)
	showVersion := fs.Bool("version", false, "print the PM's version and exit")
	maxMessage := fs.Int("max-message-size", cfg.maxMessage, "largest request line accepted, in bytes")
	fs.Usage = func() { usage(fs, prog, pm, cfg) }
	// --help asked for is printed on stdout (the protocol is not running);
	// a bad command line and the usage after it on stderr.
	if err := flaghelp.Parse(fs, args, os.Stdout); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q (a PM takes requests on stdin; see --help)\n", prog, fs.Arg(0))
		return 2
	}
	if *showVersion {
		fmt.Printf("%s %s\n", prog, cfg.version)
		return 0
	}

	logger := cfg.logger
	if logger == nil || !hasLoggerOption(opts) {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: LogLevel()}))
	}
	proto, err := protectStdout()
	if err != nil {
		logger.Error("cannot reserve stdout for the protocol", "err", err)
		return 1
	}
	if isTerminal(os.Stdin) {
		fmt.Fprintf(os.Stderr, "%s is a package manager (PM) for Symposium. It speaks JSON-RPC 2.0 on stdin and stdout, one message per line, and is normally started by Symposium, not by hand. Type requests such as {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocol_version\":1,\"workspace\":\"%s\",\"cache_dir\":\"/tmp/symposium-cache\",\"env\":{}}} and end input with Ctrl-D; see --help.\n", prog, cwd())
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	all := append(append([]Option{}, opts...), WithLogger(logger), WithMaxMessageSize(*maxMessage))
	err = Serve(ctx, pm, os.Stdin, proto, all...)
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		logger.Debug("stopped by signal")
		return 0
	default:
		logger.Error("PM stopped", "err", err)
		return 1
	}
}

func hasLoggerOption(opts []Option) bool {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c.logger != nil
}

func usage(fs *flag.FlagSet, prog string, pm PM, cfg *config) {
	out := fs.Output()
	example := cfg.example
	if example == "" {
		// list_deps, for a PM that lists dependencies; else active_plugins,
		// which every PM answers with something to see.
		method := "active_plugins"
		if _, ok := pm.(DepLister); ok {
			method = "list_deps"
		}
		example = "symposium-pm call " + method + " -- " + prog
	}
	fmt.Fprintf(out, "Usage: %s [flags]\n\n", prog)
	if cfg.description != "" {
		fmt.Fprintf(out, "%s\n\n", cfg.description)
	}
	fmt.Fprintf(out, "%s is the %q package manager (PM) for Symposium. Symposium starts it with the\n"+
		"workspace as working directory and speaks newline-delimited JSON-RPC 2.0 with it on\n"+
		"stdin/stdout (protocol version 1); diagnostics go to stderr at the level in $%s.\n"+
		"Try it by hand with `%s`.\n\nFlags:\n",
		prog, pm.Name(), LogEnv, example)
	fs.PrintDefaults()
}

// LogLevel returns the log level named by $SYMPOSIUM_LOG: debug, info,
// warn (the default) or error.
func LogLevel() slog.Level {
	switch strings.ToLower(os.Getenv(LogEnv)) {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	}
	return slog.LevelWarn
}

func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return "/path/to/workspace"
	}
	return d
}

// protectStdout returns a writer on the process's real standard output and
// points both os.Stdout and file descriptor 1 at standard error, so that
// stray prints, and children that inherit descriptor 1, cannot corrupt the
// protocol stream.
func protectStdout() (io.Writer, error) {
	proto, err := redirectStdout()
	if err != nil {
		return nil, err
	}
	os.Stdout = os.Stderr
	return proto, nil
}
