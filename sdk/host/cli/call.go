package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/internal/flaghelp"
	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// commonFlags are the flags every command that starts PMs shares.
type commonFlags struct {
	workspace string
	cacheDir  string
	env       stringList
	timeout   time.Duration
	maxMsg    int
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.workspace, "workspace", "", "workspace directory (default: the current directory)")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "cache directory handed to PMs (default: "+cacheDirDefault+")")
	fs.Var(&c.env, "env", "KEY=VALUE for the PMs' initialize env (repeatable)")
	fs.DurationVar(&c.timeout, "timeout", 0, "timeout for the handshake and each request (default: per method)")
	fs.IntVar(&c.maxMsg, "max-message-size", 0, "largest response line accepted from a PM, in bytes (default 64 MiB)")
}

// options turns the flags into host options.
func (c *commonFlags) options() (host.Options, error) {
	var o host.Options
	ws := c.workspace
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return o, err
		}
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return o, err
	}
	if fi, err := os.Stat(ws); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return o, fmt.Errorf("workspace %s does not exist", ws)
		}
		return o, fmt.Errorf("workspace %s: %w", ws, err)
	} else if !fi.IsDir() {
		return o, fmt.Errorf("workspace %s is not a directory", ws)
	}
	o.Workspace = ws
	o.MaxMessage = c.maxMsg
	o.Logger = logger()
	o.CacheDir = c.cacheDir
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
	if o.CacheDir, err = filepath.Abs(o.CacheDir); err != nil {
		return o, err
	}
	o.Env = map[string]string{}
	for _, kv := range c.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return o, usageErr{fmt.Errorf("--env %q: want KEY=VALUE", kv)}
		}
		o.Env[k] = v
	}
	if d := c.timeout; d > 0 {
		o.Timeouts = host.Timeouts{Initialize: d, ListDeps: d, ActivePlugins: d, LoadPlugin: d,
			Fetch: d, Search: d, Refresh: d, Workspace: d}
	}
	return o, nil
}

// usageErr is an error of the command line itself (exit 2), as opposed
// to a thing it names that cannot be used (exit 1).
type usageErr struct{ error }

func (e usageErr) Unwrap() error { return e.error }

// optionsExit is the exit code of an error of options.
func optionsExit(err error) int {
	if errors.As(err, new(usageErr)) {
		return ExitUsage
	}
	return ExitFailure
}

// logger writes the host's diagnostics, and PMs' stderr at debug level, to
// stderr at the level in $SYMPOSIUM_LOG (default warn).
func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: pmserver.LogLevel()}))
}

// cacheDirDefault says where defaultCacheDir is, as config.CacheDir finds
// it.
const cacheDirDefault = "$SYMPOSIUM_HOME/cache, else $XDG_CACHE_HOME/symposium, else cache in the user configuration directory: $XDG_CONFIG_HOME/symposium/cache, else ~/.symposium/cache"

// defaultCacheDir is Symposium's cache directory (cacheDirDefault).
func defaultCacheDir() string { return config.CacheDir(userEnv) }

// userEnv is os.Getenv, with the directories Symposium's own are derived
// from made absolute, so that the configuration's relative paths are
// resolved from its directory whatever directory the PMs run in: a
// relative SYMPOSIUM_HOME or HOME is the current directory's; a relative
// XDG_CONFIG_HOME or XDG_CACHE_HOME is not valid (the XDG base directory
// specification) and is ignored.
func userEnv(key string) string {
	v := os.Getenv(key)
	if v == "" || filepath.IsAbs(v) {
		return v
	}
	switch key {
	case "SYMPOSIUM_HOME", "HOME":
		if abs, err := filepath.Abs(v); err == nil {
			return abs
		}
	case "XDG_CONFIG_HOME", "XDG_CACHE_HOME":
		return ""
	}
	return v
}

