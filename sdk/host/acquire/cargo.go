package acquire

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// installCargo runs cargo install --root dir. The installed version is read
// back from cargo's own record of the install, dir/.crates2.json.
func installCargo(ctx context.Context, dir string, s Source, opts Options) (Receipt, string, error) {
	cargo, err := toolchain(opts.Env, "cargo", "SYMPOSIUM_CARGO", "CARGO")
	if err != nil {
		return Receipt{}, "", err
	}
	args := []string{"install", "--root", dir}
	if s.Version != "" {
		args = append(args, "--version", s.Version)
	}
	if s.Git != "" {
		args = append(args, "--git", s.Git)
		switch {
		case s.Branch != "":
			args = append(args, "--branch", s.Branch)
		case s.Tag != "":
			args = append(args, "--tag", s.Tag)
		case s.Rev != "":
			args = append(args, "--rev", s.Rev)
		}
	}
	if s.Registry != "" {
		args = append(args, "--registry", s.Registry)
	}
	if s.Locked {
		args = append(args, "--locked")
	}
	if s.Bin != "" {
		args = append(args, "--bin", s.Bin)
	}
	if s.Crate != "" {
		args = append(args, "--", s.Crate)
	}
	// The root is given on the command line; an install root from the
	// environment must not move it.
	env := setenv(opts.Env, "CARGO_INSTALL_ROOT", dir)
	out, err := run(ctx, dir, env, opts.Output, cargo, args...)
	if err != nil {
		return Receipt{}, out, err
	}
	bins := filepath.Join(dir, "bin")
	name := s.Bin
	if name == "" {
		if name, err = only(bins); err != nil {
			return Receipt{}, out, err
		}
	} else if _, err := os.Stat(filepath.Join(bins, name)); err != nil {
		return Receipt{}, out, fmt.Errorf("cargo installed no executable %q", name)
	}
	version, err := cargoInstalledVersion(dir, s.Crate)
	if err != nil {
		return Receipt{}, out, err
	}
	return Receipt{Version: version, Bin: filepath.Join("bin", name)}, out, nil
}

// cargoInstalledVersion reads the installed package's version from
// cargo's install record, root/.crates2.json: a regular file of at most
// 1 MiB (sdk/pkgfile), where a real one is a few hundred bytes.
func cargoInstalledVersion(root, crate string) (string, error) {
	file := filepath.Join(root, ".crates2.json")
	data, err := pkgfile.ReadFile(root, ".crates2.json", pkgfile.MaxManifest)
	if err != nil {
		return "", fmt.Errorf("cargo's install record: %w", err)
	}
	v, err := parseCrates2(data, crate)
	if err != nil {
		return "", fmt.Errorf("cargo's install record %s: %w", file, err)
	}
	return v, nil
}

// parseCrates2 finds the version of crate (any, when crate is empty or the
// record holds one package) in a .crates2.json, whose "installs" keys are
// "<name> <version> (<source>)".
func parseCrates2(data []byte, crate string) (string, error) {
	var rec struct {
		Installs map[string]json.RawMessage `json:"installs"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return "", err
	}
	for key := range rec.Installs {
		f := strings.Fields(key)
		if len(f) >= 2 && (crate == "" || f[0] == crate || len(rec.Installs) == 1) {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("no package %q installed", crate)
}
