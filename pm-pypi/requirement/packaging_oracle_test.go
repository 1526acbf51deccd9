package requirement

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// pep508Cases are requirement strings as pyproject.toml and setup metadata
// write them, valid and not, where a reader is easy to get wrong.
var pep508Cases = []string{
	"requests", "A", "A.B-C_D", "Name.With.Dots", "aa",
	"requests[socks]>=2.8.1,==2.8.*;python_version<'2.7'",
	`requests [security,tests] >= 2.8.1, == 2.8.* ; python_version < "2.7"`,
	"name@http://foo.com", "name @ https://example.com/pkg-1.0.tar.gz ; os_name=='a'",
	"name[fred,bar] @ http://foo.com ; python_version=='2.7'",
	"name @ git+https://github.com/o/r.git@v1.0#egg=name",
	"name @ file:///tmp/pkg-1.0-py3-none-any.whl",
	"name<=1", "name>=3,<2", "name>=3 , <2", "name (>=1.0)", "name(==1.0)",
	"name (>=1.0, <2) ; extra == 'x'", "name===arbitrary", "name==1.0.*", "name~=1.4.5",
	"name!=1.1", "name==1.0+local", "name==1.0.post1.dev2", "name==v1.0", "name==1.0a1",
	"name; os_name=='a' and os_name=='b' or os_name=='c'",
	"name ; (os_name=='a' or os_name=='b') and os_name=='c'",
	"name[]", "name[ extra ]", "name[extra1, extra-2]", "name [x] ==1",
	"name\t>=1.0", " name ", "name==1.0 ; python_version >= '3.8' and extra == \"test\"",
	// Invalid in packaging.
	"", "name[", "name[bar baz]", "name @", "name ==", "name >= 1.0 ; ",
	"name; os_name == ", "-name", "name==1.0 junk", "name (>=1.0", "name ; python_version < 3",
	"name @ http://foo.com;python_version>'3'", "name~=1", "name==1.0.*.*", "name<1.0.*",
	"name>=1.0 <2.0", "näme", "name[extra]extra", "name ; os_name = 'a'", "name ; foo == 'a'",
	"name ; (os_name == 'a'", "name==1.0;", "name>=1.0,", "name,>=1.0", "name>=", "name=>1",
	"name @ http://foo.com junk", "name[.x]", "name>=1.0, ,<2", "name (>=1.0,)", "name>=1.0,",
	"name @ http://foo.com ; os_name == ", "name ; extra == ''", "name==1.0 ; os_name == 'a' junk",
}

// packagingOracle reads each case with packaging.requirements.Requirement;
// it also canonicalises our specifier and marker strings with
// packaging.specifiers and packaging.markers, so the two sides compare in
// one form.
const packagingOracle = `
import json, sys
import packaging
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.markers import Marker
d = json.load(sys.stdin)
out = {"version": packaging.__version__, "cases": [], "specs": [], "markers": []}
for s in d["cases"]:
    try:
        r = Requirement(s)
    except Exception as e:
        out["cases"].append({"error": str(e)})
        continue
    out["cases"].append({"name": r.name, "extras": sorted(r.extras), "specs": sorted(str(x) for x in r.specifier),
                         "url": r.url or "", "marker": str(r.marker) if r.marker else ""})
for s in d["specs"]:
    try:
        out["specs"].append(sorted(str(x) for x in SpecifierSet(s)))
    except Exception as e:
        out["specs"].append(None)
for m in d["markers"]:
    try:
        out["markers"].append(str(Marker(m)) if m else "")
    except Exception as e:
        out["markers"].append(None)
json.dump(out, sys.stdout)
`

