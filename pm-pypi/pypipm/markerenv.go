package pypipm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/marker"
	"github.com/symposium-dev/symposium-pm/pm-pypi/venv"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// The environment a lock's markers are evaluated in, when a lock holds
// several versions of one name (uv.lock forks by Python version, pylock
// entries by platform): the one list_deps reports is the one the lock
// would install here.
//
//   - With a project virtualenv: its Python version (pyvenv.cfg), CPython
//     unless its site-packages is a PyPy one, and the running machine's
//     platform (no process is started).
//   - Else the python3 on the session's PATH, asked for its marker
//     environment with `python3 -I -S` (isolated: no site-packages, no .pth
//     file runs), bounded to 10 s and 64 KiB of output.
//   - Else the running machine's platform only: markers on the Python
//     version are unknown.
//
// A marker that cannot be decided (an unknown variable) ranks below one
// that holds; among the versions left, the greatest is reported.

// pythonEnvScript prints the PEP 508 marker environment of the running
// interpreter as JSON.
const pythonEnvScript = `import json, os, platform, sys
i = sys.implementation.version
v = "%d.%d.%d" % (i.major, i.minor, i.micro)
if i.releaselevel != "final":
    v += i.releaselevel[0] + str(i.serial)
json.dump({
    "implementation_name": sys.implementation.name,
    "implementation_version": v,
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}, sys.stdout)
`

// maxPythonEnv bounds what the interpreter may print.
const maxPythonEnv = 64 << 10

// markerEnv returns the marker environment of the environment in hand,
// computed once per list_deps, and records what it was computed from.
func (r *resolver) markerEnv(ctx context.Context) marker.Env {
	if r.mEnv != nil {
		return r.mEnv
	}
	env := hostPlatformEnv(runtime.GOOS, runtime.GOARCH)
	r.mEnv = env
	if e := r.environment(); e != nil {
		r.read(filepath.Join(e.Root, "pyvenv.cfg"), pkgfile.MaxManifest) // recorded as an input
		full := venv.PythonVersion(e.Root)
		if _, err := versions.CanonicalPEP440(full); full != "" && err == nil {
			env["python_full_version"] = full
			parts := strings.SplitN(full, ".", 3)
			if len(parts) >= 2 {
				env["python_version"] = parts[0] + "." + parts[1]
			}
			pypy := false
			for _, s := range e.SitePackages {
				pypy = pypy || strings.Contains(s, string(filepath.Separator)+"pypy")
			}
			if !pypy {
				env["implementation_name"] = "cpython"
				env["platform_python_implementation"] = "CPython"
				env["implementation_version"] = full
			}
		}
		r.pm.log.Debug("evaluating lock markers for the project virtualenv", "root", e.Root, "python", full)
		return env
	}
	if py := r.findPython(); py != "" {
		if got, err := pythonMarkerEnv(ctx, py); err != nil {
			r.rwarn("", fmt.Errorf("cannot read the marker environment of %s: %w", py, err), "lock markers are evaluated for the platform only",
				"cannot read the marker environment of python3; evaluating lock markers for the platform only", "python", py, "err", err)
		} else {
			r.mEnv = got
			r.pm.log.Debug("evaluating lock markers for the host's python3", "python", py)
			return got
		}
	}
	r.pm.log.Debug("evaluating lock markers for the platform only: no virtualenv, no python3")
	return env
}

// findPython looks python3 up on the session's PATH, recording the
// variable and every candidate examined as inputs of the answer: the
// interpreter found (and, for a link, what it leads to), and each absent,
// non-executable or directory python3 in a PATH directory before it (all of
// them when none is found), so that a python3 installed there later is
// seen.
func (r *resolver) findPython() string {
	name := "python3"
	if runtime.GOOS == "windows" {
		name = "python3.exe"
	}
	for _, dir := range filepath.SplitList(r.getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := r.rec.Stat(p) // recorded as an input, found or not
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 && runtime.GOOS != "windows" {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			r.rec.Observe(real)
		}
		return p
	}
	return ""
}

