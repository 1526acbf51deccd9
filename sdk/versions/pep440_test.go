package versions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pep440Versions is the version table of the differential test: canonical
// and non-canonical spellings, every release kind, epochs, local labels.
var pep440Versions = []string{
	"0", "0.0", "0.1", "0.9", "1", "1.0", "1.0.0", "1.0.0.0", "01.02", "1.01",
	"1.0a", "1.0a1", "1.0a2", "1.0a12", "1.0alpha1", "1.0.a1", "1.0-a1", "1.0_a1",
	"1.0b1", "1.0beta2", "1.0c1", "1.0rc1", "1.0pre1", "1.0preview1", "1.0RC1",
	"1.0.dev0", "1.0.dev1", "1.0dev", "1.0-dev3", "1.0a1.dev1", "1.0rc1.dev2",
	"1.0.post1", "1.0post2", "1.0-1", "1.0.rev3", "1.0r4", "1.0.post1.dev1",
	"1.0a1.post1", "1.0+local", "1.0+abc.5", "1.0+5", "1.0+abc.6", "1.0+ABC-7_x",
	"1.0.post1+l", "1.0a1+l", "1!1.0", "1!2.0a1", "2!0.1", "0!1.0",
	"1.1", "1.1.dev0", "1.1a1", "1.1.post1", "1.2", "1.2.3", "1.10", "1.9.9",
	"2", "2.0", "2.0.0", "2.0a1", "2.0.dev5", "2.1", "2.2", "2.2.0", "2.2.1",
	"2.2.2", "2.2.post3", "2.2.post4", "2.2.0+x", "2.3", "2.3rc1", "2.3.dev1",
	"3.0", "3.0.0.1", "10.0", "v1.0", "V2.2", " 1.0 ", "1.0.post", "1.0-post-1",
	"99999999999999999999.1", "1.2.3.4.5.6", "2024.1.15",
	// Not versions under PEP 440.
	"", "a", "1.0.", ".1", "1..0", "1.0+", "1.0+a..b", "1.0-", "1.0*", "1.0 a1",
	"foo-1.0", "1.0+a_", "1!", "!1.0", "1.0a1a2", "latest",
}

// pep440Specifiers is the specifier table.
var pep440Specifiers = func() []string {
	bases := []string{"1", "1.0", "1.0.0", "2.2", "2.2.1", "2.2.0", "1.0a1", "1.0rc1",
		"1.0.dev0", "1.0.post1", "1!1.0", "2.2.post3", "1.1", "1.0b1.dev1", "0.9"}
	var out []string
	for _, op := range []string{"~=", "==", "!=", "<=", ">=", "<", ">", "==="} {
		for _, b := range bases {
			out = append(out, op+b)
		}
	}
	out = append(out,
		"", "*", "==1.*", "==1.0.*", "!=1.0.*", "==2.2.*", "!=2.*", "==1!1.*", "==1.0a1.*",
		"==1.0rc1.*", "==2.*", "==0.*", "==01.0.*", "==1.0+local", "==1.0+abc.5", "!=1.0+local",
		"===1.0", "===1.0.0", "===2.2", "===v1.0", "===foo", "===1.0+local",
		">=1.0,<2.0", ">=1.0a1,<2", "~=2.2.0,!=2.2.1", ">1.0,!=1.1", "<2.0,>=1.0.dev0",
		">=1.0, <=2.2.post3", "== 1.0", " >= 1.0 ", "~=1.0.0a1", ">2.2.post3", ">1!1.0",
		"<1.0+local", "~=2.2.post3", "~=1!2.2", ">=1.0,==1.*", "!=2.2.*,>=2", "<=1.0a1",
		"~=2.2.c1", "==1.0.dev0", "<2.3rc1", ">=2.2.0+x",
		// Not specifiers under PEP 440.
		"1.0", "=1.0", "~=1", "~=1.0.*", "==1.0.dev1.*", "==1.0+l.*", ">=1.0.*", "<1.0+l",
		">=1.0+local", "=>1.0", ">=", "~=1.0+l", "==", ">= 1.0 2.0", "!==1.0")
	return out
}()

