package packagejson

import (
	"strings"
)

// SpecKind classifies a dependency spec string the way npm-package-arg, yarn
// and pnpm do.
type SpecKind int

// The spec kinds.
const (
	// Registry is a version, a range or a dist-tag served by the registry.
	Registry SpecKind = iota
	// Alias is "npm:real@range": the dependency is the registry package real.
	Alias
	// File is a local directory or tarball ("file:", "./x", "../x", "/x", "x.tgz").
	File
	// Link is yarn's and pnpm's "link:" to a local directory.
	Link
	// Workspace is yarn's and pnpm's "workspace:" protocol.
	Workspace
	// Git is a git repository ("git+https:", "git://", "github:user/repo", "user/repo").
	Git
	// URL is a remote tarball.
	URL
	// Other is a protocol the PM does not interpret ("catalog:", "patch:",
	// "portal:", "exec:").
	Other
)

// String names the kind.
func (k SpecKind) String() string {
	switch k {
	case Registry:
		return "registry"
	case Alias:
		return "alias"
	case File:
		return "file"
	case Link:
		return "link"
	case Workspace:
		return "workspace"
	case Git:
		return "git"
	case URL:
		return "url"
	}
	return "other"
}

// Spec is a parsed dependency spec.
type Spec struct {
	Kind SpecKind
	// Name is the registry package the dependency resolves to: the declared
	// name, or the real name of an alias.
	Name string
	// Range is the registry range or tag (Registry, Alias), or the location
	// for the other kinds (the text after the protocol).
	Range string
}

// ParseSpec classifies spec, declared under name.
func ParseSpec(name, spec string) Spec {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		rest := s[len("npm:"):]
		real, rng := splitNameRange(rest)
		if real == "" {
			// "npm:^1.2.3" (yarn berry's own spelling of a registry range).
			return Spec{Kind: Registry, Name: name, Range: rest}
		}
		return Spec{Kind: Alias, Name: real, Range: rng}
	case strings.HasPrefix(lower, "file:"):
		return Spec{Kind: File, Name: name, Range: s[len("file:"):]}
	case strings.HasPrefix(lower, "link:"):
		return Spec{Kind: Link, Name: name, Range: s[len("link:"):]}
	case strings.HasPrefix(lower, "workspace:"):
		return Spec{Kind: Workspace, Name: name, Range: s[len("workspace:"):]}
	case strings.HasPrefix(lower, "git+"), strings.HasPrefix(lower, "git://"),
		strings.HasPrefix(lower, "github:"), strings.HasPrefix(lower, "gitlab:"),
		strings.HasPrefix(lower, "bitbucket:"), strings.HasPrefix(lower, "gist:"):
		return Spec{Kind: Git, Name: name, Range: s}
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		if strings.HasSuffix(strings.SplitN(lower, "#", 2)[0], ".git") {
			return Spec{Kind: Git, Name: name, Range: s}
		}
		return Spec{Kind: URL, Name: name, Range: s}
	case strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"), strings.HasPrefix(s, "/"),
		strings.HasPrefix(s, "~/"), s == ".", s == "..":
		return Spec{Kind: File, Name: name, Range: s}
	case strings.HasSuffix(lower, ".tgz"), strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tar"):
		return Spec{Kind: File, Name: name, Range: s}
	}
	if i := strings.Index(s, ":"); i > 0 && !strings.ContainsAny(s[:i], " <>=^~|") {
		// Any other protocol: catalog:, patch:, portal:, exec:, ...
		return Spec{Kind: Other, Name: name, Range: s}
	}
	if isHostedShortcut(s) {
		return Spec{Kind: Git, Name: name, Range: s}
	}
	return Spec{Kind: Registry, Name: name, Range: s}
}

// splitNameRange splits "real@range" or "@scope/real@range"; the range is
// "" when absent (meaning any version). A string that does not start with
// a package name yields real "".
func splitNameRange(s string) (real, rng string) {
	start := 0
	if strings.HasPrefix(s, "@") {
		slash := strings.Index(s, "/")
		if slash < 0 {
			return "", s
		}
		start = slash + 1
	}
	at := strings.Index(s[start:], "@")
	if at < 0 {
		real, rng = s, ""
	} else {
		real, rng = s[:start+at], s[start+at+1:]
	}
	if !ValidName(real) {
		return "", s
	}
	return real, rng
}

// isHostedShortcut reports whether s is the "user/repo[#ref]" shortcut for a
// GitHub repository, which npm accepts as a dependency spec.
func isHostedShortcut(s string) bool {
	if strings.HasPrefix(s, "@") {
		return false
	}
	base := strings.SplitN(s, "#", 2)[0]
	user, repo, ok := strings.Cut(base, "/")
	return ok && user != "" && repo != "" && !strings.ContainsAny(base, " <>=^~|*") && !strings.Contains(repo, "/")
}

// ValidName reports whether name is a plausible npm package name: lowercase
// or legacy mixed case, optionally scoped "@scope/name", no path traversal,
// no whitespace and at most 214 characters.
func ValidName(name string) bool {
	if name == "" || len(name) > 214 {
		return false
	}
	rest := name
	if strings.HasPrefix(name, "@") {
		scope, pkg, ok := strings.Cut(name[1:], "/")
		if !ok || !validPart(scope) || !validPart(pkg) {
			return false
		}
		return true
	}
	return validPart(rest)
}

func validPart(p string) bool {
	if p == "" || p == "." || p == ".." || strings.HasPrefix(p, ".") || strings.HasPrefix(p, "_") {
		return false
	}
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-._~!*'()", r):
		default:
			return false
		}
	}
	return true
}
