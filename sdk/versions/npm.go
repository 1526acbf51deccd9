package versions

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// NPM is node-semver's range semantics (npm's own engine, default options:
// not loose, no includePrerelease): || alternatives (an empty alternative
// means any version), hyphen ranges, x-ranges, ~ and ^, and npm's
// pre-release rule — a pre-release version matches only when a comparator
// of the same alternative names a pre-release of the same major.minor.patch.
//
// It is implemented here rather than over deps.dev's semver.NPM, which
// deviates from node-semver (for example it matched 2.0.0 against
// ">=1 <2 || ^3", accepted "01.2.3" and "*-0", and rejected "1.2.3 ||");
// npm_test.go proves this implementation against node's semver package.
var NPM Scheme = npmScheme{}

type npmScheme struct{}

// Ecosystem returns "npm".
func (npmScheme) Ecosystem() string { return "npm" }

// Compare orders two strict semver versions by semver 2.0.0 precedence.
func (npmScheme) Compare(a, b string) (int, error) {
	va, err := parseNPMVersion(a)
	if err != nil {
		return 0, errVersion("npm", a, err)
	}
	vb, err := parseNPMVersion(b)
	if err != nil {
		return 0, errVersion("npm", b, err)
	}
	return va.compare(vb), nil
}

// Matches reports whether v satisfies the node-semver range req.
func (npmScheme) Matches(req, v string) (bool, error) {
	ver, err := parseNPMVersion(v)
	if err != nil {
		return false, errVersion("npm", v, err)
	}
	r, err := parseNPMRange(req)
	if err != nil {
		return false, errRequirement("npm", req, err)
	}
	return r.matches(ver), nil
}

// npmVersion is a strict semver 2.0.0 version (build metadata dropped).
type npmVersion struct {
	major, minor, patch uint64
	pre                 []string
}

const (
	numIdent    = `0|[1-9]\d*`
	preIdent    = `(?:` + numIdent + `|\d*[a-zA-Z-][a-zA-Z0-9-]*)`
	prerelease  = `(?:-(` + preIdent + `(?:\.` + preIdent + `)*))`
	build       = `(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)`
	xIdent      = `x|X|\*|` + numIdent
	xRangePlain = `[v=\s]*(` + xIdent + `)(?:\.(` + xIdent + `)(?:\.(` + xIdent + `)` + prerelease + `?` + build + `?)?)?`
)

// npmRE holds the expressions of node-semver's re.js (non-loose forms),
// compiled on first use so programs that never parse an npm range do not pay
// for them at start-up.
var npmRE = sync.OnceValue(func() *npmRegexps {
	return &npmRegexps{
		full:       regexp.MustCompile(`^v?(` + numIdent + `)\.(` + numIdent + `)\.(` + numIdent + `)` + prerelease + `?` + build + `?$`),
		comparator: regexp.MustCompile(`^((?:<|>)?=?)\s*(v?(?:` + numIdent + `)\.(?:` + numIdent + `)\.(?:` + numIdent + `)` + prerelease + `?` + build + `?)$`),
		xRange:     regexp.MustCompile(`^((?:<|>)?=?)\s*` + xRangePlain + `$`),
		tilde:      regexp.MustCompile(`^(?:~>?)` + xRangePlain + `$`),
		caret:      regexp.MustCompile(`^(?:\^)` + xRangePlain + `$`),
		hyphen:     regexp.MustCompile(`^\s*(` + xRangePlain + `)\s+-\s+(` + xRangePlain + `)\s*$`),
		compTrim:   regexp.MustCompile(`(\s*)((?:<|>)?=?)\s*(` + `v?(?:` + numIdent + `)\.(?:` + numIdent + `)\.(?:` + numIdent + `)` + prerelease + `?` + build + `?|` + xRangePlain + `)`),
		tildeTrim:  regexp.MustCompile(`(\s*)~>?\s+`),
		caretTrim:  regexp.MustCompile(`(\s*)\^\s+`),
		star:       regexp.MustCompile(`(<|>)?=?\s*\*`),
		gTE0:       regexp.MustCompile(`^\s*>=\s*0\.0\.0\s*$`),
		spaces:     regexp.MustCompile(`\s+`),
		or:         regexp.MustCompile(`\s*\|\|\s*`),
	}
})

type npmRegexps struct {
	full, comparator, xRange, tilde, caret, hyphen, compTrim, tildeTrim, caretTrim, star, gTE0, spaces, or *regexp.Regexp
}

