package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/acquire"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// BuiltinPMs are the ecosystem PMs found by name, as symposium-pm-<name>
// next to the host binary or on PATH, without configuration.
var BuiltinPMs = []string{"cargo", "npm", "pypi"}

// GitRegistryCommand is the PM binary that serves git registries.
const GitRegistryCommand = "symposium-pm-gitregistry"

// Set is the set of plugin sources of one host invocation.
type Set struct {
	Specs          []host.Spec
	Kinds          map[string]Source
	PathRegistries []PathRegistry
	// Notes say which built-in PMs are not installed.
	Notes []string
	// Warnings say which configured sources cannot be used, and why.
	Warnings []string
}

// Setup turns configuration into plugin sources: the built-in ecosystem PMs
// that are installed, [[package-manager]] entries (which override a built-in
// of the same name), git registries served by symposium-pm-gitregistry, and
// path registries read directly. exeDir is the host binary's directory;
// cacheDir is the cache handed to PMs, under which PMs with an installation
// source were acquired (pm-binaries/<name>/<version>): Setup only looks
// there, offline, and warns about a PM not acquired yet.
func Setup(cfg *config.Config, exeDir, cacheDir string) Set {
	s := Set{Kinds: map[string]Source{}}
	configured := map[string]config.PackageManager{}
	for _, pm := range cfg.PackageManagers {
		configured[pm.Name] = pm
	}
	for _, name := range BuiltinPMs {
		if _, ok := configured[name]; ok {
			continue
		}
		bin, err := host.LookPathNextTo(exeDir, "symposium-pm-"+name)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("symposium-pm-%s is not installed; %s dependencies are not examined", name, name))
			continue
		}
		s.Specs = append(s.Specs, host.Spec{Name: name, Command: bin})
		s.Kinds[name] = SourceDependency
	}
	for _, pm := range cfg.PackageManagers {
		var bin string
		if pm.Source != "" && pm.Command == "" {
			src, err := acquire.Parse(pm)
			if err != nil {
				s.Warnings = append(s.Warnings, err.Error()+"; skipped")
				continue
			}
			inst, err := acquire.Installed(cacheDir, src)
			if err != nil {
				if f := acquire.LastFailure(cacheDir, src); f != nil {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: package manager %q from %s is not available (%v): the last `symposium-pm sync` (%s) failed: %s; fix the cause, then run sync again",
						pm.Pos, pm.Name, src, err, f.At.Format(time.RFC3339), f.Error))
				} else {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: package manager %q from %s is not available (%v); run `symposium-pm sync` to acquire it", pm.Pos, pm.Name, src, err))
				}
				continue
			}
			bin = inst.Path
		} else {
			var err error
			bin, err = host.LookPathNextTo(exeDir, pm.Command)
			if filepath.IsAbs(pm.Command) || filepath.Base(pm.Command) != pm.Command {
				bin, err = pm.Command, nil
			}
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: package manager %q: command %q not found", pm.Pos, pm.Name, pm.Command))
				continue
			}
		}
		var env []string
		for k, v := range pm.Env {
			env = append(env, k+"="+v)
		}
		s.Specs = append(s.Specs, host.Spec{Name: pm.Name, Command: bin, Args: pm.Args, Env: env})
		s.Kinds[pm.Name] = SourceDependency
		if pm.Kind == "registry" {
			s.Kinds[pm.Name] = SourceRegistry
		}
	}
	gitBin, gitErr := host.LookPathNextTo(exeDir, GitRegistryCommand)
	for _, r := range cfg.Registries {
		if r.Path != "" {
			if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
				if !r.Builtin {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: registry %q: %s is not a directory", r.Pos, r.Name, r.Path))
				}
				continue
			}
			s.PathRegistries = append(s.PathRegistries, PathRegistry{Name: r.Name, Dir: r.Path})
			continue
		}
		if gitErr != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("registry %q needs %s, which is not installed", r.Name, GitRegistryCommand))
			continue
		}
		args := []string{"--name", r.Name, "--url", r.Git}
		if r.Ref != "" {
			args = append(args, "--ref", r.Ref)
		}
		if r.Subdir != "" {
			args = append(args, "--subdir", r.Subdir)
		}
		if !r.AutoUpdates() {
			args = append(args, "--no-auto-update")
		}
		s.Specs = append(s.Specs, host.Spec{Name: r.Name, Command: gitBin, Args: args})
		s.Kinds[r.Name] = SourceRegistry
	}
	return s
}
