package acquire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// installNPM runs npm install --prefix dir <package>@<version>. The version
// and the executable come from the installed package's package.json; the
// executable is the link npm made in node_modules/.bin.
func installNPM(ctx context.Context, dir string, s Source, opts Options) (Receipt, string, error) {
	npm, err := toolchain(opts.Env, "npm", "SYMPOSIUM_NPM")
	if err != nil {
		return Receipt{}, "", err
	}
	v := s.Version
	if v == "" {
		v = "latest"
	}
	// A global install from the environment would ignore node_modules.
	env := setenv(opts.Env, "npm_config_global", "false")
	// Acquisition is the explicit online step: --prefer-online revalidates
	// cached packuments, so "latest" and ranges see new releases.
	out, err := run(ctx, dir, env, opts.Output, npm, "install", "--prefix", dir,
		"--prefer-online", "--no-audit", "--no-fund", "--no-update-notifier", s.Package+"@"+v)
	if err != nil {
		return Receipt{}, out, err
	}
	// The package's own package.json, read as the npm PM reads one
	// (sdk/pkgfile): a regular file inside the package, at most 1 MiB.
	data, err := pkgfile.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package)), "package.json", pkgfile.MaxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return Receipt{}, out, fmt.Errorf("npm did not install %s: %w", s.Package, err)
	}
	if err != nil {
		return Receipt{}, out, fmt.Errorf("%s's package.json: %w", s.Package, err)
	}
	var pkg struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return Receipt{}, out, fmt.Errorf("%s's package.json: %w", s.Package, err)
	}
	bins, err := npmBins(s.Package, pkg.Bin)
	if err != nil {
		return Receipt{}, out, err
	}
	name := s.Bin
	switch {
	case name != "" && !contains(bins, name):
		return Receipt{}, out, fmt.Errorf("%s@%s has no bin %q (it has: %s)", s.Package, pkg.Version, name, strings.Join(bins, ", "))
	case name == "" && len(bins) == 1:
		name = bins[0]
	case name == "" && len(bins) == 0:
		return Receipt{}, out, fmt.Errorf("%s@%s declares no bin in its package.json", s.Package, pkg.Version)
	case name == "":
		return Receipt{}, out, fmt.Errorf("%s@%s has several bins (%s); set bin to the PM's", s.Package, pkg.Version, strings.Join(bins, ", "))
	}
	if !binName().MatchString(name) {
		return Receipt{}, out, fmt.Errorf("%s@%s declares the bin %q, which is not a plain file name", s.Package, pkg.Version, name)
	}
	rel := filepath.Join("node_modules", ".bin", name)
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		return Receipt{}, out, fmt.Errorf("npm made no executable for bin %q: %w", name, err)
	}
	return Receipt{Version: pkg.Version, Bin: rel}, out, nil
}

// npmBins lists the executables a package.json "bin" declares: a string is
// one named after the package (without its scope), an object names each.
func npmBins(pkg string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{path.Base(pkg)}, nil
	}
	var many map[string]string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("%s's package.json: bin is neither a string nor an object", pkg)
	}
	var names []string
	for k := range many {
		names = append(names, path.Base(k))
	}
	sort.Strings(names)
	return names, nil
}
