package predicate

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// DepSet answers whether a dependency atom matches a workspace's direct
// dependencies. It is the one seam through which `depends-on` is evaluated.
type DepSet interface {
	MatchAtom(a Atom) bool
}

// Deps is a [DepSet] over package ids (as list_deps returns them). An atom
// matches a dependency whose name is exactly the atom's name (no
// hyphen/underscore folding) and, when the atom has a requirement, whose
// version satisfies it under the dependency's own ecosystem semantics
// ([versions.ForPM]; Cargo for a PM this package does not know). The
// wildcard `*` always matches, even with no dependencies. A dependency whose
// version is `*` (declared, not resolved) matches only atoms without a
// requirement.
type Deps []protocol.PackageID

// MatchAtom implements [DepSet].
func (ds Deps) MatchAtom(a Atom) bool {
	if a.Wildcard() {
		return true
	}
	for _, d := range ds {
		if d.Name != a.Name {
			continue
		}
		if a.Req == "" {
			return true
		}
		if d.Version == "" || d.Version == protocol.AnyVersion {
			continue
		}
		scheme, ok := versions.ForPM(d.PM)
		if !ok {
			scheme = versions.Cargo
		}
		if ok, err := scheme.Matches(ReqFor(scheme.Ecosystem(), a.Req), d.Version); err == nil && ok {
			return true
		}
	}
	return false
}

// ReqFor translates an atom's requirement (Cargo syntax after the atom
// rewrites, or another ecosystem's syntax kept verbatim) into the syntax of
// the ecosystem named eco: for npm, Cargo's comma (AND) becomes a space; for
// PyPI, `=v` becomes `==v` and Cargo's `^` and `~` become explicit bounds.
// Text that is already the ecosystem's own passes through. The `=v` here is
// Cargo's exact version, which [ParseAtom] makes of an atom's `==v`; an
// atom's own `=v` has become `^v` by then, for every ecosystem.
func ReqFor(eco, req string) string {
	switch eco {
	case "npm":
		if strings.Contains(req, "||") {
			return req
		}
		return strings.ReplaceAll(req, ",", " ")
	case "pypi":
		parts := strings.Split(req, ",")
		var out []string
		for _, p := range parts {
			out = append(out, pep440Comparator(strings.TrimSpace(p))...)
		}
		return strings.Join(out, ",")
	}
	return req
}

func pep440Comparator(c string) []string {
	switch {
	case strings.HasPrefix(c, "=="), strings.HasPrefix(c, "~="), strings.HasPrefix(c, "!="),
		strings.HasPrefix(c, ">="), strings.HasPrefix(c, "<="):
		return []string{c}
	case strings.HasPrefix(c, "="):
		return []string{"=" + c}
	case strings.HasPrefix(c, "^"):
		v := c[1:]
		return []string{">=" + v, "<" + bumpCaret(v)}
	case strings.HasPrefix(c, "~"):
		v := c[1:]
		return []string{">=" + v, "<" + bumpTilde(v)}
	}
	return []string{c}
}

// bumpCaret returns the exclusive upper bound of Cargo's ^v.
func bumpCaret(v string) string {
	nums := versionNumbers(v)
	for i, n := range nums {
		if n != 0 || i == len(nums)-1 {
			return bumpAt(nums, i)
		}
	}
	return v
}

// bumpTilde returns the exclusive upper bound of Cargo's ~v.
func bumpTilde(v string) string {
	nums := versionNumbers(v)
	if len(nums) == 1 {
		return bumpAt(nums, 0)
	}
	return bumpAt(nums, 1)
}

func versionNumbers(v string) []int {
	v, _, _ = strings.Cut(v, "-")
	v, _, _ = strings.Cut(v, "+")
	var nums []int
	for _, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		nums = append(nums, n)
	}
	if len(nums) == 0 {
		nums = []int{0}
	}
	return nums
}

func bumpAt(nums []int, i int) string {
	out := make([]string, i+1)
	for j := 0; j < i; j++ {
		out[j] = strconv.Itoa(nums[j])
	}
	out[i] = strconv.Itoa(nums[i] + 1)
	return strings.Join(out, ".")
}

// Evaluator evaluates predicates (docs/manifests.md §3–§4). Every hook is
// optional: nil Deps match nothing but `*`; nil LookupEnv uses the process
// environment; nil Shell makes every shell() predicate false; nil Custom
// makes every custom predicate false. The package runs no command itself:
// whoever evaluates shell() (the host) supplies Shell, so a program that
// only parses or validates predicates does not carry a command runner.
type Evaluator struct {
	// Deps are the workspace's direct dependencies.
	Deps DepSet
	// WorkspaceMember is the provenance flag workspace-member() reads.
	WorkspaceMember bool
	// Dir is the directory relative path_exists() paths are resolved in.
	Dir string
	// LookupEnv reads an environment variable.
	LookupEnv func(name string) (string, bool)
	// Shell runs a shell() command (in the workspace, as the host decides)
	// and reports whether it exited 0.
	Shell func(ctx context.Context, cmd string) bool
	// Custom evaluates a call of a custom predicate.
	Custom func(ctx context.Context, name, arg string) bool
}

// Holds reports whether every predicate of the set holds (an empty set
// holds).
func (e *Evaluator) Holds(ctx context.Context, g []Predicate) bool {
	for _, p := range g {
		if !e.Eval(ctx, p) {
			return false
		}
	}
	return true
}

// Eval evaluates one predicate; combinators short-circuit.
func (e *Evaluator) Eval(ctx context.Context, p Predicate) bool {
	switch p := p.(type) {
	case DependsOn:
		if p.Atom.Wildcard() {
			return true
		}
		return e.Deps != nil && e.Deps.MatchAtom(p.Atom)
	case Shell:
		return e.Shell != nil && e.Shell(ctx, p.Command)
	case PathExists:
		return e.pathExists(p.Path)
	case Env:
		lookup := e.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(p.Name)
		if !p.HasValue {
			return ok
		}
		return ok && v == p.Value
	case WorkspaceMember:
		return e.WorkspaceMember
	case Not:
		return !e.Eval(ctx, p.P)
	case Any:
		for _, q := range p.Ps {
			if e.Eval(ctx, q) {
				return true
			}
		}
		return false
	case All:
		for _, q := range p.Ps {
			if !e.Eval(ctx, q) {
				return false
			}
		}
		return true
	case Custom:
		return e.Custom != nil && e.Custom(ctx, p.Name, p.Arg)
	}
	return false
}

// pathExists: empty is false; the path relative to Dir (or absolute)
// exists; else a bare name is looked up in each $PATH directory.
func (e *Evaluator) pathExists(p string) bool {
	if p == "" {
		return false
	}
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(e.Dir, p)
	}
	if _, err := os.Stat(full); err == nil {
		return true
	}
	if strings.ContainsRune(p, '/') || strings.ContainsRune(p, filepath.Separator) {
		return false
	}
	lookup := e.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	path, _ := lookup("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return true
		}
	}
	return false
}
