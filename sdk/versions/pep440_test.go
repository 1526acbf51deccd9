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

// pep440Oracle runs pip's vendored packaging library over the tables.
const pep440Oracle = `
import json, sys
from pip._vendor.packaging.version import Version, InvalidVersion
from pip._vendor.packaging.specifiers import Specifier, SpecifierSet, InvalidSpecifier
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
    out["contains"][s] = [ss.contains(Version(v)) for v in valid]
    out["filter"][s] = list(ss.filter(valid))
    out["filter_pre"][s] = list(ss.filter(valid, prereleases=True))
out["order"] = sorted(valid, key=lambda v: Version(v))
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
}

func runPEP440Oracle(t *testing.T) pep440OracleResult {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if err := exec.Command(py, "-c", "import pip._vendor.packaging").Run(); err != nil {
		t.Skip("pip (with its vendored packaging) not installed")
	}
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

// TestPEP440Oracle compares parsing, normalization, ordering, matching and
// filtering with pip's own packaging library, case by case.
func TestPEP440Oracle(t *testing.T) {
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
	for _, s := range pep440Specifiers {
		_, err := PEP440.Matches(s, "1.0")
		if o.ValidSpec[s] != (err == nil) {
			t.Errorf("specifier %q: packaging valid=%v, ours err=%v", s, o.ValidSpec[s], err)
			continue
		}
		if err != nil {
			continue
		}
		for i, v := range o.Valid {
			got, err := PEP440.Matches(s, v)
			if err != nil {
				t.Errorf("Matches(%q, %q): %v", s, v, err)
				continue
			}
			if want := o.Contains[s][i]; got != want {
				t.Errorf("Matches(%q, %q) = %v, packaging says %v", s, v, got, want)
			}
		}
		got, _ := FilterPEP440(s, o.Valid, false)
		if !slices.Equal(got, o.Filter[s]) && !(len(got) == 0 && len(o.Filter[s]) == 0) {
			t.Errorf("FilterPEP440(%q) = %q, packaging says %q", s, got, o.Filter[s])
		}
		got, _ = FilterPEP440(s, o.Valid, true)
		if !slices.Equal(got, o.FilterPre[s]) && !(len(got) == 0 && len(o.FilterPre[s]) == 0) {
			t.Errorf("FilterPEP440(%q, pre) = %q, packaging says %q", s, got, o.FilterPre[s])
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
