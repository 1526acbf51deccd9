package pipfile

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

func TestParse(t *testing.T) {
	data, _ := os.ReadFile("testdata/Pipfile")
	deps, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Dep{
		{"requests", "packages", "", ""}, {"flask", "packages", "3.0.0", ""}, {"mylib", "packages", "", "./mylib"},
		{"numpy", "packages", "1.26.4", ""}, {"pytest", "dev-packages", "", ""}, {"sphinx", "docs", "7.2.6", ""},
	}
	if !slices.Equal(deps, want) {
		t.Errorf("got %+v\nwant %+v", deps, want)
	}
	if _, err := Parse([]byte("[packages]\n\"a b\" = \"*\"\n")); err == nil {
		t.Error("bad name accepted")
	}
	// A TOML error names the file and the line.
	if _, err := Parse([]byte("[packages]\nrequests = \"*\"\n[dev-packages\n")); err == nil || !strings.HasPrefix(err.Error(), "Pipfile:3: ") {
		t.Errorf("bad TOML: %v", err)
	}
}

// TestParseExactPins: only an "==" (or "===") pin of one version gives the
// version; "====" gave "==" and "===1.0" gave "=1.0".
func TestParseExactPins(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"==1.0", "1.0"},
		{" == 1.0 ", "1.0"},
		{"===1.0", "1.0"},
		{"====", ""},
		{"====1.0", ""},
		{"==", ""},
		{"==1.*", ""},
		{"==1.0,<2", ""},
		{"==1.0; python_version < '3'", ""},
		{">=1.0", ""},
		{"*", ""},
	} {
		deps, err := Parse([]byte("[packages]\na = " + strconv.Quote(tc.spec) + "\n"))
		if err != nil || len(deps) != 1 || deps[0].Version != tc.want {
			t.Errorf("a = %q: %+v, %v; want version %q", tc.spec, deps, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/Pipfile")
	f.Add(data)
	f.Add([]byte("[zz]\nB = \"== 1 \"\n[dev-packages]\na = {version = \"==2,<3\", path = \"x\"}\n[packages]\nA_b = \"*\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		deps, err := Parse(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Pipfile") {
				t.Fatalf("error does not name the Pipfile: %v", err)
			}
			return
		}
		rank := func(c string) int {
			switch c {
			case "packages":
				return 0
			case "dev-packages":
				return 1
			}
			return 2
		}
		for i, d := range deps {
			if pyname.Normalize(d.Name) != d.Name || !pyname.Valid(d.Name) {
				t.Fatalf("dep %+v: name not normalized", d)
			}
			if strings.ContainsAny(d.Version, "=<>!~,;* \t\r\n") {
				t.Fatalf("dep %+v: version is not one exact pin", d)
			}
			if i == 0 {
				continue
			}
			// packages, then dev-packages, then the custom categories by
			// name; within a table, by name as written.
			p := deps[i-1]
			if rp, rd := rank(p.Category), rank(d.Category); rp > rd || rp == rd && p.Category > d.Category {
				t.Fatalf("category %q listed after %q", d.Category, p.Category)
			}
		}
	})
}