func parseNPMVersion(s string) (npmVersion, error) {
	m := npmRE().full.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return npmVersion{}, fmt.Errorf("not a semver version")
	}
	var v npmVersion
	var err error
	for i, dst := range []*uint64{&v.major, &v.minor, &v.patch} {
		if *dst, err = strconv.ParseUint(m[i+1], 10, 64); err != nil || *dst > 1<<53-1 {
			return npmVersion{}, fmt.Errorf("version number too large")
		}
	}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	return v, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (v npmVersion) compareMain(o npmVersion) int {
	if c := cmpUint(v.major, o.major); c != 0 {
		return c
	}
	if c := cmpUint(v.minor, o.minor); c != 0 {
		return c
	}
	return cmpUint(v.patch, o.patch)
}

func (v npmVersion) compare(o npmVersion) int {
	if c := v.compareMain(o); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; ; i++ {
		switch {
		case i >= len(v.pre) && i >= len(o.pre):
			return 0
		case i >= len(v.pre):
			return -1
		case i >= len(o.pre):
			return 1
		}
		if c := compareIdent(v.pre[i], o.pre[i]); c != 0 {
			return c
		}
	}
}

// compareIdent orders pre-release identifiers: numeric ones numerically and
// below alphanumeric ones, which compare in ASCII order.
func compareIdent(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		return cmpUint(na, nb)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// npmComparator is one primitive comparator; any is the empty comparator.
type npmComparator struct {
	op  string // "", "=", "<", "<=", ">", ">="
	ver npmVersion
	any bool
}

func (c npmComparator) test(v npmVersion) bool {
	if c.any {
		return true
	}
	cmp := v.compare(c.ver)
	switch c.op {
	case "", "=":
		return cmp == 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

type npmRange [][]npmComparator

func (r npmRange) matches(v npmVersion) bool {
	for _, set := range r {
		if testSet(set, v) {
			return true
		}
	}
	return false
}

func testSet(set []npmComparator, v npmVersion) bool {
	for _, c := range set {
		if !c.test(v) {
			return false
		}
	}
	if len(v.pre) == 0 {
		return true
	}
	// npm's pre-release rule.
	for _, c := range set {
		if c.any {
			continue
		}
		if len(c.ver.pre) > 0 && c.ver.compareMain(v) == 0 {
			return true
		}
	}
	return false
}

// parseNPMRange follows node-semver's Range constructor.
func parseNPMRange(s string) (npmRange, error) {
	s = npmRE().spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	var out npmRange
	for _, alt := range npmRE().or.Split(s, -1) {
		set, err := parseAlternative(strings.TrimSpace(alt))
		if err != nil {
			return nil, err
		}
		out = append(out, set)
	}
	return out, nil
}

func parseAlternative(s string) ([]npmComparator, error) {
	s = hyphenReplace(s)
	s = npmRE().compTrim.ReplaceAllString(s, "$1$2$3")
	s = npmRE().tildeTrim.ReplaceAllString(s, "$1~")
	s = npmRE().caretTrim.ReplaceAllString(s, "$1^")
	var parts []string
	for _, comp := range strings.Split(s, " ") {
		parts = append(parts, parseComparator(comp))
	}
	var set []npmComparator
	hasAny := false
	for _, comp := range npmRE().spaces.Split(strings.TrimSpace(strings.Join(parts, " ")), -1) {
		comp = npmRE().gTE0.ReplaceAllString(comp, "")
		c, err := newComparator(comp)
		if err != nil {
			return nil, err
		}
		if c.any {
			hasAny = true
			continue
		}
		set = append(set, c)
	}
	if len(set) == 0 && hasAny {
		set = []npmComparator{{any: true}}
	}
	if len(set) == 0 {
		set = []npmComparator{{any: true}}
	}
	return set, nil
}

func newComparator(s string) (npmComparator, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return npmComparator{any: true}, nil
	}
	m := npmRE().comparator.FindStringSubmatch(s)
	if m == nil {
		return npmComparator{}, fmt.Errorf("invalid comparator %q", s)
	}
	v, err := parseNPMVersion(m[2])
	if err != nil {
		return npmComparator{}, fmt.Errorf("invalid comparator %q: %w", s, err)
	}
	return npmComparator{op: m[1], ver: v}, nil
}

func isX(s string) bool { return s == "" || s == "x" || s == "X" || s == "*" }

func inc(s string) string {
	n, _ := strconv.ParseUint(s, 10, 64)
	return strconv.FormatUint(n+1, 10)
}

func withPre(pre string) string {
	if pre == "" {
		return ""
	}
	return "-" + pre
}

// parseComparator desugars carets, tildes, x-ranges and stars into
// primitive comparators.
func parseComparator(comp string) string {
	if m := npmRE().caret.FindStringSubmatch(comp); m != nil {
		comp = caret(m[1], m[2], m[3], m[4])
	} else if m := npmRE().tilde.FindStringSubmatch(comp); m != nil {
		comp = tilde(m[1], m[2], m[3], m[4])
	}
	var parts []string
	for _, c := range strings.Split(comp, " ") {
		if m := npmRE().xRange.FindStringSubmatch(c); m != nil {
			c = xRange(m[1], m[2], m[3], m[4], m[5], c)
		}
		parts = append(parts, c)
	}
	comp = strings.Join(parts, " ")
	// node-semver replaces the first star only.
	comp = strings.TrimSpace(comp)
	if loc := npmRE().star.FindStringIndex(comp); loc != nil {
		comp = comp[:loc[0]] + comp[loc[1]:]
	}
	return comp
}

func tilde(M, m, p, pr string) string {
	switch {
	case isX(M):
		return ""
	case isX(m):
		return ">=" + M + ".0.0 <" + inc(M) + ".0.0-0"
	case isX(p):
		return ">=" + M + "." + m + ".0 <" + M + "." + inc(m) + ".0-0"
	}
	return ">=" + M + "." + m + "." + p + withPre(pr) + " <" + M + "." + inc(m) + ".0-0"
}

func caret(M, m, p, pr string) string {
	switch {
	case isX(M):
		return ""
	case isX(m):
		return ">=" + M + ".0.0 <" + inc(M) + ".0.0-0"
	case isX(p):
		if M == "0" {
			return ">=" + M + "." + m + ".0 <" + M + "." + inc(m) + ".0-0"
		}
		return ">=" + M + "." + m + ".0 <" + inc(M) + ".0.0-0"
	}
	from := ">=" + M + "." + m + "." + p + withPre(pr)
	switch {
	case M == "0" && m == "0":
		return from + " <" + M + "." + m + "." + inc(p) + "-0"
	case M == "0":
		return from + " <" + M + "." + inc(m) + ".0-0"
	}
	return from + " <" + inc(M) + ".0.0-0"
}

// invalidXRangeOrder reports an x-range with a number after a wildcard
// ("1.x.3", "*.1"): semver 7.8, which npm 11 ships, leaves such a
// comparator as written, so it fails to parse and the range is invalid.
func invalidXRangeOrder(M, m, p string) bool {
	return (isX(M) && !isX(m)) || (isX(m) && p != "" && !isX(p))
}

func xRange(gtlt, M, m, p, pr, orig string) string {
	if invalidXRangeOrder(M, m, p) {
		return orig
	}
	xM := isX(M)
	xm := xM || isX(m)
	xp := xm || isX(p)
	anyX := xp
	if gtlt == "=" && anyX {
		gtlt = ""
	}
	switch {
	case xM:
		if gtlt == ">" || gtlt == "<" {
			return "<0.0.0-0"
		}
		return "*"
	case gtlt != "" && anyX:
		if xm {
			m = "0"
		}
		p = "0"
		switch gtlt {
		case ">":
			gtlt = ">="
			if xm {
				M, m, p = inc(M), "0", "0"
			} else {
				m, p = inc(m), "0"
			}
		case "<=":
			gtlt = "<"
			if xm {
				M = inc(M)
			} else {
				m = inc(m)
			}
		}
		suffix := ""
		if gtlt == "<" {
			suffix = "-0"
		}
		return gtlt + M + "." + m + "." + p + suffix
	case xm:
		return ">=" + M + ".0.0 <" + inc(M) + ".0.0-0"
	case xp:
		return ">=" + M + "." + m + ".0 <" + M + "." + inc(m) + ".0-0"
	}
	return orig
}

// hyphenReplace turns "a - b" into ">=a <=b" with x-range ends widened.
func hyphenReplace(s string) string {
	m := npmRE().hyphen.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	from, fM, fm, fp, fpr := m[1], m[2], m[3], m[4], m[5]
	to, tM, tm, tp, tpr := m[6], m[7], m[8], m[9], m[10]
	switch {
	case isX(fM):
		from = ""
	case isX(fm):
		from = ">=" + fM + ".0.0"
	case isX(fp):
		from = ">=" + fM + "." + fm + ".0"
	default:
		from = ">=" + strings.TrimSpace(from)
	}
	_ = fpr
	switch {
	case isX(tM):
		to = ""
	case isX(tm):
		to = "<" + inc(tM) + ".0.0-0"
	case isX(tp):
		to = "<" + tM + "." + inc(tm) + ".0-0"
	case tpr != "":
		to = "<=" + tM + "." + tm + "." + tp + "-" + tpr
	default:
		to = "<=" + strings.TrimSpace(to)
	}
	return strings.TrimSpace(from + " " + to)
}
