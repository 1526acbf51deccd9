package versions

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cargoVersions is the candidate set of the differential test: releases and
// pre-releases of 0.0.x, 0.x, 1.x, 2.x and 3.x.
var cargoVersions = []string{
	"0.0.1", "0.0.2", "0.1.0", "0.1.5", "0.2.0-alpha.1", "0.2.0",
	"1.0.0-alpha.1", "1.0.0-alpha.2", "1.0.0-beta.2", "1.0.0", "1.2.3",
	"1.2.4-rc.1", "1.2.4", "1.3.0", "1.10.0", "2.0.0-rc.1", "2.0.0", "2.1.0",
	"3.0.0-alpha.1",
}

// cargoRequirements covers bare (caret) versions of every length, ^, ~, =,
// wildcards, comparators, comma-joined ranges and the pre-release rule.
var cargoRequirements = []string{
	"1", "1.2", "1.2.3", "^1.2.3", "^1.2", "^1", "~1.2", "~1", "~1.2.3", "=1.2.3", "=1.2", "=1",
	"*", "1.*", "1.2.*", "1.*.*", "0.*", ">=1.0.0-alpha.1", ">=1.2.4-rc.1", ">1.0.0, <1.3", "<2",
	"<2.0.0-rc.2", "^0.1", "^0.0.1", "0.0", "0", ">=2.0.0-rc.1", "=1.0.0-beta.2",
	"^1.0.0-alpha.1", "~2.0.0-rc.1", "1.0.0-alpha.2", ">1.0.0-alpha.1, <1.0.0",
	"^0.2.0-alpha.1", ">=0.1.0, <0.2.0", "<=1.2.4-rc.1", ">=1.2.4-rc.0, <1.2.5", "0.2", "~0",
	"^3.0.0-alpha.0", "3.0.0-alpha.1", ">=3.0.0-alpha.0", ">= 1.2, < 1.3", "1.2.3, <1.2.4",
	"=0.2.0-alpha.1", "<0.2.0", "<1.0.0-beta.2", ">0.1", "<=1.2", ">1", "~1.2.4-rc.0",
	"^1.2.4-rc.0", "=1.2.4-rc.1", ">=1.0.0-beta.2, <1.0.0", "^0.0", "~0.0.1", "=2.0.0-rc.1",
	"<1", ">=0", "<=0.0.1", ">3", "^2.0.0-rc.0, <2.0.0",
	"3", "4", "=1.2.5", "^0.3", "<0.0.1",
}

