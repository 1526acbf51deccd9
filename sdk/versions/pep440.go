package versions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// PEP440 is the version and specifier semantics of PEP 440 (PyPI), as the
// current packaging library (22 and later, which pip has shipped since 2022)
// applies them: ~=, == and != with .* prefix matching (the wildcard only
// after a release, "==1.0a1.*" is refused), ===, epochs, local labels, and
// the pre-release rule (a pre-release matches only when a clause with
// ==, ~=, >=, <=, <, > or === names one). A set holding "===" with a string
// that is not a version cannot say whether it admits pre-releases: matching
// against it is an error, as it is for packaging.
//
// The implementation is this package's own rather than deps.dev's PyPI
// system, which ignores ===, lets the empty requirement match pre-releases
// and differs from pip on several boundary cases; pep440_test.go proves it
// against Debian's python3-packaging.
var PEP440 Scheme = pep440Scheme{}

type pep440Scheme struct{}

func (pep440Scheme) Ecosystem() string { return "pypi" }

func (pep440Scheme) Compare(a, b string) (int, error) {
	va, err := parsePEP440(a)
	if err != nil {
		return 0, errVersion("pypi", a, err)
	}
	vb, err := parsePEP440(b)
	if err != nil {
		return 0, errVersion("pypi", b, err)
	}
	return va.compare(vb), nil
}

func (pep440Scheme) Matches(req, v string) (bool, error) {
	ver, err := parsePEP440(v)
	if err != nil {
		return false, errVersion("pypi", v, err)
	}
	set, err := parseSpecifierSet(req)
	if err != nil {
		return false, errRequirement("pypi", req, err)
	}
	pre, err := set.prereleases()
	if err != nil {
		return false, errRequirement("pypi", req, err)
	}
	return set.contains(ver, pre), nil
}

// ValidatePEP440Specifier checks that req is a PEP 440 specifier set ("" and
// "*" are the empty set) without matching anything against it: a set that
// only matching refuses ("===foo") is valid here.
func ValidatePEP440Specifier(req string) error {
	if _, err := parseSpecifierSet(req); err != nil {
		return errRequirement("pypi", req, err)
	}
	return nil
}

// CanonicalPEP440 returns the normalized form of the PEP 440 version v
// (for example "v1.0-RC.1" is "1.0rc1"), or an error when v is not one.
func CanonicalPEP440(v string) (string, error) {
	if plainRelease(v) {
		return v, nil
	}
	pv, err := parsePEP440(v)
	if err != nil {
		return "", errVersion("pypi", v, err)
	}
	return pv.String(), nil
}

// FilterPEP440 returns the candidates the specifier set req admits, in their
// given order, the way pip's finder filters a project's versions: pre-releases
// are admitted when allowPre is set or when req names a pre-release, and an
// empty requirement ("" or "*") falls back to pre-releases when no final
// release exists. Candidates that are not valid versions are skipped.
func FilterPEP440(req string, candidates []string, allowPre bool) ([]string, error) {
	set, err := parseSpecifierSet(req)
	if err != nil {
		return nil, errRequirement("pypi", req, err)
	}
	type cand struct {
		s string
		v pep440Version
	}
	var parsed []cand
	for _, c := range candidates {
		if v, err := parsePEP440(c); err == nil {
			parsed = append(parsed, cand{c, v})
		}
	}
	pre := triTrue
	if !allowPre {
		if pre, err = set.prereleases(); err != nil {
			return nil, errRequirement("pypi", req, err)
		}
	}
	var out []string
	if len(set.specs) == 0 {
		var found []string
		for _, c := range parsed {
			if c.v.isPrerelease() && pre != triTrue {
				if len(out) == 0 {
					found = append(found, c.s)
				}
				continue
			}
			out = append(out, c.s)
		}
		if len(out) == 0 && len(found) > 0 && pre == triUnset {
			return found, nil
		}
		return out, nil
	}
	for _, c := range parsed {
		ok := true
		for _, sp := range set.specs {
			// packaging filters spec by spec with prereleases=bool(pre).
			if !sp.contains(c.v, pre == triTrue) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c.s)
		}
	}
	return out, nil
}

