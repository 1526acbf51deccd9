package requirement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// pipLines are requirement lines where pip's reading is easy to get wrong:
// direct references to archives, legacy specifiers pip still installs,
// options pip ignores or refuses.
var pipLines = []string{
	"urllib3 @ https://github.com/urllib3/urllib3/archive/refs/tags/1.26.8.zip",
	"urllib3 @ https://github.com/urllib3/urllib3/archive/refs/tags/1.26.8.tar.gz",
	"urllib3@https://example.com/dl/urllib3-1.26.8-py2.py3-none-any.whl",
	"pip @ https://github.com/pypa/pip/archive/22.0.zip ; python_version >= '3'",
	"asdf==",
	"Jinja2==3.0.0#comment",
	"foo6==1.0 --hash=sha256:abcdef trailing",
	"foo7==1.0 --hash sha256:abcdef",
	"foo==1.0 --config-settings=bar",
	"foo==1.0 --config-settings=a=b",
	"foo==1.0 -C bar",
	"foo==1.0 -Ca=b",
	"foo==1.0 --global-option=x",
	"foo==1.0 --install-option=x",
	"foo==1.0 --no-such-option",
	"foo >=1.0 , <2",
	"bar[x]== ; python_version < '3'",
	"this is not valid",
	"baz==1.0 --hash=nocolon",
}

// readLine parses one requirements line as a file of its own.
func readLine(t *testing.T, dir string, i int, line string) *File {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("r%02d.txt", i))
	if err := os.WriteFile(p, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(p, Options{ReadFile: os.ReadFile})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestParseFileLikePip pins what each line of pipLines gives.
func TestParseFileLikePip(t *testing.T) {
	dir := t.TempDir()
	want := []string{
		"urllib3 ", "urllib3 ", "urllib3 1.26.8", "pip ",
		"asdf ", "jinja2 ", "foo6 1.0", "foo7 1.0",
		"foo ", "foo 1.0", "foo ", "foo 1.0", "foo 1.0", "foo ", "foo ",
		"foo ", "bar ", "", "baz ",
	}
	for i, line := range pipLines {
		f := readLine(t, dir, i, line)
		got := ""
		for _, e := range f.Entries {
			got += e.Name + " " + e.Version
		}
		if got != want[i] {
			t.Errorf("%q: got %q, want %q (problems %v, warnings %v)", line, got, want[i], f.Problems, f.Warnings)
		}
		if len(f.Entries) == 1 && f.Entries[0].Version == "" && f.Entries[0].Req.URL == "" && len(f.Warnings) == 0 && f.Entries[0].Req.Specifier != ">=1.0,<2" {
			t.Errorf("%q: listed without a version and without a warning", line)
		}
	}
}

// pipOracle reads each file with pip's own requirements-file parser and
// then builds the install requirement as pip would; it prints, per file,
// either the error pip raises for the file or per line the name and the
// specifiers (or the error for that line).
const pipOracle = `
import json, sys, logging, warnings
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
from pip._internal.req.req_file import parse_requirements
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.network.session import PipSession
out = {}
session = PipSession()
for path in sys.argv[1:]:
    try:
        rows = []
        for pr in parse_requirements(path, session=session):
            try:
                ir = install_req_from_parsed_requirement(pr)
            except Exception as e:
                rows.append({"error": str(e)})
                continue
            if ir.req is None:
                rows.append({"error": "no requirement"})
                continue
            rows.append({"name": ir.req.name, "specs": [str(s) for s in ir.req.specifier]})
        out[path] = {"rows": rows}
    except BaseException as e:
        out[path] = {"error": "%s: %s" % (type(e).__name__, e)}
json.dump(out, sys.stdout)
`

// TestOracleParseFilePip compares pipLines with pip's own parser
// (pip._internal.req.req_file): every line pip installs is listed under
// its name, with the version of an exact "==" pin (none for a legacy one);
// a line pip refuses is never listed with a version.
func TestOracleParseFilePip(t *testing.T) {
	if testing.Short() {
		t.Skip("an oracle test that runs pip's requirements-file parser on every line for minutes: make oracle runs it; -short (make race) skips it")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: pip's parser is the oracle")
	}
	if out, err := exec.Command(py, "-c", "import pip._internal.req.req_file").CombinedOutput(); err != nil {
		t.Skipf("pip not importable by %s: %v %s", py, err, bytes.TrimSpace(out))
	}
	dir := t.TempDir()
	var paths []string
	files := map[string]*File{}
	for i, line := range pipLines {
		f := readLine(t, dir, i, line)
		paths = append(paths, f.Files[0])
		files[f.Files[0]] = f
	}
	cmd := exec.Command(py, append([]string{"-c", pipOracle}, paths...)...)
	cmd.Env = append(os.Environ(), "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("pip oracle: %v\n%s", err, stderr.String())
	}
	var oracle map[string]struct {
		Error string `json:"error"`
		Rows  []struct {
			Name  string   `json:"name"`
			Specs []string `json:"specs"`
			Error string   `json:"error"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(raw, &oracle); err != nil {
		t.Fatalf("pip oracle output: %v\n%s", err, raw)
	}
	for i, p := range paths {
		line, f, o := pipLines[i], files[p], oracle[p]
		refused := o.Error
		if len(o.Rows) == 1 && o.Rows[0].Error != "" {
			refused = o.Rows[0].Error
		}
		if refused != "" {
			for _, e := range f.Entries {
				if e.Version != "" {
					t.Errorf("%q: pip refuses it (%s), we list %s %s", line, refused, e.Name, e.Version)
				}
			}
			continue
		}
		if len(o.Rows) != 1 || len(f.Entries) != 1 {
			t.Errorf("%q: pip reads %+v, we read %+v (problems %v)", line, o.Rows, f.Entries, f.Problems)
			continue
		}
		row, e := o.Rows[0], f.Entries[0]
		if pyname.Normalize(row.Name) != e.Name {
			t.Errorf("%q: pip names %q, we %q", line, row.Name, e.Name)
		}
		want := ""
		if len(row.Specs) == 1 && len(row.Specs[0]) > 2 && row.Specs[0][:2] == "==" && row.Specs[0][2] != '=' {
			// A legacy version ("3.0.0#comment") is installed by pip but
			// is not a version.
			want, _ = versions.CanonicalPEP440(row.Specs[0][2:])
		}
		if strings.HasSuffix(e.Req.URL, ".whl") {
			// A wheel's file name states its version.
			_, want, _ = NameFromURL(e.Req.URL)
		}
		if e.Version != want {
			t.Errorf("%q: pip pins %q, we list version %q", line, row.Specs, e.Version)
		}
	}
}