// TestOracleCargoMatchesRealCargo resolves every requirement with the real cargo
// against a directory source holding cargoVersions of one crate per
// requirement, and checks Select picks the same version (or none).
func TestOracleCargoMatchesRealCargo(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that runs cargo generate-lockfile over every requirement for minutes: make oracle runs it; -short (make race) skips it")
	}
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("cargo not installed")
	}
	dir := t.TempDir()
	vendor := filepath.Join(dir, "vendor")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var deps strings.Builder
	var withNone []int
	for i, req := range cargoRequirements {
		name := fmt.Sprintf("pick%d", i)
		for _, v := range cargoVersions {
			d := filepath.Join(vendor, name+"-"+v)
			write(filepath.Join(d, "Cargo.toml"), fmt.Sprintf("[package]\nname = %q\nversion = %q\nedition = \"2021\"\n", name, v))
			write(filepath.Join(d, "src", "lib.rs"), "")
			write(filepath.Join(d, ".cargo-checksum.json"), `{"files":{},"package":"`+strings.Repeat("0", 64)+`"}`)
		}
		if _, ok, err := Select(Cargo, req, cargoVersions); err != nil {
			t.Errorf("Select(%q): %v", req, err)
		} else if !ok {
			withNone = append(withNone, i)
			continue
		}
		fmt.Fprintf(&deps, "%s = %q\n", name, req)
	}
	home := filepath.Join(dir, "cargo-home")
	write(filepath.Join(home, "config.toml"), "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = "+fmt.Sprintf("%q", vendor)+"\n")
	env := []string{"CARGO_HOME=" + home, "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never"}
	if h, err := os.UserHomeDir(); err == nil && os.Getenv("RUSTUP_HOME") == "" {
		env = append(env, "RUSTUP_HOME="+filepath.Join(h, ".rustup"))
	}
	resolve := func(proj, depLines string) (map[string]string, string, error) {
		write(filepath.Join(proj, "Cargo.toml"), "[package]\nname = \"probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\n"+depLines+"\n[workspace]\n")
		write(filepath.Join(proj, "src", "lib.rs"), "")
		cmd := exec.Command(cargo, "generate-lockfile", "--offline")
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, stderr.String(), err
		}
		lock, err := os.ReadFile(filepath.Join(proj, "Cargo.lock"))
		if err != nil {
			return nil, "", err
		}
		got := map[string]string{}
		re := regexp.MustCompile(`name = "(pick\d+)"\nversion = "([^"]+)"`)
		for _, m := range re.FindAllStringSubmatch(string(lock), -1) {
			got[m[1]] = m[2]
		}
		return got, "", nil
	}
	got, stderr, err := resolve(filepath.Join(dir, "all"), deps.String())
	if err != nil {
		t.Fatalf("cargo generate-lockfile: %v\n%s", err, stderr)
	}
	for i, req := range cargoRequirements {
		name := fmt.Sprintf("pick%d", i)
		if slicesContains(withNone, i) {
			continue
		}
		want, _, _ := Select(Cargo, req, cargoVersions)
		if got[name] != want {
			t.Errorf("requirement %q: cargo picks %q, Select picks %q", req, got[name], want)
		}
	}
	// Requirements Select says match nothing: cargo must fail too.
	for _, i := range withNone {
		name := fmt.Sprintf("pick%d", i)
		got, _, err := resolve(filepath.Join(dir, name), fmt.Sprintf("%s = %q\n", name, cargoRequirements[i]))
		if err == nil {
			t.Errorf("requirement %q: Select matches nothing, cargo picks %q", cargoRequirements[i], got[name])
		}
	}
}

func slicesContains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestCargoCompare(t *testing.T) {
	for i := 0; i+1 < len(cargoVersionsSorted); i++ {
		a, b := cargoVersionsSorted[i], cargoVersionsSorted[i+1]
		if c, err := Cargo.Compare(a, b); err != nil || c >= 0 {
			t.Errorf("Compare(%s, %s) = %d, %v; want -1", a, b, c, err)
		}
	}
	if c, err := Cargo.Compare("1.0.0+build.1", "1.0.0+build.2"); err != nil || c != 0 {
		t.Errorf("build metadata must not order versions: %d, %v", c, err)
	}
	for _, good := range []string{"0.0.0", "1.2.3-alpha.1+build.5", "1.0.0-0a", "1.0.0-x-y.z", "10.20.30+001"} {
		if _, err := Cargo.Compare(good, "1.0.0"); err != nil {
			t.Errorf("Compare rejected the version %q: %v", good, err)
		}
	}
	for _, bad := range []string{"1", "1.2", "v1.2.3", "1.2.3.4", "01.2.3", "1.2.3-", "", "1.2.3-01", "1.2.3+", "1.2.3-a..b", "1.2.3-a_b"} {
		if _, err := Cargo.Compare(bad, "1.0.0"); err == nil {
			t.Errorf("Compare accepted the non-version %q", bad)
		}
	}
	for _, bad := range []string{"1.2.3 || 2", "1.2 - 1.4", ">>1", "^^1", "1.2.3,,"} {
		if _, err := Cargo.Matches(bad, "1.2.3"); err == nil {
			t.Errorf("Matches accepted the non-cargo requirement %q", bad)
		}
	}
}

// cargoVersionsSorted is in semver precedence order.
var cargoVersionsSorted = []string{
	"0.0.1", "0.1.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
	"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.3", "1.10.0", "2.0.0",
}
