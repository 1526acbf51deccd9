package versions

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// npmRanges is the range table of the differential test: every operator,
// x-ranges, hyphen ranges, || unions, caret and tilde edge cases at 0.x,
// pre-release ranges, and strings node-semver rejects.
var npmRanges = []string{
	// A number after a wildcard: invalid since semver 7.8 (npm 11), except
	// after ~, ^ and in hyphen ranges.
	"1.x.3", "<2.X.1", "1.*.1", "*.1", "x.1.2", ">=1.x.3", "~1.x.2", "^1.x.3", "1.x.3 - 2", "1 - 2.x.1", "1.x.3-beta",
	"*", "", "x", "X", "1", "1.x", "1.2", "1.2.x", "1.2.*", "1.x.x", "=1.2.3", "1.2.3", "v1.2.3", " 1.2.3 ",
	">1.2.3", ">=1.2.3", "<1.2.3", "<=1.2.3", ">1", ">=1", "<2", "<=2", ">1.2", "<1.2", "<=1.2", ">=1.2",
	"^1.2.3", "^1.2", "^1", "^0.2.3", "^0.2", "^0.0.3", "^0.0", "^0", "^1.2.3-beta.2", "^0.0.3-beta", "^1.x", "^0.x", "^0.0.x",
	"~1.2.3", "~1.2", "~1", "~0.2.3", "~0.2", "~0", "~1.2.3-beta.2", "~>1.2.3", "~ 1.2.3", "^ 1.2.3",
	"1.2.3 - 2.3.4", "1.2 - 2.3.4", "1.2.3 - 2.3", "1.2.3 - 2", "1 - 2", "1.2.3-alpha - 2.0.0",
	">=1.2.3 <2.0.0", ">= 1.2.3 < 2.0.0", ">=1.0.0 <1.2.0 || >=2.0.0", "1.x || >=2.5.0 || 5.0.0 - 7.2.3",
	"<1.0.0 || >=3.0.0-0", ">=1.2.3-beta.1 <1.2.4", ">1.2.3-alpha.3", ">=1.2.3-rc.1", "<2.0.0-0", "<2.0.0",
	">=0.0.0", ">=0.0.0-0", "*-0", "1.2.3-beta", "1.2.3-beta.1", "=1.2.3-beta.1", "2.0.0-rc.1", "^2.0.0-0",
	"~2.0.0-0", ">=2.0.0-alpha <2.0.0", "1.2.3+build", ">1.2.3+build", "^1.2.3+build",
	"<=1.2.3-beta", ">1.x", "<1.x", ">=1.x", "<=1.x", ">1.2.x", "<=1.2.x", "=1.x", "~1.x", "~1.2.x",
	"||", "1.2.3 ||", "|| 1.2.3", ">=1 <2 || ^3", "^1 ^1.5", "~1 >=1.5.0",
	"<=1.2.3-beta.2", ">=1.2.3-beta <1.2.3", "^1.2.3-beta.2 || ~2.0.0-rc", "1.2.x - 2.x", "x - 1.2", "~1.2.3-0",
	"=v1.2.3", "v1.x", ">= 1", "< 2.0.0-alpha", "1.2.3-beta.2+build", ">*", "<*", ">=*", "<=*", "=*", "~*", "^*",
	"^0.0.0", "^0.0.0-beta", "~0.0.0", "<0.0.0-0", ">=0.0.0 <0.0.1", "1.2.3-Beta", ">1.2.3-beta.9 <1.2.3-beta.11",
	">=2.0.0-0 <3", "2 - 3.0.0-0", "1.x - 2.x.x", "^1.2.3 || ^2.3.4 || ^3", "~1.2.3 ^1.2.4", ">1.2 <=1.2.x",
	// Rejected by node-semver (or matched loosely): kept to compare errors.
	"latest", "next", "1.2.3.4", ">>1", "=>1.2.3", "^1.2.3.4", "1.2.3 - ", "a.b.c", "01.2.3", "1.02.3", "not a range",
}

// npmVersions is the version list every range is checked against.
var npmVersions = []string{
	"0.0.0", "0.0.1", "0.0.3", "0.0.3-beta", "0.0.4", "0.1.0", "0.2.0", "0.2.3", "0.2.4", "0.3.0",
	"1.0.0-alpha", "1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.2.2", "1.2.3-alpha.3", "1.2.3-beta", "1.2.3-beta.1",
	"1.2.3-beta.2", "1.2.3-beta.10", "1.2.3-rc.1", "1.2.3", "1.2.3+build.5", "1.2.4", "1.2.4-beta", "1.3.0",
	"1.5.0", "1.9.9", "2.0.0-0", "2.0.0-alpha", "2.0.0-rc.1", "2.0.0", "2.3.4", "2.3.5", "2.4.0", "2.5.0",
	"3.0.0-0", "3.0.0", "3.1.0-beta.1", "4.0.0", "5.0.0", "7.2.3", "7.2.4", "10.0.0",
}

type npmOracleCase struct {
	Range string   `json:"range"`
	Valid bool     `json:"valid"`
	Sat   []bool   `json:"sat"`
	Max   *string  `json:"max"`
	Vers  []string `json:"-"`
}

