package cargopm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/sdk/procgroup"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// exactVersion reports whether s is a complete version (not a requirement).
func exactVersion(s string) bool {
	_, err := versions.Cargo.Compare(s, s)
	return err == nil
}

// pinnedVersion returns X.Y.Z when req is the exact pin =X.Y.Z.
func pinnedVersion(req string) (string, bool) {
	r := strings.TrimSpace(req)
	if !strings.HasPrefix(r, "=") {
		return "", false
	}
	v := strings.TrimSpace(r[1:])
	return v, exactVersion(v)
}

// checkID validates an id from the wire and returns its requirement ("*"
// for none).
func checkID(id protocol.PackageID) (string, error) {
	if id.PM != Name {
		return "", protocol.ErrForeignID(id, "%s belongs to pm %q, not %q", id, id.PM, Name)
	}
	if !validCrateName(id.Name) {
		return "", protocol.ErrForeignID(id, "%q is not a crate name (ASCII letters, digits, '-' and '_', at most 64)", id.Name)
	}
	req := strings.TrimSpace(id.Version)
	if req == "" {
		req = protocol.AnyVersion
	}
	if _, err := versions.Cargo.Matches(req, "0.0.0"); err != nil {
		return "", protocol.ErrForeignID(id, "%s: %v", id, err)
	}
	return req, nil
}

// resolve finds or acquires a source for id at the update level:
//   - none: the newest source on disk satisfying the requirement, else -32011;
//   - check: an exact pin already on disk is served as is; anything else is
//     resolved and fetched by cargo against the index;
//   - fetch: always resolved and fetched by cargo.
func (p *PM) resolve(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (localCrate, error) {
	req, err := checkID(id)
	if err != nil {
		return localCrate{}, err
	}
	if !update.Valid() {
		return localCrate{}, protocol.NewError(protocol.CodeInvalidParams, nil, "update must be none, check or fetch, not %q", update)
	}
	var paths map[string]string
	if s, err := p.snapshot(ctx, layoutPart); err == nil {
		paths = s.Paths
	}
	srcs := p.sources(ctx, paths, p.vendoredDirs(ctx, nil))
	switch update {
	case protocol.UpdateNone:
		if lc, ok := srcs.find(id.Name, req); ok {
			return lc, nil
		}
		return localCrate{}, protocol.ErrOffline(id)
	case protocol.UpdateCheck:
		if _, ok := pinnedVersion(req); ok {
			if lc, ok := srcs.find(id.Name, req); ok {
				return lc, nil
			}
		}
	}
	return p.acquire(ctx, id, req)
}

// probeManifest is the throwaway package through which cargo resolves and
// downloads one crate. The empty [workspace] keeps it out of any enclosing
// workspace.
const probeManifest = `[package]
name = "symposium-probe"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[dependencies]
%s = %q

[workspace]
`

// acquire has the user's cargo resolve req for the crate and download it
// (honouring source replacement, private registries, auth and offline
// settings exactly as cargo does), then locates the unpacked source. A
// yanked version is accepted only when pinned with =X.Y.Z, as with
// `cargo update --precise`.
func (p *PM) acquire(ctx context.Context, id protocol.PackageID, req string) (localCrate, error) {
	cargo, err := p.cargoBinary()
	if err != nil {
		return localCrate{}, protocol.ErrRegistry(&id, "", 0, "cannot acquire %s: no cargo found (set SYMPOSIUM_CARGO or CARGO, or put cargo on PATH): %v", id, err)
	}
	sess := p.session()
	base := os.TempDir()
	if sess.CacheDir != "" {
		// Recreated every time: the host may delete cache_dir between calls.
		if b := filepath.Join(sess.CacheDir, Name, "probes"); os.MkdirAll(b, 0o755) == nil {
			base = b
			removeStaleProbes(base)
		}
	}
	dir, release, err := newProbeDir(base)
	if err != nil {
		return localCrate{}, protocol.ErrResource("making a probe directory for "+id.String(), err)
	}
	defer release()
	manifestPath := filepath.Join(dir, "Cargo.toml")
	write := func(r string) error {
		return os.WriteFile(manifestPath, []byte(fmt.Sprintf(probeManifest, id.Name, r)), 0o644)
	}
	if err := write(req); err != nil {
		return localCrate{}, protocol.ErrResource("acquiring "+id.String(), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib.rs"), nil, 0o644); err != nil {
		return localCrate{}, protocol.ErrResource("acquiring "+id.String(), err)
	}
	run := func(args ...string) error {
		return p.runCargo(ctx, cargo, append(args, "--manifest-path", manifestPath)...)
	}
	err = run("fetch")
	if pin, ok := pinnedVersion(req); ok && err != nil && strings.Contains(err.Error(), "is yanked") {
		// A pinned yanked version: lock something else first, then move the
		// lock to the pin as `cargo update --precise` allows.
		if werr := write("*"); werr != nil {
			return localCrate{}, protocol.ErrResource("acquiring "+id.String(), werr)
		}
		if err = run("generate-lockfile"); err == nil {
			if err = run("update", "-p", id.Name, "--precise", pin); err == nil {
				err = run("fetch")
			}
		}
	}
	if err != nil {
		return localCrate{}, cargoError(id, err)
	}
	lf, err := cargolock.ReadFile(filepath.Join(dir, "Cargo.lock"))
	if err != nil {
		if protocol.IsResource(err) {
			return localCrate{}, protocol.ErrResource("reading the lockfile cargo wrote for "+id.String(), err)
		}
		return localCrate{}, fmt.Errorf("reading the lockfile cargo wrote for %s: %w", id, err)
	}
	var pkg *cargolock.Package
	for i := range lf.Packages {
		lp := &lf.Packages[i]
		if lp.Source != "" && strings.EqualFold(strings.ReplaceAll(lp.Name, "_", "-"), strings.ReplaceAll(id.Name, "_", "-")) {
			pkg = lp
			break
		}
	}
	if pkg == nil {
		return localCrate{}, protocol.ErrNotFound(id, "cargo resolved %s but locked no such crate", id)
	}
	if lc, ok := p.sources(ctx, nil, p.vendoredDirs(ctx, nil)).find(pkg.Name, "="+pkg.Version); ok {
		return lc, nil
	}
	// Not where cargo usually unpacks: ask cargo where the source is.
	out, err := p.cargoOutput(ctx, cargo, "metadata", "--format-version", "1", "--offline", "--manifest-path", manifestPath)
	if err != nil {
		return localCrate{}, cargoError(id, err)
	}
	var md struct {
		Packages []struct {
			Name, Version string
			Source        *string
			ManifestPath  string `json:"manifest_path"`
		}
	}
	if err := json.Unmarshal(out, &md); err != nil {
		return localCrate{}, fmt.Errorf("cargo metadata for %s: %w", id, err)
	}
	for _, mp := range md.Packages {
		if mp.Name == pkg.Name && mp.Version == pkg.Version && mp.Source != nil {
			return localCrate{Name: mp.Name, Version: mp.Version, Dir: filepath.Dir(mp.ManifestPath)}, nil
		}
	}
	return localCrate{}, protocol.ErrNotFound(id, "cargo fetched %s %s but reports no source for it", pkg.Name, pkg.Version)
}

// staleProbe is how old a probe directory must be before a later process
// removes it (left behind by a process that was killed).
const staleProbe = time.Hour

// removeStaleProbes removes the probe directories under base whose process
// died (killed mid-fetch), and lock files orphaned before their rename.
func removeStaleProbes(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		old := time.Since(fi.ModTime()) > staleProbe
		p := filepath.Join(base, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "probe-") && probeAbandoned(p, old):
			os.RemoveAll(p)
		case strings.HasPrefix(e.Name(), ".probe-lock-") && old:
			os.Remove(p)
		}
	}
}