// pep440Oracle runs the packaging library (Debian's python3-packaging,
// current rules: no legacy versions) over the tables.
const pep440Oracle = `
import json, sys
from packaging.version import Version, InvalidVersion
from packaging.specifiers import Specifier, SpecifierSet, InvalidSpecifier
d = json.load(sys.stdin)
out = {"canon": {}, "valid_spec": {}, "contains": {}, "filter": {}, "filter_pre": {}, "order": []}
valid = []
for v in d["versions"]:
    try:
        out["canon"][v] = str(Version(v)); valid.append(v)
    except InvalidVersion:
        out["canon"][v] = None
def spec_ok(s):
    if s.strip() == "*":
        return True
    try:
        for p in s.split(","):
            if p.strip():
                Specifier(p.strip())
        return True
    except InvalidSpecifier:
        return False
for s in d["specs"]:
    ok = spec_ok(s)
    out["valid_spec"][s] = ok
    if not ok:
        continue
    ss = SpecifierSet("" if s.strip() == "*" else s)
    def attempt(f):
        try:
            return f()
        except InvalidVersion:
            return None
    out["contains"][s] = attempt(lambda: [ss.contains(Version(v)) for v in valid])
    out["filter"][s] = attempt(lambda: list(ss.filter(valid)))
    out["filter_pre"][s] = attempt(lambda: list(ss.filter(valid, prereleases=True)))
out["order"] = sorted(valid, key=lambda v: Version(v))
import packaging
out["version"] = packaging.__version__
out["valid"] = valid
json.dump(out, sys.stdout)
`

type pep440OracleResult struct {
	Canon     map[string]*string  `json:"canon"`
	ValidSpec map[string]bool     `json:"valid_spec"`
	Contains  map[string][]bool   `json:"contains"`
	Filter    map[string][]string `json:"filter"`
	FilterPre map[string][]string `json:"filter_pre"`
	Order     []string            `json:"order"`
	Valid     []string            `json:"valid"`
	Version   string              `json:"version"`
}

func runPEP440Oracle(t *testing.T) pep440OracleResult {
	t.Helper()
	py := debianPython(t)
	in, _ := json.Marshal(map[string]any{"versions": pep440Versions, "specs": pep440Specifiers})
	cmd := exec.Command(py, "-c", pep440Oracle)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var res pep440OracleResult
	if err := json.Unmarshal(outb, &res); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	return res
}

// TestOraclePEP440 compares parsing, normalization, ordering, matching and
// filtering with pip's own packaging library, case by case.
func TestOraclePEP440(t *testing.T) {
	o := runPEP440Oracle(t)
	for _, v := range pep440Versions {
		got, err := CanonicalPEP440(v)
		want := o.Canon[v]
		switch {
		case want == nil && err == nil:
			t.Errorf("version %q: packaging rejects it, we read %q", v, got)
		case want != nil && err != nil:
			t.Errorf("version %q: packaging reads %q, we reject it: %v", v, *want, err)
		case want != nil && got != *want:
			t.Errorf("version %q: canonical %q, packaging says %q", v, got, *want)
		}
	}
	// Ordering: sorting ours must give packaging's order (ties keep input
	// order in both stable sorts).
	ours := slices.Clone(o.Valid)
	Sort(PEP440, ours)
	if !slices.Equal(ours, o.Order) {
		t.Errorf("order differs:\n ours %q\n pip  %q", ours, o.Order)
	}
	// Two rules of current packaging that older copies (such as Debian
	// 12's 23.0) lack; the cases they decide are skipped there:
	// - before 24.0 the epoch was ignored in prefix matches ("==0.*"
	//   admitted "1!0.1");
	// - before 24.2 "<" and ">" naming a pre-release did not admit
	//   pre-releases ("<1.0rc1" refused "1.0a1").
	older := func(v string) bool { c, err := PEP440.Compare(o.Version, v); return err == nil && c < 0 }
	oldEpochs, oldPre := older("24.0"), older("24.2")
	epochSkip := func(s, v string) bool {
		return oldEpochs && strings.Contains(v, "!") && (strings.Contains(s, ".*") || strings.Contains(s, "~="))
	}
	noEpochs := func(s string, vs []string) []string {
		return slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return epochSkip(s, v) })
	}
	if oldPre {
		t.Logf("packaging %s predates 24.2: specifiers with < or > naming a pre-release are not compared", o.Version)
	}
	for _, s := range pep440Specifiers {
		set, err := parseSpecifierSet(s)
		if o.ValidSpec[s] != (err == nil) {
			t.Errorf("specifier %q: packaging valid=%v, ours err=%v", s, o.ValidSpec[s], err)
			continue
		}
		if err != nil {
			continue
		}
		if oldPre && slices.ContainsFunc(set.specs, func(sp specifier) bool {
			return (sp.op == "<" || sp.op == ">") && sp.ver.isPrerelease()
		}) {
			continue
		}
		for i, v := range o.Valid {
			got, err := PEP440.Matches(s, v)
			if o.Contains[s] == nil {
				if err == nil {
					t.Errorf("Matches(%q, %q) = %v, packaging raises an error", s, v, got)
				}
				continue
			}
			if err != nil {
				t.Errorf("Matches(%q, %q): %v", s, v, err)
				continue
			}
			if want := o.Contains[s][i]; got != want && !epochSkip(s, v) {
				t.Errorf("Matches(%q, %q) = %v, packaging says %v", s, v, got, want)
			}
		}
		for _, pre := range []bool{false, true} {
			want := o.Filter[s]
			if pre {
				want = o.FilterPre[s]
			}
			got, err := FilterPEP440(s, o.Valid, pre)
			switch {
			case want == nil && err == nil:
				t.Errorf("FilterPEP440(%q, pre=%v) = %q, packaging raises an error", s, pre, got)
			case want != nil && err != nil:
				t.Errorf("FilterPEP440(%q, pre=%v): %v", s, pre, err)
			case !slices.Equal(noEpochs(s, got), noEpochs(s, want)) && !(len(got) == 0 && len(want) == 0):
				t.Errorf("FilterPEP440(%q, pre=%v) = %q, packaging says %q", s, pre, got, want)
			}
		}
	}
}