// pythonMarkerEnv runs py isolated and reads its marker environment.
func pythonMarkerEnv(ctx context.Context, py string) (marker.Env, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-I", "-S", "-c", pythonEnvScript)
	cmd.Env = []string{}
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(out, maxPythonEnv+1))
	werr := cmd.Wait()
	if rerr != nil {
		return nil, rerr
	}
	if werr != nil {
		return nil, werr
	}
	if len(data) > maxPythonEnv {
		return nil, errorf("%s printed more than %d bytes", py, maxPythonEnv)
	}
	var raw map[string]string
	if err := json.Unmarshal(bytes.TrimSpace(data), &raw); err != nil {
		return nil, errorf("%s printed no marker environment: %w", py, err)
	}
	env := marker.Env{}
	for _, k := range marker.Variables {
		if v, ok := raw[k]; ok && len(v) <= 256 {
			env[k] = v
		}
	}
	if env["python_full_version"] == "" {
		return nil, errorf("%s reported no python_full_version", py)
	}
	return env, nil
}

// hostPlatformEnv is the marker environment of the running machine's
// operating system and architecture, as CPython reports them there;
// anything it cannot tell is left unknown.
func hostPlatformEnv(goos, goarch string) marker.Env {
	env := marker.Env{}
	switch goos {
	case "linux":
		env["sys_platform"], env["platform_system"], env["os_name"] = "linux", "Linux", "posix"
	case "darwin":
		env["sys_platform"], env["platform_system"], env["os_name"] = "darwin", "Darwin", "posix"
	case "windows":
		env["sys_platform"], env["platform_system"], env["os_name"] = "win32", "Windows", "nt"
	case "freebsd", "openbsd", "netbsd":
		env["platform_system"], env["os_name"] = map[string]string{"freebsd": "FreeBSD", "openbsd": "OpenBSD", "netbsd": "NetBSD"}[goos], "posix"
	}
	machines := map[string]map[string]string{
		"amd64": {"linux": "x86_64", "darwin": "x86_64", "windows": "AMD64", "freebsd": "amd64"},
		"arm64": {"linux": "aarch64", "darwin": "arm64", "windows": "ARM64", "freebsd": "arm64"},
		"386":   {"linux": "i686", "windows": "x86"},
	}
	if m, ok := machines[goarch][goos]; ok {
		env["platform_machine"] = m
	}
	return env
}

// pickLocked returns the version to report among those a lockfile locked
// for name (versions it does not record left out): the greatest when none
// has markers, else the one chooseLocked picks in the marker environment,
// which is computed only then. It reports false when none is left.
func (r *resolver) pickLocked(name string, cands []lockfile.Locked) (string, bool) {
	var known []lockfile.Locked
	var env marker.Env
	for _, c := range cands {
		if c.Version == "" {
			continue
		}
		known = append(known, c)
		if len(c.Markers) > 0 && env == nil {
			env = r.markerEnv(r.ctx)
		}
	}
	return r.chooseLocked(name, known, env)
}

// chooseLocked returns the version among several locked ones that the lock
// would install in env: those whose markers hold, else those whose
// markers cannot be decided; the greatest of them. It reports false when
// every candidate is excluded.
func (r *resolver) chooseLocked(name string, cands []lockfile.Locked, env marker.Env) (string, bool) {
	var sure, maybe []string
	for _, c := range cands {
		v := marker.True
		if len(c.Markers) > 0 {
			v = marker.False
			for _, m := range c.Markers {
				pm, err := marker.Parse(m)
				if err != nil {
					r.rwarn("", fmt.Errorf("the lock marker of %s %s cannot be read: %w", name, c.Version, err), "that candidate is skipped",
						"cannot read a lock marker", "name", name, "version", c.Version, "err", err)
					v = marker.Unknown
					continue
				}
				switch pm.Eval(env) {
				case marker.True:
					v = marker.True
				case marker.Unknown:
					if v == marker.False {
						v = marker.Unknown
					}
				}
				if v == marker.True {
					break
				}
			}
		}
		switch v {
		case marker.True:
			sure = append(sure, c.Version)
		case marker.Unknown:
			maybe = append(maybe, c.Version)
		}
	}
	pick := sure
	if len(pick) == 0 {
		pick = maybe
		if len(maybe) > 1 {
			r.pm.log.Debug("lock markers undecided for this environment; reporting the greatest", "name", name, "versions", maybe)
		}
	}
	if len(pick) == 0 {
		return "", false
	}
	best := canon(pick[0])
	for _, v := range pick[1:] {
		if c, err := versions.PEP440.Compare(canon(v), best); err == nil && c > 0 {
			best = canon(v)
		}
	}
	return best, true
}
