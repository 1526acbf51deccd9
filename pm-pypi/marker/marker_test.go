package marker

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

var linux311 = Env{
	"python_version": "3.11", "python_full_version": "3.11.2", "os_name": "posix", "sys_platform": "linux",
	"platform_release": "6.1.0-18-amd64", "platform_system": "Linux", "platform_version": "#1 SMP Debian",
	"platform_machine": "x86_64", "platform_python_implementation": "CPython", "implementation_name": "cpython",
	"implementation_version": "3.11.2", "extra": "",
}

var darwin38 = Env{
	"python_version": "3.8", "python_full_version": "3.8.10", "os_name": "posix", "sys_platform": "darwin",
	"platform_release": "23.1.0", "platform_system": "Darwin", "platform_version": "Darwin Kernel",
	"platform_machine": "arm64", "platform_python_implementation": "CPython", "implementation_name": "cpython",
	"implementation_version": "3.8.10", "extra": "",
}

var win312 = Env{
	"python_version": "3.12", "python_full_version": "3.12.0rc1", "os_name": "nt", "sys_platform": "win32",
	"platform_release": "10", "platform_system": "Windows", "platform_version": "10.0.19041",
	"platform_machine": "AMD64", "platform_python_implementation": "PyPy", "implementation_name": "pypy",
	"implementation_version": "7.3.13", "extra": "Feature_X",
}

// markerCases are the differential table: uv's and pip's everyday markers,
// version and string comparisons, in/not in, reversed operands, nesting.
var markerCases = []string{
	`python_version < "3.10"`, `python_version >= "3.9"`, `python_full_version >= '3.11.1'`,
	`python_full_version < '3.12'`, `python_version == "3.*"`, `python_version != "3.8.*"`,
	`python_version ~= "3.8"`, `python_full_version === "3.11.2"`, `"3.9" < python_version`,
	`sys_platform == 'linux'`, `sys_platform != "win32"`, `sys_platform == 'darwin' and platform_machine == 'arm64'`,
	`platform_system == "Windows" or os_name == "nt"`, `'linux' in sys_platform`, `"win" not in sys_platform`,
	`implementation_name == "cpython" and (python_version < "3.9" or sys_platform == "win32")`,
	`(python_version >= "3.8" and python_version < "3.12") and platform_python_implementation != 'PyPy'`,
	`platform_release >= "10"`, `platform_machine in "x86_64 AMD64"`, `extra == "feature-x"`,
	`extra == 'feature_x' or extra == "other"`, `python_full_version < '3.12.0'`, `python_full_version >= '3.12.0rc1'`,
	`os.name == "posix"`, `python_implementation == "CPython"`, `implementation_version >= "7"`,
	`python_version > "3.8"`, `python_version <= "3.8"`, `platform_system < "M"`,
	`((sys_platform == "linux"))`, `python_version in "3.10 3.11"`, `sys_platform == "linux" and extra == ""`,
	// Two variables, or two literals: packaging takes the right side of a
	// variable as written, and looks up the right side of a literal.
	`os_name == os_name`, `python_version == python_version`, `"a" == "a"`, `"posix" == os_name`,
	`sys_platform != sys_platform`, `"x" == "os_name"`,
}

const markerOracle = `
import json, sys
from packaging.markers import Marker
d = json.load(sys.stdin)
out = {}
for name, env in d["envs"].items():
    res = []
    for m in d["markers"]:
        try:
            res.append(Marker(m).evaluate(env))
        except Exception as e:
            res.append(None)
    out[name] = res
json.dump(out, sys.stdout)
`

// TestMarkerOracle compares evaluation with Debian's python3-packaging
// (/usr/bin/python3, not the python3 on PATH, whose packaging may be old);
// it skips when that is not installed.
func TestMarkerOracle(t *testing.T) {
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import packaging.markers").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import packaging (apt-get install python3-packaging): %v %s", py, err, bytes.TrimSpace(out))
	}
	envs := map[string]Env{"linux311": linux311, "darwin38": darwin38, "win312": win312}
	in, _ := json.Marshal(map[string]any{"envs": envs, "markers": markerCases})
	cmd := exec.Command(py, "-c", markerOracle)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var want map[string][]*bool
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for name, env := range envs {
		for i, text := range markerCases {
			m, err := Parse(text)
			if err != nil {
				t.Errorf("Parse(%q): %v", text, err)
				continue
			}
			got := m.Eval(env)
			w := want[name][i]
			switch {
			case w == nil && got != Unknown:
				t.Errorf("%s: %q = %v, packaging raises", name, text, got)
			case w != nil && got != of(*w):
				t.Errorf("%s: %q = %v, packaging says %v", name, text, got, *w)
			}
		}
	}
}

func TestUnknown(t *testing.T) {
	platformOnly := Env{"sys_platform": "linux", "os_name": "posix", "platform_system": "Linux", "platform_machine": "x86_64"}
	for text, want := range map[string]Value{
		`python_version < "3.10"`:                             Unknown,
		`python_version < "3.10" and sys_platform == "win32"`: False,
		`python_version < "3.10" or sys_platform == "linux"`:  True,
		`python_version < "3.10" or sys_platform == "win32"`:  Unknown,
		`sys_platform == "linux"`:                             True,
		`platform_release >= "5"`:                             Unknown,
	} {
		m, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Eval(platformOnly); got != want {
			t.Errorf("%q = %v, want %v", text, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{``, `python_version`, `python_version <`, `python_version < "3`, `foo == "1"`,
		`(python_version < "3"`, `python_version < "3")`, `python_version << "3"`, `not python_version`,
		`python_version < "3" and`, strings.Repeat("(", MaxDepth+1) + `os_name == "a"` + strings.Repeat(")", MaxDepth+1)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "marker") {
			t.Errorf("Parse(%q): error %q does not name the marker", bad, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, m := range markerCases[:8] {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(s)
		if err != nil {
			return
		}
		m.Eval(linux311)
		m.Eval(Env{})
	})
}
