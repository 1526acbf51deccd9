package cli

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeWheel(t *testing.T, files map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pyskills-1.0-py3-none-any.whl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// A wheel is unpacked (bounded, nothing outside) and read as the pypi PM
// reads an installed distribution.
func TestValidateWheel(t *testing.T) {
	whl := writeWheel(t, map[string]string{
		"pyskills-1.0.dist-info/METADATA":         "Name: pyskills\n",
		"pyskills-1.0.dist-info/entry_points.txt": "[console_scripts]\nx = y:z\n[symposium]\nmain = pyskills.plugin\n",
		"pyskills/plugin/SYMPOSIUM.toml":          "depends-on = \"pytest\"\n",
		"pyskills/plugin/skills/s/SKILL.md":       "---\nname: s\ndescription: d\n---\n",
	})
	code, out, errOut := runCmd(t, cmdValidate, whl)
	if code != ExitOK || !strings.Contains(out, whl+": checked as a wheel (origin package)") || !strings.Contains(out, "checked 1 plugin: 1 valid") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	bad := writeWheel(t, map[string]string{
		"pyskills-1.0.dist-info/METADATA": "Name: pyskills\n",
		"pyskills-1.0.dist-info/RECORD":   "pyskills/SYMPOSIUM.toml,,\npyskills/skills/s/SKILL.md,,\n",
		"pyskills/SYMPOSIUM.toml":         "hooks = 5\n",
		"pyskills/skills/s/SKILL.md":      "---\nname: s\ndescription: d\n---\n",
	})
	code, out, _ = runCmd(t, cmdValidate, bad)
	if code != ExitFailure || !strings.Contains(out, bad+"!/pyskills/SYMPOSIUM.toml") {
		t.Errorf("invalid wheel plugin: exit %d\n%s", code, out)
	}
	// Without a RECORD or top_level.txt, the pypi PM cannot tell the
	// distribution's packages, and validate says so.
	unlisted := writeWheel(t, map[string]string{
		"pyskills-1.0.dist-info/METADATA": "Name: pyskills\n",
		"pyskills/SYMPOSIUM.toml":         "depends-on = \"pytest\"\n",
	})
	code, out, _ = runCmd(t, cmdValidate, unlisted)
	if code != ExitFailure || !strings.Contains(out, "no RECORD or top_level.txt to list its top-level packages") {
		t.Errorf("wheel without RECORD: exit %d\n%s", code, out)
	}
	evil := writeWheel(t, map[string]string{"../evil": "x", "a-1.0.dist-info/METADATA": ""})
	code, out, _ = runCmd(t, cmdValidate, evil)
	if code != ExitFailure || !strings.Contains(out, `entry "../evil" escapes the root`) {
		t.Errorf("escaping wheel: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(evil), "evil")); err == nil {
		t.Error("a wheel entry was written outside the unpacking directory")
	}
}

// TestValidateEntryPointsAsThePM: validate reads entry_points.txt as the
// pypi PM does (sdk/pydist). A bad line in any group spoils the file: its
// symposium entry points are ignored and the problem is named with its
// line. Several entry points make several plugins, each named after its
// entry point, not its directory. An entry point with "[extra]" names its
// module without it.
func TestValidateEntryPointsAsThePM(t *testing.T) {
	skill := "---\nname: s\ndescription: d\n---\n"
	spoiled := writeWheel(t, map[string]string{
		"pyskills-1.0.dist-info/METADATA":         "Name: pyskills\n",
		"pyskills-1.0.dist-info/entry_points.txt": "[symposium]\nmain = pyskills.plugin\n[console_scripts]\nbroken line\n",
		"pyskills/plugin/SYMPOSIUM.toml":          "hooks = 5\n",
		"pyskills/plugin/skills/s/SKILL.md":       skill,
	})
	code, out, _ := runCmd(t, cmdValidate, spoiled)
	if code != ExitFailure || !strings.Contains(out, "entry_points.txt:4: expected name = value; the pypi PM ignores every entry point of this file") ||
		strings.Contains(out, "hooks") {
		t.Errorf("spoiled entry_points.txt: exit %d\n%s", code, out)
	}
	several := writeWheel(t, map[string]string{
		"pyskills-1.0.dist-info/METADATA":         "Name: pyskills\n",
		"pyskills-1.0.dist-info/entry_points.txt": "[symposium]\nalpha = pyskills.one\nbeta = pyskills.two:attr [extra]\n",
		"pyskills/one/skills/s/SKILL.md":          skill,
		"pyskills/two/skills/s/SKILL.md":          skill,
	})
	code, out, errOut := runCmd(t, cmdValidate, "--json", several)
	if code != ExitOK || !strings.Contains(out, `"alpha"`) || !strings.Contains(out, `"beta"`) {
		t.Errorf("two entry points: exit %d\n%s%s", code, out, errOut)
	}
}