const callUsage = `Usage: symposium-pm call [flags] METHOD [PARAMS-JSON] -- COMMAND [ARGS...]

Spawns COMMAND as a PM, initializes it, sends one METHOD request with
PARAMS-JSON (default {}), prints the PM's result on stdout, indented (<, >,
&, U+2028 and U+2029 in strings written as \u escapes), and shuts the PM
down. The diagnostics the PM sent about the request go to stderr
("warning: PM: FILE:LINE: message"). On failure the reason, with the PM's
last stderr lines, goes to stderr and the exit code is 1. Flags go anywhere
before the --; a relative COMMAND path is resolved from the current
directory, though the PM runs in the workspace.

With --json prints {"version":1,"method","result","warnings":[{"pm",
"message","file","line"}],"notes":[...]}: the PM's answer under "result",
its diagnostics as discover --json has them.

Example:
  symposium-pm call list_deps -- symposium-pm-cargo
  symposium-pm call fetch '{"id":{"pm":"cargo","name":"serde","version":"^1"},"update":"none"}' -- symposium-pm-cargo

Flags:
`

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("call", callUsage, stderr)
	var cf commonFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print a versioned document holding the result and the PM's diagnostics")
	dash := slices.Index(args, "--")
	if dash < 0 {
		if slices.Contains(args, "-h") || slices.Contains(args, "--help") || slices.Contains(args, "-help") {
			flaghelp.PrintUsage(fs, stdout)
			return ExitOK
		}
		fmt.Fprintln(stderr, "symposium-pm call: missing '-- COMMAND' naming the PM to run")
		fs.Usage()
		return ExitUsage
	}
	command := args[dash+1:]
	if code, ok := parseArgs(fs, args[:dash], arity{1, 2, "METHOD [PARAMS-JSON]"}, stdout); !ok {
		return code
	}
	if len(command) == 0 {
		usageError(fs, "missing the PM COMMAND after --")
		return ExitUsage
	}
	method := fs.Arg(0)
	params := json.RawMessage("{}")
	if fs.NArg() == 2 {
		params = json.RawMessage(fs.Arg(1))
		var v any
		if err := json.Unmarshal(params, &v); err != nil {
			usageError(fs, "PARAMS-JSON %q: %v", fs.Arg(1), jsonfile.Explain("", params, err))
			return ExitUsage
		}
	}
	opts, err := cf.options()
	if err != nil {
		if code := optionsExit(err); code == ExitUsage {
			usageError(fs, "%v", err)
			return code
		}
		return fail(stdout, stderr, *asJSON, "call", err)
	}
	// A relative command path is the user's, from the current directory
	// (as check has it), not from the workspace the PM runs in.
	bin := command[0]
	if strings.ContainsRune(bin, filepath.Separator) && !filepath.IsAbs(bin) {
		if bin, err = filepath.Abs(bin); err != nil {
			fmt.Fprintf(stderr, "symposium-pm call: %v\n", err)
			return ExitUsage
		}
	}
	done := progress(stderr, fmt.Sprintf("calling %s on %s", method, command[0]))
	conn, err := host.Start(ctx, host.Spec{Command: bin, Args: command[1:]}, opts)
	if err != nil {
		done()
		return fail(stdout, stderr, *asJSON, "call", err)
	}
	defer conn.Close()
	var result json.RawMessage
	var diags []protocol.Diagnostic
	if method == protocol.MethodInitialize {
		result, _ = json.Marshal(conn.Info())
	} else {
		diags, err = conn.CallDiagnostics(ctx, method, params, &result)
	}
	done()
	if err != nil {
		return fail(stdout, stderr, *asJSON, "call", err)
	}
	reports := reportsOf(conn.Info().Name, method, diags)
	reports.print(stderr)
	var out any = result
	if *asJSON {
		out = callDoc{Version: JSONVersion, Method: method, Result: result, Warnings: reports.warnings, Notes: reports.notes}
	}
	if err := printJSON(stdout, out); err != nil {
		fmt.Fprintf(stderr, "symposium-pm call: %v\n", err)
		return ExitFailure
	}
	if err := conn.Close(); err != nil {
		fmt.Fprintf(stderr, "symposium-pm call: warning: %v\n", err)
	}
	return ExitOK
}

// callDoc is the --json output of call.
type callDoc struct {
	Version  int             `json:"version"`
	Method   string          `json:"method"`
	Result   json.RawMessage `json:"result"`
	Warnings []Warning       `json:"warnings"`
	Notes    []string        `json:"notes"`
}

// printJSON writes v indented, followed by a newline: what MarshalIndent
// gives, written as the encoder indents it, without two more copies of a
// document that runs to hundreds of KiB on a large workspace.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
