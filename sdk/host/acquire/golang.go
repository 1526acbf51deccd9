package acquire

import (
	"context"
	"debug/buildinfo"
	"path/filepath"
)

// installGo runs go install <module>@<version> with GOBIN in dir/bin. The
// installed version is read back from the binary's build information.
func installGo(ctx context.Context, dir string, s Source, opts Options) (Receipt, string, error) {
	gobin, err := toolchain(opts.Env, "go", "SYMPOSIUM_GO")
	if err != nil {
		return Receipt{}, "", err
	}
	bindir := filepath.Join(dir, "bin")
	env := setenv(opts.Env, "GOBIN", bindir)
	// pkg@version ignores any workspace, but a GOWORK naming one is an error.
	env = setenv(env, "GOWORK", "off")
	v := s.Version
	if v == "" {
		v = "latest"
	}
	out, err := run(ctx, dir, env, opts.Output, gobin, "install", s.Module+"@"+v)
	if err != nil {
		return Receipt{}, out, err
	}
	name, err := only(bindir)
	if err != nil {
		return Receipt{}, out, err
	}
	version := v
	if info, err := buildinfo.ReadFile(filepath.Join(bindir, name)); err == nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = info.Main.Version
	}
	return Receipt{Version: version, Bin: filepath.Join("bin", name)}, out, nil
}
