package acquire

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/redact"

	"github.com/symposium-dev/symposium-pm/sdk/procgroup"
)

// BinariesDir is the directory under the cache dir that holds acquired PMs.
const BinariesDir = "pm-binaries"

// ReceiptFile is the file, inside an acquired copy's directory, that records
// what was acquired. Its presence marks the copy complete.
const ReceiptFile = ".symposium-acquired.json"

// maxRecord bounds the receipt and the remembered failure read back from
// the cache (1 MiB; both are JSON of a few hundred bytes): a regular file
// of at most this size is read (sdk/pkgfile), anything else is refused.
const maxRecord = 1 << 20

// staleAfter is how old a temporary or replaced directory must be before an
// acquisition removes it (a younger one may belong to an acquisition still
// running, or hold a binary a hook is still running).
const staleAfter = time.Hour

// ErrNotAcquired is returned by Installed when the PM has not been acquired.
var ErrNotAcquired = errors.New("not acquired yet")

// Receipt records one acquired copy.
type Receipt struct {
	// Source is what was asked for.
	Source Source `json:"source"`
	// Version is the version the toolchain installed.
	Version string `json:"version"`
	// Bin is the executable, relative to the copy's directory.
	Bin string `json:"bin"`
	// AcquiredAt is when the copy was made.
	AcquiredAt time.Time `json:"acquired_at"`
}

// Install is an acquired copy of a PM.
type Install struct {
	Receipt
	// Dir is the copy's directory, <cache_dir>/pm-binaries/<name>/<key>.
	Dir string
	// Path is the executable's absolute path.
	Path string
}

// Dir returns where the source's copy lives under cacheDir.
func Dir(cacheDir string, s Source) string {
	return filepath.Join(cacheDir, BinariesDir, s.PM, s.Key())
}

// Installed returns the copy of s already acquired under cacheDir. It never
// touches the network and runs nothing. The error wraps ErrNotAcquired when
// there is no copy, and says so when the copy was acquired from a different
// source (the configuration changed since).
func Installed(cacheDir string, s Source) (*Install, error) {
	dir := Dir(cacheDir, s)
	data, err := pkgfile.ReadFile(dir, ReceiptFile, maxRecord)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotAcquired
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: corrupt receipt: %w", dir, err)
	}
	if !r.Source.same(s) {
		return nil, fmt.Errorf("%s was acquired from %s, but the configuration now says %s: %w", dir, r.Source, s, ErrNotAcquired)
	}
	if r.Bin == "" || filepath.IsAbs(r.Bin) || !filepath.IsLocal(r.Bin) {
		return nil, fmt.Errorf("%s: corrupt receipt: bin %q", dir, r.Bin)
	}
	path := filepath.Join(dir, r.Bin)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: %s is a directory", dir, r.Bin)
	}
	return &Install{Receipt: r, Dir: dir, Path: path}, nil
}

// Options tune an acquisition.
type Options struct {
	// Env is the toolchain's environment (default: this process's). The
	// toolchain reads its configuration from it; SYMPOSIUM_GO,
	// SYMPOSIUM_CARGO (else CARGO) and SYMPOSIUM_NPM name the toolchain
	// binaries, else go, cargo and npm are looked up on its PATH.
	Env []string
	// Force re-acquires a pinned version already acquired.
	Force bool
	// Output, when set, receives the toolchain's output as it runs.
	Output io.Writer
	// Logger receives diagnostics (default: discarded).
	Logger *slog.Logger
}

