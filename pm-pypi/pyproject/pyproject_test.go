package pyproject

import (
	"os"
	"strings"
	"testing"
)

func deps(p *Project) map[string]string {
	m := map[string]string{}
	for _, d := range p.Deps {
		m[d.Name] = d.Group + " " + d.Req.Specifier
	}
	return m
}

func TestParsePEP621(t *testing.T) {
	data, _ := os.ReadFile("testdata/pep621.toml")
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"requests": "project >=2.31", "django": "project ==4.2.7", "pytest": "optional:test >=7",
		"rich": "optional:extra ", "ruff": "group:dev ==0.4.1", "coverage": "group:test ", "mypy": "group:dev ",
	}
	got := deps(p)
	if len(got) != len(want) {
		t.Errorf("deps %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("dep %s = %q, want %q", k, got[k], v)
		}
	}
	if p.Name != "my-app" || p.Version != "1.0" || len(p.Problems) != 1 {
		t.Errorf("name %q version %q problems %v", p.Name, p.Version, p.Problems)
	}
	if p.Symposium["name"] != "my-app-plugin" || len(p.WorkspaceMembers) != 1 || len(p.WorkspaceExclude) != 1 {
		t.Errorf("symposium %v members %v", p.Symposium, p.WorkspaceMembers)
	}
}

func TestParsePoetry(t *testing.T) {
	data, _ := os.ReadFile("testdata/poetry.toml")
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"requests": "poetry ", "flask": "poetry ==3.0.0", "mylib": "poetry ", "numpy": "poetry ",
		"black": "poetry-group:dev ==23.1.0", "pytest": "poetry-group:test ",
	}
	got := deps(p)
	if len(got) != len(want) {
		t.Errorf("deps %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("dep %s = %q, want %q", k, got[k], v)
		}
	}
	if p.Name != "poetry-proj" {
		t.Errorf("name %q", p.Name)
	}
}

func TestParseBad(t *testing.T) {
	// Each error names the file and the line.
	for _, tc := range []struct{ body, want string }{
		{"[project\n", "pyproject.toml:1: invalid TOML: "},
		{"[project]\nname = \"x\"\ndependencies = \"x\"\n", "pyproject.toml:3: project.dependencies: expected an array, found a string"},
		{"[project]\nname = 3\n", "pyproject.toml:2: project.name: expected a string, found an integer"},
		{"[tool.poetry.group.dev]\ndependencies = [1]\n", "pyproject.toml:2: tool.poetry.group.dev.dependencies: expected a table, found an array"},
	} {
		if _, err := Parse([]byte(tc.body)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q…", tc.body, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/pep621.toml", "testdata/poetry.toml"} {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}
