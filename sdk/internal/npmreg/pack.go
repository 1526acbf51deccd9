package npmreg

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Pack runs the real npm pack on the package directory dir and returns the
// tarball. npm's cache goes to a temporary directory.
func Pack(dir string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "npmreg-pack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", "--pack-destination", tmp, "--json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(tmp, "cache"), "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("npm pack in %s: %w\n%s", dir, err, out)
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(matches) != 1 {
		return nil, fmt.Errorf("npm pack in %s made %d tarballs: %s", dir, len(matches), strings.TrimSpace(string(out)))
	}
	return os.ReadFile(matches[0])
}