func TestSelectPEP440(t *testing.T) {
	cands := []string{"1.0", "1.1", "2.0a1", "1.2.post1", "0.9", "bogus"}
	for _, tc := range []struct {
		req      string
		pre      bool
		want     string
		wantFind bool
	}{
		{"*", false, "1.2.post1", true},
		{"", true, "2.0a1", true},
		{">=2.0a1", false, "2.0a1", true},
		{">=2", false, "", false},
		{"~=1.0", false, "1.2.post1", true},
		{"==1.*,!=1.2.post1", false, "1.1", true},
	} {
		got, ok, err := SelectPEP440(tc.req, cands, tc.pre)
		if err != nil || ok != tc.wantFind || got != tc.want {
			t.Errorf("SelectPEP440(%q, %v) = %q, %v, %v; want %q, %v", tc.req, tc.pre, got, ok, err, tc.want, tc.wantFind)
		}
	}
	// Only pre-releases and no requirement: pip falls back to them.
	if got, ok, _ := SelectPEP440("*", []string{"1.0a1", "1.0b2"}, false); !ok || got != "1.0b2" {
		t.Errorf("pre-release fallback: got %q %v", got, ok)
	}
	if _, _, err := SelectPEP440("=>1", cands, false); err == nil {
		t.Error("bad requirement accepted")
	}
}

func FuzzPEP440(f *testing.F) {
	for _, v := range pep440Versions[:20] {
		f.Add(v, ">=1.0,<2")
	}
	f.Add("1.0", "~=1.0.0a1")
	f.Add("1!2.0+l.5", "==1!2.*")
	f.Fuzz(func(t *testing.T, v, req string) {
		c, err := CanonicalPEP440(v)
		if err == nil {
			c2, err := CanonicalPEP440(c)
			if err != nil || c2 != c {
				t.Fatalf("canonical form %q of %q does not round-trip: %q %v", c, v, c2, err)
			}
			if n, _ := PEP440.Compare(v, c); n != 0 {
				t.Fatalf("%q != its canonical form %q", v, c)
			}
		}
		_, _ = PEP440.Matches(req, v)
		_, _ = FilterPEP440(req, []string{v, "1.0"}, false)
		if strings.Count(req, ",") > 100 {
			return
		}
		_ = fmt.Sprint(req)
	})
}