// Error is a failed acquisition: which PM, from which source, and why.
type Error struct {
	PM     string
	Source Source
	Err    error
	// Output is the tail of the toolchain's output, secrets redacted.
	Output string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("acquiring package manager %q from %s: %v", e.PM, e.Source, e.Err)
	if e.Output != "" {
		msg += "\n" + e.Output
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Result is what Acquire did.
type Result struct {
	*Install
	// Changed is false when a pinned copy was already there.
	Changed bool
	// Previous is the version of the copy replaced, if any.
	Previous string
}

// Acquire installs s under cacheDir with its toolchain, unless s is pinned
// and already acquired (and opts.Force is off). A floating version is
// re-installed and swapped in atomically. On failure nothing is left behind
// and any previous copy is kept; the error is an *Error.
func Acquire(ctx context.Context, cacheDir string, s Source, opts Options) (*Result, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	prev, prevErr := Installed(cacheDir, s)
	if prevErr == nil && s.Pinned() && !opts.Force {
		return &Result{Install: prev}, nil
	}
	fail := func(err error, output string) (*Result, error) {
		return nil, &Error{PM: s.PM, Source: s, Err: err, Output: output}
	}
	parent := filepath.Join(cacheDir, BinariesDir, s.PM)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fail(err, "")
	}
	collect(parent, opts.Logger)
	tmp, err := os.MkdirTemp(parent, ".tmp-"+s.Key()+"-")
	if err != nil {
		return fail(err, "")
	}
	defer os.RemoveAll(tmp) // after a successful swap it holds the old copy, or is gone
	var (
		r   Receipt
		out string
	)
	switch s.Kind {
	case Go:
		r, out, err = installGo(ctx, tmp, s, opts)
	case Cargo:
		r, out, err = installCargo(ctx, tmp, s, opts)
	case NPM:
		r, out, err = installNPM(ctx, tmp, s, opts)
	default:
		err = fmt.Errorf("unknown installation source %q", s.Kind)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return fail(err, out)
	}
	r.Source = s
	r.AcquiredAt = time.Now().UTC()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fail(err, "")
	}
	if err := os.WriteFile(filepath.Join(tmp, ReceiptFile), append(data, '\n'), 0o644); err != nil {
		return fail(err, "")
	}
	final := Dir(cacheDir, s)
	if err := atomicfile.SwapDir(tmp, final); err != nil {
		return fail(fmt.Errorf("moving the copy into %s: %w", final, err), "")
	}
	if _, err := os.Stat(tmp); err == nil {
		// tmp now holds the replaced copy: a hook may still be running its
		// binary, so it is left for a later acquisition to collect.
		aside := filepath.Join(parent, ".tmp-replaced-"+s.Key()+"-"+randomSuffix())
		if os.Rename(tmp, aside) == nil {
			now := time.Now()
			_ = os.Chtimes(aside, now, now)
		}
	}
	inst, err := Installed(cacheDir, s)
	if err != nil {
		return fail(err, "")
	}
	res := &Result{Install: inst, Changed: true}
	if prev != nil {
		res.Previous = prev.Version
	}
	opts.Logger.Info("acquired package manager", "pm", s.PM, "source", s.String(), "version", inst.Version, "dir", inst.Dir)
	return res, nil
}

// collect removes temporary directories of acquisitions interrupted (or
// copies replaced) long enough ago.
func collect(parent string, log *slog.Logger) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		p := filepath.Join(parent, e.Name())
		log.Debug("removing an abandoned acquisition", "dir", p)
		_ = os.RemoveAll(p)
	}
}

// run runs a toolchain command in dir with env, killing its whole process
// group when ctx ends. It returns the output's tail, secrets redacted.
func run(ctx context.Context, dir string, env []string, output io.Writer, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var buf tail
	w := io.Writer(&buf)
	if output != nil {
		w = io.MultiWriter(&buf, output)
	}
	cmd.Stdout, cmd.Stderr = w, w
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := redact.Text(strings.TrimSpace(buf.String()))
	if ctx.Err() != nil {
		return out, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if err != nil {
		return out, fmt.Errorf("%s %s failed: %w", filepath.Base(name), strings.Join(args[:min(len(args), 1)], " "), err)
	}
	return out, nil
}

// tail keeps the last 8 KiB written to it.
type tail struct{ b []byte }

const tailMax = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	b := t.b
	if len(b) > tailMax {
		b = b[len(b)-tailMax:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// toolchain finds the toolchain binary: the first of the override
// variables set in env, else name on env's PATH.
func toolchain(env []string, name string, overrides ...string) (string, error) {
	for _, k := range overrides {
		if v := getenv(env, k); v != "" {
			if fi, err := os.Stat(v); err != nil || fi.IsDir() {
				return "", fmt.Errorf("the %s toolchain is not installed: %s=%s does not exist", name, k, v)
			}
			return v, nil
		}
	}
	for _, d := range filepath.SplitList(getenv(env, "PATH")) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	hint := ""
	if len(overrides) > 0 {
		hint = " (or set " + overrides[0] + ")"
	}
	return "", fmt.Errorf("the %s toolchain is not installed: %s not found on PATH%s", name, name, hint)
}

// getenv returns the last value of key in env.
func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// setenv returns env with key set to value (replacing earlier settings).
func setenv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// only returns the one regular file in dir, or an error saying what is there.
func only(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", fmt.Errorf("the toolchain installed no executable")
	}
	return "", fmt.Errorf("the toolchain installed several executables (%s); set bin to the PM's", strings.Join(names, ", "))
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
