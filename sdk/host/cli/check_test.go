package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

func runCheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"check"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCheckNullPM(t *testing.T) {
	null := benchkit.NullPM(t)
	ws := t.TempDir()
	for _, args := range [][]string{
		{"--workspace", ws, "--", null},
		// Without --; with the request-line limit lowered to 1 MiB on
		// both sides, since the run above pipes the protocol's 64 MiB.
		{"--workspace", ws, "--line-limit", "1048576", null, "--max-message-size", "1048576"},
	} {
		code, out, errs := runCheck(t, args...)
		if code != ExitOK {
			t.Fatalf("check %v: exit %d\n%s%s", args, code, out, errs)
		}
		for _, want := range []string{"pm null\n", "PASS  handshake ", "PASS  eof-drain ", "SKIP  fetch-idempotent ", "0 failed"} {
			if !strings.Contains(out, want) {
				t.Errorf("check %v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

func TestCheckJSON(t *testing.T) {
	null := benchkit.NullPM(t)
	code, out, errs := runCheck(t, "--workspace", t.TempDir(), "--json", "--run", "^unknown-method$", "--", null)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var rep pmtest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.PM != "null" || len(rep.Results) != 2 || rep.Results[1].Name != "unknown-method" || rep.Results[1].Status != pmtest.Pass {
		t.Errorf("report: %+v", rep)
	}
}

func TestCheckFailingPM(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("cat not installed")
	}
	// cat echoes the requests back: not a PM at all.
	code, out, _ := runCheck(t, "--workspace", t.TempDir(), "--timeout", "2s", "--", cat)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	want := regexp.MustCompile(`(?m)^FAIL +handshake +(§[0-9.]+ +)*initialize with protocol version 1: the PM sent a request or notification \(method "initialize"\) to the host`)
	if !want.MatchString(out) || !regexp.MustCompile(`(?m)^SKIP +concurrency +(§[0-9.]+ +)*not run: the handshake failed$`).MatchString(out) {
		t.Errorf("output does not match %s:\n%s", want, out)
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--workspace"},
		{"--fetch-update", "sometimes", "--", "x"},
		{"--run", "(", "--", "x"},
		{"--fetch-id", "nocolon", "--", "x"},
		{"extra", "--", "x"},
	} {
		if code, _, _ := runCheck(t, args...); code != ExitUsage {
			t.Errorf("check %q: exit %d, want %d", args, code, ExitUsage)
		}
	}
	if code, out, errs := runCheck(t, "--help"); code != ExitOK || !strings.Contains(out, "Usage: symposium-pm check") || errs != "" {
		t.Errorf("--help: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

func TestCheckList(t *testing.T) {
	code, out, _ := runCheck(t, "--list")
	if code != ExitOK || out != strings.Join(pmtest.Checks(), "\n")+"\n" {
		t.Errorf("--list: exit %d\n%s", code, out)
	}
}

func TestFetchIDFlag(t *testing.T) {
	var f fetchIDs
	for _, v := range []string{"cargo:serde@1.0.0", "gitreg:skills/rust", "npm:@acme/skills@1.2.0"} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.String(); got != "cargo:serde@1.0.0,gitreg:skills/rust@*,npm:@acme/skills@1.2.0" {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{"serde", ":x", "cargo:", "cargo:x@"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Set(%q) succeeded", bad)
		}
	}
}