// TestParsePackagingOracle compares Parse with Debian's python3-packaging
// (/usr/bin/python3, whose packaging follows the current rules, unlike the
// copy an old pip vendors): the same strings are valid, and for those the
// name, extras, specifier clauses, URL and marker agree.
func TestParsePackagingOracle(t *testing.T) {
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import packaging.requirements").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import packaging (apt-get install python3-packaging): %v %s", py, err, bytes.TrimSpace(out))
	}
	ours := make([]Requirement, len(pep508Cases))
	errs := make([]error, len(pep508Cases))
	var specs, markers []string
	for i, s := range pep508Cases {
		ours[i], errs[i] = Parse(s)
		specs = append(specs, ours[i].Specifier)
		markers = append(markers, ours[i].Marker)
	}
	in, _ := json.Marshal(map[string]any{"cases": pep508Cases, "specs": specs, "markers": markers})
	cmd := exec.Command(py, "-c", packagingOracle)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("packaging oracle: %v\n%s", err, stderr.String())
	}
	var o struct {
		Version string `json:"version"`
		Cases   []struct {
			Error  string   `json:"error"`
			Name   string   `json:"name"`
			Extras []string `json:"extras"`
			Specs  []string `json:"specs"`
			URL    string   `json:"url"`
			Marker string   `json:"marker"`
		} `json:"cases"`
		Specs   [][]string `json:"specs"`
		Markers []*string  `json:"markers"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("packaging oracle output: %v\n%s", err, raw)
	}
	t.Logf("packaging %s", o.Version)
	for i, s := range pep508Cases {
		w, r, err := o.Cases[i], ours[i], errs[i]
		switch {
		case w.Error != "" && err == nil:
			t.Errorf("%q: packaging refuses it (%s), we read %+v", s, w.Error, r)
			continue
		case w.Error == "" && err != nil:
			t.Errorf("%q: packaging reads it, we refuse it: %v", s, err)
			continue
		case w.Error != "":
			continue
		}
		if r.Name != w.Name {
			t.Errorf("%q: name %q, packaging %q", s, r.Name, w.Name)
		}
		extras := slices.Clone(r.Extras)
		slices.Sort(extras)
		extras = slices.Compact(extras)
		if !slices.Equal(extras, w.Extras) && !(len(extras) == 0 && len(w.Extras) == 0) {
			t.Errorf("%q: extras %q, packaging %q", s, extras, w.Extras)
		}
		if got := o.Specs[i]; !slices.Equal(got, w.Specs) && !(len(got) == 0 && len(w.Specs) == 0) {
			t.Errorf("%q: specifier %q reads as %q, packaging %q", s, r.Specifier, got, w.Specs)
		}
		if r.URL != w.URL {
			t.Errorf("%q: URL %q, packaging %q", s, r.URL, w.URL)
		}
		if m := o.Markers[i]; m == nil || *m != w.Marker {
			t.Errorf("%q: marker %q, packaging %q", s, r.Marker, w.Marker)
		}
	}
}

// pipTree is a requirements file with includes, constraints, continuation
// lines, comments, options, hashes, environment variables, extras,
// markers and direct references, laid out in several files.
var pipTree = map[string]string{
	"requirements.txt": `# top comment
--index-url https://pypi.example/simple
-r sub/base.txt
--requirement=sub/more.txt
-c constraints.txt
requests[socks]==2.31.0 \
    --hash=sha256:58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f
flask>=2 ; python_version >= "3.8"  # trailing comment
Django == 4.2.* ; sys_platform != "win32"
numpy==${NUMPY_VERSION}
urllib3 @ https://github.com/urllib3/urllib3/archive/refs/tags/1.26.8.zip
pip @ https://example.com/dl/pip-23.0-py3-none-any.whl ; python_version >= "3"
./wheels/foo_bar-1.2.0-py3-none-any.whl
https://example.com/dl/baz_qux-0.3.1-py3-none-any.whl
attrs===21.4.0
six==1.16.0 --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926
Typing_Extensions~=4.7 \
  ; python_version < "3.11"
--no-binary :all:
--prefer-binary
   indented==0.1
`,
	"sub/base.txt": "# base\nclick==8.1.7\n\n-r ../common/common.txt\n",
	"sub/more.txt": "packaging >= 23.0, < 25\n--only-binary=:none:\n",
	"common/common.txt": "Jinja2==3.1.2\n" +
		"MarkupSafe==2.1.3 \\\n  --hash=sha256:aa\n",
	"constraints.txt": "flask==3.0.0\nurllib3<2\n",
}

// pipFileOracle reads a requirements file with pip's parser, includes
// followed, and prints each line's name, specifiers and whether it came from
// a constraints file; a line whose requirement pip builds no name for (a
// path or URL pip would have to download to name) has an empty name.
const pipFileOracle = `
import json, sys, logging, warnings
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
from pip._internal.req.req_file import parse_requirements
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.network.session import PipSession
rows = []
for pr in parse_requirements(sys.argv[1], session=PipSession(), constraint=False):
    ir = install_req_from_parsed_requirement(pr)
    name = ir.req.name if ir.req is not None else ""
    specs = sorted(str(s) for s in ir.req.specifier) if ir.req is not None else []
    rows.append({"name": name, "specs": specs, "constraint": bool(pr.constraint), "link": ir.link.url if ir.link else ""})
json.dump(rows, sys.stdout)
`

// TestOracleParseFilePipFile reads pipTree with ParseFile and with pip's
// own requirements-file parser (every interpreter with pip among
// /usr/bin/python3 and the python3 on PATH) and compares line by line: the
// same requirements in the same order, from the same files, with the
// version of an exact pin.
func TestOracleParseFilePipFile(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that runs pip's requirements-file parser on every case for minutes: make oracle runs it; -short (make race) skips it")
	}
	var pys []string
	for _, c := range []string{"/usr/bin/python3", "python3"} {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if rp, err := filepath.EvalSymlinks(p); err == nil && slices.Contains(pys, rp) {
			continue
		} else if err == nil {
			p = rp
		}
		if exec.Command(p, "-c", "import pip._internal.req.req_file").Run() == nil {
			pys = append(pys, p)
		}
	}
	if len(pys) == 0 {
		t.Skip("no python3 with pip: pip's parser is the oracle")
	}
	dir := t.TempDir()
	for name, body := range pipTree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(dir, "requirements.txt")
	env := map[string]string{"NUMPY_VERSION": "1.26.4"}
	f, err := ParseFile(top, Options{ReadFile: os.ReadFile, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) > 0 {
		t.Errorf("problems: %v", f.Problems)
	}
	type row struct {
		Name       string
		Version    string
		Constraint bool
	}
	var got []row
	for _, e := range f.Entries {
		got = append(got, row{e.Name, e.Version, e.Constraint})
	}
	for _, py := range pys {
		cmd := exec.Command(py, "-c", pipFileOracle, top)
		cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1", "NUMPY_VERSION=1.26.4")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		raw, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: pip oracle: %v\n%s", py, err, stderr.String())
		}
		var rows []struct {
			Name       string   `json:"name"`
			Specs      []string `json:"specs"`
			Constraint bool     `json:"constraint"`
			Link       string   `json:"link"`
		}
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatalf("%s: pip oracle output: %v\n%s", py, err, raw)
		}
		var want []row
		for _, r := range rows {
			w := row{Name: pyname.Normalize(r.Name), Constraint: r.Constraint}
			if len(r.Specs) == 1 && strings.HasPrefix(r.Specs[0], "==") && !strings.HasSuffix(r.Specs[0], ".*") {
				w.Version = strings.TrimLeft(r.Specs[0], "=")
			}
			if w.Name == "" || strings.HasSuffix(r.Link, ".whl") {
				// pip names a wheel's requirement from its file name only
				// when it prepares it; the file name states both.
				if n, v, ok := NameFromURL(r.Link); ok {
					w.Name, w.Version = pyname.Normalize(n), v
				}
			}
			want = append(want, w)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (pip):\n got  %+v\n want %+v", py, got, want)
		}
	}
}
