// Package acquire installs package-manager binaries from the installation
// sources a [[package-manager]] entry names, the way Symposium acquires hook
// binaries: through the ecosystem's own toolchain (go install, cargo install,
// npm install), into <cache_dir>/pm-binaries/<name>/<version>/.
//
// Acquisition happens only when asked (symposium-pm sync); the hook path calls
// Installed, which never touches the network and never runs a toolchain. Each
// acquisition runs in a temporary directory beside its destination and is
// moved into place only once the toolchain succeeded and the binary is there,
// so a failed or interrupted acquisition leaves nothing half-installed, and a
// re-acquisition of a floating version ("latest", a range, a git branch)
// swaps the directory atomically.
//
// The toolchains read their own configuration from the environment handed to
// them (GOPROXY, GOFLAGS, GONOSUMDB; CARGO_HOME and its config.toml with
// source replacement and registries; .npmrc and npm_config_*), so mirrors,
// private registries and credentials work as they do for the user.
package acquire

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// Kind names an installation source.
type Kind string

// The installation sources.
const (
	Go    Kind = "go"
	Cargo Kind = "cargo"
	NPM   Kind = "npm"
)

// Source is a parsed installation source of one [[package-manager]] entry.
type Source struct {
	// PM is the [[package-manager]] name.
	PM string `json:"pm"`
	// Kind is the source: go, cargo or npm.
	Kind Kind `json:"source"`
	// Module is, for go, the import path of the command's main package
	// (the module path when the command sits at the module root).
	Module string `json:"module,omitempty"`
	// Crate is, for cargo, the crate to install (optional with git).
	Crate string `json:"crate,omitempty"`
	// Git, Branch, Tag and Rev are, for cargo, a git repository to install
	// from and at most one of its refs.
	Git    string `json:"git,omitempty"`
	Branch string `json:"branch,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Rev    string `json:"rev,omitempty"`
	// Registry is, for cargo, the name of a registry from cargo's own
	// configuration (cargo install --registry).
	Registry string `json:"registry,omitempty"`
	// Locked asks cargo to use the crate's Cargo.lock (cargo install --locked).
	Locked bool `json:"locked,omitempty"`
	// Package is, for npm, the package name.
	Package string `json:"package,omitempty"`
	// Bin names the executable when the package has several (cargo, npm).
	Bin string `json:"bin,omitempty"`
	// Version is the version or requirement in the ecosystem's syntax; empty
	// means the latest.
	Version string `json:"version,omitempty"`
	// Pos is where the entry is configured, for messages.
	Pos string `json:"-"`
}

// keys lists the keys each source accepts besides those every
// [[package-manager]] entry has.
var keys = map[Kind][]string{
	Go:    {"module", "version"},
	Cargo: {"crate", "version", "git", "branch", "tag", "rev", "registry", "locked", "bin"},
	NPM:   {"package", "version", "bin"},
}

var (
	pmName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	binName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	// crateName is cargo's rule for package names.
	crateName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`) })
	// npmName is npm's rule for new package names (validate-npm-package-name).
	npmName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`) })
	// fullSemver is a complete SemVer 2.0.0 version, as cargo and npm pin.
	fullSemver = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	})
)

// Parse reads the installation source of a [[package-manager]] entry. The
// error names the entry and the offending key.
func Parse(pm config.PackageManager) (Source, error) {
	s := Source{PM: pm.Name, Kind: Kind(pm.Source), Pos: pm.Pos.String()}
	fail := func(format string, args ...any) (Source, error) {
		return s, fmt.Errorf("%s: package manager %q: %s", pm.Pos, pm.Name, fmt.Sprintf(format, args...))
	}
	if !pmName().MatchString(pm.Name) {
		return fail("a name with an installation source must be letters, digits, '.', '_' or '-'")
	}
	allowed, ok := keys[s.Kind]
	if !ok {
		return fail("unknown installation source %q (sources: go, cargo, npm)", pm.Source)
	}
	extra := make([]string, 0, len(pm.Extra))
	for k := range pm.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		v := pm.Extra[k]
		if !contains(allowed, k) {
			return fail("unknown key %q for source %q (keys: %s)", k, s.Kind, strings.Join(allowed, ", "))
		}
		if k == "locked" {
			b, ok := v.(bool)
			if !ok {
				return fail("locked must be true or false")
			}
			s.Locked = b
			continue
		}
		str, ok := v.(string)
		if !ok {
			return fail("%s must be a string", k)
		}
		switch k {
		case "module":
			s.Module = str
		case "version":
			s.Version = str
		case "crate":
			s.Crate = str
		case "git":
			s.Git = str
		case "branch":
			s.Branch = str
		case "tag":
			s.Tag = str
		case "rev":
			s.Rev = str
		case "registry":
			s.Registry = str
		case "package":
			s.Package = str
		case "bin":
			s.Bin = str
		}
	}
	if s.Bin != "" && !binName().MatchString(s.Bin) {
		return fail("bin %q is not a plain file name", s.Bin)
	}
	if strings.HasPrefix(s.Version, "-") || strings.ContainsAny(s.Version, "\x00\n") {
		return fail("version %q is not a version", s.Version)
	}
	switch s.Kind {
	case Go:
		if s.Module == "" {
			return fail(`source "go" needs module (the import path of the command)`)
		}
		if err := module.CheckImportPath(s.Module); err != nil {
			return fail("module %q: %v", s.Module, err)
		}
		if s.Version != "" && strings.ContainsAny(s.Version, " @") {
			return fail("version %q is not a Go version query", s.Version)
		}
	case Cargo:
		if s.Crate == "" && s.Git == "" {
			return fail(`source "cargo" needs crate (and version), or git`)
		}
		if s.Crate != "" && !crateName().MatchString(s.Crate) {
			return fail("crate %q is not a crate name", s.Crate)
		}
		refs := 0
		for _, r := range []string{s.Branch, s.Tag, s.Rev} {
			if r != "" {
				refs++
			}
		}
		if refs > 0 && s.Git == "" {
			return fail("branch, tag and rev need git")
		}
		if refs > 1 {
			return fail("set at most one of branch, tag and rev")
		}
		for _, r := range []string{s.Git, s.Branch, s.Tag, s.Rev, s.Registry} {
			if strings.HasPrefix(r, "-") {
				return fail("%q is not a valid value", r)
			}
		}
		if s.Git != "" && s.Registry != "" {
			return fail("set git or registry, not both")
		}
	case NPM:
		if s.Package == "" {
			return fail(`source "npm" needs package`)
		}
		if !npmName().MatchString(s.Package) {
			return fail("package %q is not an npm package name", s.Package)
		}
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String describes the source in the words of its ecosystem, for messages:
// "go example.com/cmd/x@v1.2.0", "cargo tiny-pm@0.1.0",
// "cargo git https://host/repo (rev abc)", "npm @scope/pm@^1".
func (s Source) String() string {
	v := s.Version
	if v == "" {
		v = "latest"
	}
	switch s.Kind {
	case Go:
		return fmt.Sprintf("go %s@%s", s.Module, v)
	case Cargo:
		if s.Git != "" {
			out := "cargo git " + s.Git
			switch {
			case s.Rev != "":
				out += " (rev " + s.Rev + ")"
			case s.Tag != "":
				out += " (tag " + s.Tag + ")"
			case s.Branch != "":
				out += " (branch " + s.Branch + ")"
			}
			if s.Crate != "" {
				out += " crate " + s.Crate
			}
			return out
		}
		out := fmt.Sprintf("cargo %s@%s", s.Crate, v)
		if s.Registry != "" {
			out += " from registry " + s.Registry
		}
		return out
	case NPM:
		return fmt.Sprintf("npm %s@%s", s.Package, v)
	}
	return string(s.Kind)
}

// Pinned reports whether the source names one exact version, so that a copy
// acquired once never needs acquiring again: a complete Go module version
// (pseudo-versions included), an exact cargo or npm version, or a git rev or
// tag. "latest", ranges and branches float, and symposium-pm sync updates
// them.
func (s Source) Pinned() bool {
	switch s.Kind {
	case Go:
		v := s.Version
		return semver.IsValid(v) && (semver.Canonical(v) == v || strings.HasSuffix(v, "+incompatible"))
	case Cargo:
		if s.Git != "" {
			return s.Rev != "" || s.Tag != ""
		}
		return fullSemver().MatchString(strings.TrimPrefix(s.Version, "="))
	case NPM:
		return fullSemver().MatchString(strings.TrimPrefix(strings.TrimPrefix(s.Version, "="), "v"))
	}
	return false
}

// Key is the directory name of the acquired copy under
// <cache_dir>/pm-binaries/<name>/: the configured version ("latest" when
// none), "git-<hash>" for a git source, with characters unsafe in a file
// name replaced and a hash of the original appended when any was.
func (s Source) Key() string {
	if s.Git != "" {
		h := sha256.Sum256([]byte(strings.Join([]string{s.Git, s.Branch, s.Tag, s.Rev, s.Crate, s.Version}, "\x00")))
		return "git-" + hex.EncodeToString(h[:6])
	}
	v := s.Version
	if v == "" {
		return "latest"
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '+', r == '_':
			return r
		}
		return '_'
	}, v)
	if safe != v || strings.HasPrefix(safe, ".") {
		h := sha256.Sum256([]byte(v))
		safe = strings.TrimLeft(safe, ".") + "-" + hex.EncodeToString(h[:4])
	}
	return safe
}

// same reports whether two sources install the same thing (positions aside).
func (s Source) same(o Source) bool {
	s.Pos, o.Pos = "", ""
	return s == o
}