// cargoFailure is a failed cargo run.
type cargoFailure struct {
	args   []string
	err    error
	stderr string
}

// Error returns cargo's message with credentials removed.
func (f *cargoFailure) Error() string {
	msg := strings.TrimSpace(f.stderr)
	if msg == "" {
		msg = f.err.Error()
	}
	return fmt.Sprintf("cargo %s: %s", f.args[0], redact.Text(elideSnippets(msg)))
}

// elideSnippets drops the source lines cargo quotes under a parse error
// ("  2 | token = ..." and the caret line under it): the line of a broken
// configuration or credentials file can hold a token.
func elideSnippets(msg string) string {
	lines := strings.Split(msg, "\n")
	out := lines[:0]
	elided := false
	for _, l := range lines {
		t := strings.TrimLeft(l, " \t")
		t = strings.TrimLeft(t, "0123456789")
		if strings.HasPrefix(strings.TrimLeft(t, " \t"), "|") {
			if !elided {
				out = append(out, "  (quoted source line elided)")
				elided = true
			}
			continue
		}
		elided = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func (p *PM) runCargo(ctx context.Context, cargo string, args ...string) error {
	_, err := p.cargoOutput(ctx, cargo, args...)
	return err
}

// cargoOutput runs cargo in the workspace directory (so the workspace's
// .cargo/config.toml applies) with the session environment.
func (p *PM) cargoOutput(ctx context.Context, cargo string, args ...string) ([]byte, error) {
	sess := p.session()
	cmd := exec.CommandContext(ctx, cargo, args...)
	if fi, err := os.Stat(sess.Workspace); err == nil && fi.IsDir() {
		cmd.Dir = sess.Workspace
	}
	cmd.Env = append(sess.Env.Environ(), "CARGO_TERM_COLOR=never")
	// Cancelling ctx kills cargo and what it started (git, build
	// scripts' compilers), not cargo alone.
	procgroup.KillOnCancel(cmd)
	dieWithParent(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	sess.Logger.Debug("cargo: running", "cargo", cargo, "args", args)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &cargoFailure{args: args, err: err, stderr: tail(stderr.String(), 4096)}
	}
	return stdout.Bytes(), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// cargoCause is cargo's message from its "error:" line on, without the
// progress lines before it.
func cargoCause(msg string) string {
	if i := strings.Index(msg, "error:"); i >= 0 {
		msg = msg[i:]
	}
	return strings.Join(strings.Fields(msg), " ")
}

// cargoError maps a cargo failure to the protocol's codes.
func cargoError(id protocol.PackageID, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "failed to select a version"), strings.Contains(msg, "no matching package named"),
		strings.Contains(msg, "is yanked"):
		return protocol.ErrNotFound(id, "%s: %s", id, msg)
	case strings.Contains(msg, "--offline"), strings.Contains(msg, "offline mode"), strings.Contains(msg, "net.offline"):
		return protocol.NewError(protocol.CodeOffline, protocol.IDData{ID: id}, "%s: cargo is configured offline and the crate is not cached: %s", id, msg)
	case strings.Contains(msg, "failed to unpack package"), strings.Contains(msg, "invalid tarball downloaded"):
		// cargo refused the archive's content (entries out of the crate,
		// links out of it, a decompression bomb...).
		return protocol.ErrInvalidContent(id, "cargo refused to unpack the downloaded archive: "+cargoCause(msg))
	case strings.Contains(msg, "failed to verify the checksum"):
		return protocol.ErrIntegrity(id, "the index checksum", "a different download checksum (cargo: "+cargoCause(msg)+")")
	}
	return protocol.ErrRegistry(&id, "", 0, "acquiring %s through cargo failed: %s", id, msg)
}