// FuzzPlainRelease holds CanonicalPEP440's fast path to its parser: a
// version plainRelease passes is valid and its own canonical form.
func FuzzPlainRelease(f *testing.F) {
	for _, v := range []string{"1.26.4", "0", "2024.10.1", "01.2", "1.", ".1", "1..2", "1.0a1", "999999999999999999.1", "9999999999999999999"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !plainRelease(v) {
			return
		}
		pv, err := parsePEP440(v)
		if err != nil || pv.String() != v {
			t.Fatalf("plainRelease(%q), but the parser gives %q, %v", v, pv.String(), err)
		}
	})
}

// TestPlainRelease: which versions take CanonicalPEP440's fast path.
func TestPlainRelease(t *testing.T) {
	for v, want := range map[string]bool{"1.26.4": true, "0": true, "0.0.1": true, "2024.10.1": true, "999999999999999999": true,
		"": false, "01.2": false, "1.": false, ".1": false, "1..2": false, "1.0a1": false, "v1.0": false, " 1.0": false,
		"1!2.0": false, "1.0+local": false, "9999999999999999999": false} {
		if got := plainRelease(v); got != want {
			t.Errorf("plainRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

// debianPython returns Debian's interpreter, /usr/bin/python3, when it can
// import a packaging library of version 22 or later (Debian's
// python3-packaging: apt-get install python3-packaging), and skips the test
// otherwise. The python3 on PATH may be another interpreter whose only
// packaging is the copy pip vendors, which follows the rules of 21.3.
func debianPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import packaging, sys; v = packaging.__version__; print(v); sys.exit(int(v.split('.')[0]) < 22)").CombinedOutput()
	if err != nil {
		t.Skipf("%s with packaging >= 22 not available (apt-get install python3-packaging): %v %s", py, err, bytes.TrimSpace(out))
	}
	return py
}

// TestPEP440CurrentRules pins the rules where current packaging departs
// from the 21.3 copy old pips vendor, without needing an oracle.
func TestPEP440CurrentRules(t *testing.T) {
	for _, tc := range []struct {
		req, v string
		want   bool
	}{
		{"<1.0rc1", "1.0a1", true}, // < and > naming a pre-release admit them
		{">1.0a1", "1.0b1", true},
		{"<1.0", "1.0a1", false},
		{">0.9", "1.0a1", false},
		{"!=1.0a1", "1.0a2", false},
		{"==01.0.*", "1.0.5", true}, // the prefix is normalized
		{"==0.*", "1!0.1", false},   // the epoch takes part in prefix matches
		{"==1!0.*", "1!0.1", true},
		{"~=0.9", "1!1.0", false},
		{"==1.*", "1.0.1", true},
	} {
		got, err := PEP440.Matches(tc.req, tc.v)
		if err != nil || got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, %v; want %v", tc.req, tc.v, got, err, tc.want)
		}
	}
	for _, bad := range []string{"==1.0a1.*", "==1.0.post1.*", "!=1.0rc1.*", "==1.0.dev1.*"} {
		if _, err := PEP440.Matches(bad, "1.0"); err == nil {
			t.Errorf("%q accepted: a wildcard may follow only a release", bad)
		}
	}
	// === with a non-version: matching cannot decide about pre-releases.
	if _, err := PEP440.Matches("===foo", "1.0"); err == nil || !strings.Contains(err.Error(), "foo") {
		t.Errorf("===foo matched without an error naming it: %v", err)
	}
	if _, err := FilterPEP440("===foo", []string{"1.0"}, false); err == nil {
		t.Error("FilterPEP440(===foo) without an error")
	}
	if got, err := FilterPEP440("===foo", []string{"1.0"}, true); err != nil || len(got) != 0 {
		t.Errorf("FilterPEP440(===foo, pre) = %q, %v; packaging answers nothing and no error", got, err)
	}
	if got, err := PEP440.Matches("===1.0", "1.0"); err != nil || !got {
		t.Errorf("===1.0: %v %v", got, err)
	}
}

func TestValidatePEP440Specifier(t *testing.T) {
	for _, ok := range []string{"", "*", "===foo", ">=1,<2", "==1.*"} {
		if err := ValidatePEP440Specifier(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"=>1", "==1.0a1.*", "1.0", "~=1"} {
		if err := ValidatePEP440Specifier(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
