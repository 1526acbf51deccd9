package fakeregistry

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NPMCommand returns a command running the real npm CLI in dir against the
// registry at registryURL, isolated from the user's configuration: HOME,
// the npm cache and the user and global npmrc all point under scratch, and
// every npm_config_* variable of the process environment is dropped.
func NPMCommand(ctx context.Context, registryURL, dir, scratch string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "npm_config_") || lk == "home" || lk == "npm_token" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HOME="+scratch,
		"npm_config_cache="+filepath.Join(scratch, "npm-cache"),
		"npm_config_userconfig="+filepath.Join(scratch, "npmrc"),
		"npm_config_globalconfig="+filepath.Join(scratch, "global-npmrc"),
		"npm_config_registry="+registryURL,
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
		"npm_config_loglevel=error",
		"npm_config_progress=false",
		// Fail fast instead of retrying for minutes when something is wrong.
		"npm_config_fetch_retries=0",
		"npm_config_fetch_timeout=60000",
	)
	cmd.Env = env
	return cmd
}