// npmOracleScript evaluates every range against every version with node's
// semver package (default options: no loose, no includePrerelease).
const npmOracleScript = `
const semver = require(process.argv[process.argv.length - 1]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.ranges.map(r => {
  const valid = semver.validRange(r) !== null;
  return {
    range: r,
    valid,
    sat: input.versions.map(v => valid && semver.valid(v) !== null && semver.satisfies(v, r)),
    max: valid ? semver.maxSatisfying(input.versions, r) : null,
  };
});
process.stdout.write(JSON.stringify(out));
`

// installNodeSemver returns the directory of the semver package that the
// installed npm bundles, which is the range engine npm really uses. Only
// when that copy cannot be found does it install the same version from the
// npm registry into a temporary directory.
func installNodeSemver(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	root, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		t.Skipf("npm root -g: %v", err)
	}
	bundled := filepath.Join(strings.TrimSpace(string(root)), "npm", "node_modules", "semver")
	if _, err := os.Stat(filepath.Join(bundled, "package.json")); err == nil {
		t.Logf("oracle: the semver npm bundles, %s", bundled)
		return bundled
	}
	want := "semver@7"
	if v, err := exec.Command("npm", "ls", "-g", "--json", "--depth=1", "npm").Output(); err == nil {
		var tree struct {
			Dependencies map[string]struct {
				Dependencies map[string]struct{ Version string }
			}
		}
		if json.Unmarshal(v, &tree) == nil {
			if sv := tree.Dependencies["npm"].Dependencies["semver"].Version; sv != "" {
				want = "semver@" + sv
			}
		}
	}
	t.Logf("oracle: %s from the npm registry (npm's bundled copy not found)", want)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, want)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm-cache"), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot install node's semver from the npm registry (%v): %s", err, out)
	}
	return filepath.Join(dir, "node_modules", "semver")
}

// TestOracleNPMAgainstNodeSemver is the differential test of NPM against node's
// semver, npm's own range engine.
func TestOracleNPMAgainstNodeSemver(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that installs node-semver with npm and runs node for minutes: make oracle runs it; -short (make race) skips it")
	}
	semverDir := installNodeSemver(t)
	in, _ := json.Marshal(map[string]any{"ranges": npmRanges, "versions": npmVersions})
	cmd := exec.Command("node", "-e", npmOracleScript, "--", semverDir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle: %v\n%s", err, stderr.String())
	}
	var cases []npmOracleCase
	if err := json.Unmarshal(out, &cases); err != nil {
		t.Fatal(err)
	}
	mismatches := 0
	for _, c := range cases {
		for i, v := range npmVersions {
			got, err := NPM.Matches(c.Range, v)
			if !c.Valid {
				if err == nil && got {
					t.Errorf("Matches(%q, %q) = true; node-semver rejects the range", c.Range, v)
					mismatches++
				}
				continue
			}
			if err != nil {
				t.Errorf("Matches(%q, %q): %v; node-semver accepts the range", c.Range, v, err)
				mismatches++
				break
			}
			if got != c.Sat[i] {
				t.Errorf("Matches(%q, %q) = %v, node-semver says %v", c.Range, v, got, c.Sat[i])
				mismatches++
			}
		}
		if !c.Valid {
			continue
		}
		best, ok, err := Select(NPM, c.Range, npmVersions)
		switch {
		case err != nil:
			t.Errorf("Select(%q): %v", c.Range, err)
		case c.Max == nil && ok:
			t.Errorf("Select(%q) = %s, node-semver's maxSatisfying finds none", c.Range, best)
		case c.Max != nil && (!ok || best != *c.Max):
			t.Errorf("Select(%q) = %q, %v; node-semver's maxSatisfying says %s", c.Range, best, ok, *c.Max)
		}
	}
	t.Logf("%d ranges × %d versions compared with node-semver; %d mismatches", len(cases), len(npmVersions), mismatches)
	compareAgainstNodeSemver(t, semverDir)
}

// compareAgainstNodeSemver checks the ordering of the version list.
func compareAgainstNodeSemver(t *testing.T, semverDir string) {
	script := `const semver = require(process.argv[process.argv.length - 1]);
const vs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(vs.map(a => vs.map(b => semver.compare(a, b)))));`
	in, _ := json.Marshal(npmVersions)
	cmd := exec.Command("node", "-e", script, "--", semverDir)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle: %v", err)
	}
	var want [][]int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, a := range npmVersions {
		for j, b := range npmVersions {
			got, err := NPM.Compare(a, b)
			if err != nil || got != want[i][j] {
				t.Errorf("Compare(%q, %q) = %d, %v; node-semver says %d", a, b, got, err, want[i][j])
			}
		}
	}
}

// FuzzNPMMatches checks that no range or version string panics, and that
// Compare is antisymmetric on the versions it accepts.
func FuzzNPMMatches(f *testing.F) {
	for _, r := range npmRanges {
		f.Add(r, "1.2.3")
	}
	for _, v := range npmVersions {
		f.Add("^1.2.3 || 2.x", v)
	}
	f.Fuzz(func(t *testing.T, req, v string) {
		_, _ = NPM.Matches(req, v)
		if c, err := NPM.Compare(v, req); err == nil {
			if back, _ := NPM.Compare(req, v); back != -c {
				t.Errorf("Compare(%q, %q) = %d but reverse = %d", v, req, c, back)
			}
		}
	})
}