// SelectPEP440 returns the greatest candidate FilterPEP440 admits.
func SelectPEP440(req string, candidates []string, allowPre bool) (string, bool, error) {
	ok, err := FilterPEP440(req, candidates, allowPre)
	if err != nil || len(ok) == 0 {
		return "", false, err
	}
	best := ok[0]
	bv, _ := parsePEP440(best)
	for _, c := range ok[1:] {
		cv, _ := parsePEP440(c)
		if cv.compare(bv) > 0 {
			best, bv = c, cv
		}
	}
	return best, true, nil
}

// pep440Pattern is PEP 440's version grammar (appendix B), case-insensitive,
// compiled on first use (PMs start on every agent hook).
var pep440Pattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*v?` +
		`(?:(?P<epoch>[0-9]+)!)?` +
		`(?P<release>[0-9]+(?:\.[0-9]+)*)` +
		`(?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?` +
		`(?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?` +
		`(?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?` +
		`(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$`)
})

var pep440Groups = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for i, n := range pep440Pattern().SubexpNames() {
		if n != "" {
			m[n] = i
		}
	}
	return m
})

// pep440Version is a parsed version. Numbers are kept as decimal strings
// without leading zeros so that arbitrarily large components compare right.
type pep440Version struct {
	epoch   string
	release []string
	preL    string // "", "a", "b" or "rc"
	preN    string
	hasPost bool
	postN   string
	hasDev  bool
	devN    string
	local   []string // lower-cased, split on separators
}

func trimZeros(n string) string {
	n = strings.TrimLeft(n, "0")
	if n == "" {
		return "0"
	}
	return n
}

func cmpNum(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parsePEP440(s string) (pep440Version, error) {
	m := pep440Pattern().FindStringSubmatch(s)
	if m == nil {
		return pep440Version{}, fmt.Errorf("not a PEP 440 version")
	}
	groups := pep440Groups()
	g := func(n string) string { return m[groups[n]] }
	var v pep440Version
	v.epoch = "0"
	if e := g("epoch"); e != "" {
		v.epoch = trimZeros(e)
	}
	for _, p := range strings.Split(g("release"), ".") {
		v.release = append(v.release, trimZeros(p))
	}
	if g("pre") != "" {
		switch strings.ToLower(g("pre_l")) {
		case "a", "alpha":
			v.preL = "a"
		case "b", "beta":
			v.preL = "b"
		default:
			v.preL = "rc"
		}
		v.preN = trimZeros(g("pre_n"))
	}
	if g("post") != "" {
		v.hasPost = true
		n := g("post_n1")
		if n == "" {
			n = g("post_n2")
		}
		v.postN = trimZeros(n)
	}
	if g("dev") != "" {
		v.hasDev = true
		v.devN = trimZeros(g("dev_n"))
	}
	if l := g("local"); l != "" {
		for _, p := range strings.FieldsFunc(strings.ToLower(l), func(r rune) bool {
			return r == '-' || r == '_' || r == '.'
		}) {
			if isDigits(p) {
				p = trimZeros(p)
			}
			v.local = append(v.local, p)
		}
	}
	return v, nil
}

func (v pep440Version) isPrerelease() bool { return v.preL != "" || v.hasDev }

// public is v without its local label.
func (v pep440Version) public() pep440Version {
	v.local = nil
	return v
}

// base is v's epoch and release only.
func (v pep440Version) base() pep440Version {
	return pep440Version{epoch: v.epoch, release: v.release}
}

// String renders the normalized form.
func (v pep440Version) String() string {
	var b strings.Builder
	if v.epoch != "0" {
		b.WriteString(v.epoch)
		b.WriteByte('!')
	}
	b.WriteString(strings.Join(v.release, "."))
	if v.preL != "" {
		b.WriteString(v.preL)
		b.WriteString(v.preN)
	}
	if v.hasPost {
		b.WriteString(".post")
		b.WriteString(v.postN)
	}
	if v.hasDev {
		b.WriteString(".dev")
		b.WriteString(v.devN)
	}
	if len(v.local) > 0 {
		b.WriteByte('+')
		b.WriteString(strings.Join(v.local, "."))
	}
	return b.String()
}

func (v pep440Version) compare(w pep440Version) int {
	if c := cmpNum(v.epoch, w.epoch); c != 0 {
		return c
	}
	// Release, with trailing zeros ignored.
	ra, rb := v.release, w.release
	for len(ra) > 0 && ra[len(ra)-1] == "0" {
		ra = ra[:len(ra)-1]
	}
	for len(rb) > 0 && rb[len(rb)-1] == "0" {
		rb = rb[:len(rb)-1]
	}
	for i := 0; i < len(ra) || i < len(rb); i++ {
		if i >= len(ra) {
			return -1
		}
		if i >= len(rb) {
			return 1
		}
		if c := cmpNum(ra[i], rb[i]); c != 0 {
			return c
		}
	}
	if c := comparePre(v, w); c != 0 {
		return c
	}
	// Post: absent sorts first.
	if v.hasPost != w.hasPost {
		if v.hasPost {
			return 1
		}
		return -1
	}
	if v.hasPost {
		if c := cmpNum(v.postN, w.postN); c != 0 {
			return c
		}
	}
	// Dev: absent sorts last.
	if v.hasDev != w.hasDev {
		if v.hasDev {
			return -1
		}
		return 1
	}
	if v.hasDev {
		if c := cmpNum(v.devN, w.devN); c != 0 {
			return c
		}
	}
	return compareLocal(v.local, w.local)
}

// preKey ranks the pre-release part: a dev-only release sorts before every
// pre-release, a final (or post) release after them.
func preKey(v pep440Version) int {
	switch {
	case v.preL == "" && !v.hasPost && v.hasDev:
		return 0
	case v.preL == "":
		return 4
	case v.preL == "a":
		return 1
	case v.preL == "b":
		return 2
	default:
		return 3
	}
}

func comparePre(v, w pep440Version) int {
	ka, kb := preKey(v), preKey(w)
	if ka != kb {
		if ka < kb {
			return -1
		}
		return 1
	}
	if ka >= 1 && ka <= 3 {
		return cmpNum(v.preN, w.preN)
	}
	return 0
}

// compareLocal orders local labels: none first; then segment by segment,
// numeric segments above alphanumeric ones, a longer label above its prefix.
func compareLocal(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		switch {
		case len(a) == len(b):
			return 0
		case len(a) == 0:
			return -1
		default:
			return 1
		}
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) {
			return -1
		}
		if i >= len(b) {
			return 1
		}
		na, nb := isDigits(a[i]), isDigits(b[i])
		switch {
		case na && nb:
			if c := cmpNum(a[i], b[i]); c != 0 {
				return c
			}
		case na:
			return 1
		case nb:
			return -1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// tri is a three-valued flag: packaging's None, False and True.
type tri int

const (
	triUnset tri = iota
	triFalse
	triTrue
)

// specifier is one clause of a specifier set.
type specifier struct {
	op       string // ~= == != <= >= < > ===
	raw      string // the version text as written (after trimming)
	wildcard bool   // == or != with a trailing .*
	ver      pep440Version
	verOK    bool // raw parses as a version (always, except for ===)
}

type specifierSet struct {
	specs []specifier
}

var specOps = []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"}

func parseSpecifierSet(req string) (specifierSet, error) {
	var set specifierSet
	req = strings.TrimSpace(req)
	if req == "*" {
		return set, nil
	}
	for _, part := range strings.Split(req, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sp, err := parseSpecifier(part)
		if err != nil {
			return set, err
		}
		set.specs = append(set.specs, sp)
	}
	return set, nil
}

func parseSpecifier(s string) (specifier, error) {
	var sp specifier
	for _, op := range specOps {
		if strings.HasPrefix(s, op) {
			sp.op = op
			break
		}
	}
	if sp.op == "" {
		return sp, fmt.Errorf("%q has no comparison operator (one of %s)", s, strings.Join(specOps, " "))
	}
	sp.raw = strings.TrimSpace(s[len(sp.op):])
	if sp.raw == "" || strings.ContainsAny(sp.raw, " \t\r\n\f\v") {
		return sp, fmt.Errorf("%q: bad version", s)
	}
	if sp.op == "===" {
		sp.ver, sp.verOK = mustParse(sp.raw)
		return sp, nil
	}
	text := sp.raw
	if (sp.op == "==" || sp.op == "!=") && strings.HasSuffix(text, ".*") {
		sp.wildcard = true
		text = strings.TrimSuffix(text, ".*")
	}
	v, err := parsePEP440(text)
	if err != nil {
		return sp, fmt.Errorf("%q: %w", s, err)
	}
	// The version text in a specifier allows no surrounding junk.
	if strings.TrimSpace(text) != text {
		return sp, fmt.Errorf("%q: bad version", s)
	}
	sp.ver, sp.verOK = v, true
	switch {
	case sp.wildcard && (v.preL != "" || v.hasPost || v.hasDev || len(v.local) > 0):
		return sp, fmt.Errorf("%q: a .* prefix match may follow only a release number (like ==1.0.*)", s)
	case sp.op == "~=" && len(v.release) < 2:
		return sp, fmt.Errorf("%q: ~= needs at least two release components", s)
	case sp.op != "==" && sp.op != "!=" && len(v.local) > 0:
		return sp, fmt.Errorf("%q: only == and != may name a local version", s)
	}
	return sp, nil
}

func mustParse(s string) (pep440Version, bool) {
	v, err := parsePEP440(s)
	return v, err == nil
}

// prereleases is packaging's Specifier.prereleases: whether the clause names
// a pre-release (with any operator but !=: packaging counts < and > since
// 24.2).
func (sp specifier) prereleases() bool {
	return sp.op != "!=" && sp.verOK && sp.ver.isPrerelease()
}

// prereleases is packaging's SpecifierSet.prereleases: unset for an empty
// set, else whether some clause names a pre-release. A "===" clause naming
// something that is not a version makes it an error (packaging raises
// InvalidVersion there).
func (set specifierSet) prereleases() (tri, error) {
	if len(set.specs) == 0 {
		return triUnset, nil
	}
	for _, sp := range set.specs {
		if sp.op == "===" && !sp.verOK {
			return triUnset, fmt.Errorf("cannot tell whether %q admits pre-releases: %q is not a PEP 440 version", sp.op+sp.raw, sp.raw)
		}
	}
	for _, sp := range set.specs {
		if sp.prereleases() {
			return triTrue, nil
		}
	}
	return triFalse, nil
}

func (set specifierSet) contains(v pep440Version, pre tri) bool {
	if pre != triTrue && v.isPrerelease() {
		return false
	}
	for _, sp := range set.specs {
		if !sp.contains(v, pre == triTrue) {
			return false
		}
	}
	return true
}

func (sp specifier) contains(v pep440Version, pre bool) bool {
	if v.isPrerelease() && !pre && !sp.prereleases() {
		return false
	}
	switch sp.op {
	case "~=":
		prefix := splitVersionText(sp.raw)
		n := 0
		for n < len(prefix) && !isSuffixSegment(prefix[n]) {
			n++
		}
		prefix = prefix[:max(n-1, 0)]
		pv, ok := mustParse(strings.Join(prefix, "."))
		return ok && v.public().compare(sp.ver) >= 0 && prefixEqual(v, pv)
	case "==":
		if sp.wildcard {
			return prefixEqual(v, sp.ver)
		}
		return equalVersion(v, sp.ver)
	case "!=":
		if sp.wildcard {
			return !prefixEqual(v, sp.ver)
		}
		return !equalVersion(v, sp.ver)
	case "<=":
		return v.public().compare(sp.ver) <= 0
	case ">=":
		return v.public().compare(sp.ver) >= 0
	case "<":
		if v.compare(sp.ver) >= 0 {
			return false
		}
		if !sp.ver.isPrerelease() && v.isPrerelease() && v.base().compare(sp.ver.base()) == 0 {
			return false
		}
		return true
	case ">":
		if v.compare(sp.ver) <= 0 {
			return false
		}
		if !sp.ver.hasPost && v.hasPost && v.base().compare(sp.ver.base()) == 0 {
			return false
		}
		if len(v.local) > 0 && v.base().compare(sp.ver.base()) == 0 {
			return false
		}
		return true
	case "===":
		return strings.EqualFold(v.String(), sp.raw)
	}
	return false
}

func equalVersion(v, spec pep440Version) bool {
	if len(spec.local) == 0 {
		v = v.public()
	}
	return v.compare(spec) == 0
}

// prefixEqual is packaging's prefix match: the spec's and the candidate's
// public normalized forms are split into segments (the epoch first, an
// implicit dot before a pre-release), the release parts zero-padded, the
// candidate cut to the spec's length, and the segment strings compared.
func prefixEqual(v, specVer pep440Version) bool {
	spec := prefixSegments(specVer)
	cand := prefixSegments(v)
	_, pc := padRelease(spec, cand)
	if len(pc) > len(spec) {
		pc = pc[:len(spec)]
	}
	return slices.Equal(spec, pc)
}

// prefixSegments is packaging's _version_split of v's public normalized
// form: the epoch, then the dot-separated segments.
func prefixSegments(v pep440Version) []string {
	pub := v.public()
	epoch := pub.epoch
	pub.epoch = "0"
	return append([]string{epoch}, splitVersionText(pub.String())...)
}

func padRelease(a, b []string) ([]string, []string) {
	lead := func(s []string) int {
		n := 0
		for n < len(s) && isDigits(s[n]) {
			n++
		}
		return n
	}
	na, nb := lead(a), lead(b)
	pad := func(s []string, n, to int) []string {
		out := append([]string{}, s[:n]...)
		for i := n; i < to; i++ {
			out = append(out, "0")
		}
		return append(out, s[n:]...)
	}
	return pad(a, na, max(na, nb)), pad(b, nb, max(na, nb))
}

var prefixSplit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]+)((?:a|b|c|rc)[0-9]+)$`)
})

func splitVersionText(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ".") {
		if m := prefixSplit().FindStringSubmatch(item); m != nil {
			out = append(out, m[1], m[2])
		} else {
			out = append(out, item)
		}
	}
	return out
}

func isSuffixSegment(s string) bool {
	for _, p := range []string{"dev", "a", "b", "rc", "post"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// plainRelease reports whether v is a bare release segment already in
// normal form: one to 18 decimal digits per component, no leading zero, no
// sign, epoch, letter, space or trailing dot. Most versions in lockfiles
// and metadata are such ("1.26.4"), and their canonical form is the text
// itself; CanonicalPEP440 returns them without the regular expression
// (FuzzPlainRelease holds the two paths to the same answer).
func plainRelease(v string) bool {
	if v == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] != '.' {
			if v[i] < '0' || v[i] > '9' {
				return false
			}
			continue
		}
		seg := v[start:i]
		if seg == "" || len(seg) > 18 || len(seg) > 1 && seg[0] == '0' {
			return false
		}
		start = i + 1
	}
	return true
}
