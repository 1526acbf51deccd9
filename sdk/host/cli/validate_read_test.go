//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/internal/disktree"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/regcache"
)

// TestValidateReadsAsThePM: validate reads every file of a package, a
// workspace or a registry as the PM serving it reads it (sdk/pkgfile): a
// file the PM refuses (a link leading out of the package, one over the
// manifest cap, a directory or a FIFO where a file is expected) is a
// problem naming the file and the cause, never read, truncated or dropped
// without a word.
func TestValidateReadsAsThePM(t *testing.T) {
	outside := disktree.Write(t, map[string]string{
		"SYMPOSIUM.toml":    "depends-on = \"serde\"\n",
		"Cargo.toml":        "[package]\nname = \"evil\"\nversion = \"1.0.0\"\n",
		"skills/s/SKILL.md": "---\nname: s\ndescription: outside\n---\n",
	})
	const (
		cargo   = "[package]\nname = \"c\"\nversion = \"0.1.0\"\n\n[package.metadata.symposium]\ndepends-on = \"serde\"\n"
		npm     = `{"name": "p", "version": "1.0.0", "symposium": {"depends-on": "react"}}`
		py      = "[project]\nname = \"py\"\nversion = \"1.0\"\n\n[tool.symposium]\ndepends-on = \"pytest\"\n"
		toml    = "depends-on = \"serde\"\n"
		skillMD = "---\nname: s\ndescription: a skill\n---\n"
	)
	// Valid documents over the 1 MiB cap the PMs read manifests with (and
	// under the 4 MiB validate used to read silently).
	pad := strings.Repeat("#"+strings.Repeat(" ", 78)+"\n", (pkgfile.MaxManifest+1<<20)/80)
	bigTOML := toml + pad
	bigJSON := npm + strings.Repeat(" ", pkgfile.MaxManifest)
	bigSkill := skillMD + pad
	outsideTOML := filepath.Join(outside, "SYMPOSIUM.toml")
	for _, tc := range []struct {
		name  string
		files map[string]string
		arg   string // the path given, relative to the tree
		want  string // a line of the output, after the tree's path and "/"
	}{
		{"crate SYMPOSIUM.toml links out", map[string]string{"Cargo.toml": cargo, "SYMPOSIUM.toml": "->" + outsideTOML}, ".",
			"SYMPOSIUM.toml: cannot be read (a link leading out of the package): the cargo PM does not offer this package"},
		{"crate SYMPOSIUM.toml links out, relative", map[string]string{"c/Cargo.toml": cargo, "c/SYMPOSIUM.toml": "->../SYMPOSIUM.toml", "SYMPOSIUM.toml": toml}, "c",
			"c/SYMPOSIUM.toml: cannot be read (a link leading out of the package): the cargo PM does not offer this package"},
		{"crate SYMPOSIUM.toml oversize", map[string]string{"Cargo.toml": cargo, "SYMPOSIUM.toml": bigTOML}, ".",
			"SYMPOSIUM.toml: cannot be read (" + sizeWords(len(bigTOML)) + "): the cargo PM does not offer this package"},
		{"crate SYMPOSIUM.toml a directory", map[string]string{"Cargo.toml": cargo, "SYMPOSIUM.toml/x": toml}, ".",
			"SYMPOSIUM.toml: cannot be read (not a regular file (a directory)): the cargo PM does not offer this package"},
		{"Cargo.toml links out", map[string]string{"Cargo.toml": "->" + filepath.Join(outside, "Cargo.toml")}, ".",
			"Cargo.toml: cannot be read (a link leading out of the package): the cargo PM ignores the [package.metadata.symposium] in Cargo.toml, and nothing else of this crate is checked"},
		{"Cargo.toml oversize", map[string]string{"Cargo.toml": cargo + pad}, "Cargo.toml",
			"Cargo.toml: cannot be read (" + sizeWords(len(cargo+pad)) + "): the cargo PM ignores the [package.metadata.symposium] in Cargo.toml, and nothing else of this crate is checked"},
		{"package.json oversize", map[string]string{"package.json": bigJSON}, ".",
			`package.json: cannot be read (` + sizeWords(len(bigJSON)) + `): the npm PM ignores the "symposium" field in package.json, and nothing else of this npm package is checked`},
		{"npm SYMPOSIUM.toml a directory", map[string]string{"package.json": npm, "SYMPOSIUM.toml": "dir"}, ".",
			"SYMPOSIUM.toml: cannot be read (not a regular file (a directory)): the npm PM ignores this layer"},
		{"npm SYMPOSIUM.toml a FIFO", map[string]string{"package.json": npm, "SYMPOSIUM.toml": "fifo"}, ".",
			"SYMPOSIUM.toml: cannot be read (not a regular file (a FIFO)): the npm PM ignores this layer"},
		{"pyproject.toml a directory", map[string]string{"pyproject.toml": "dir"}, ".",
			"pyproject.toml: cannot be read (not a regular file (a directory)): the pypi PM ignores the [tool.symposium] in pyproject.toml, and nothing else of this python distribution is checked"},
		{"pyproject SYMPOSIUM.toml links out", map[string]string{"pyproject.toml": py, "SYMPOSIUM.toml": "->" + outsideTOML}, ".",
			"SYMPOSIUM.toml: cannot be read (a link leading out of the package): the pypi PM does not offer this package"},
		{"distribution SYMPOSIUM.toml links out", map[string]string{
			"pkg-1.0.dist-info/METADATA": "Name: pkg\n", "pkg-1.0.dist-info/top_level.txt": "pkg\n",
			"pkg/SYMPOSIUM.toml": "->" + outsideTOML}, ".",
			"pkg/SYMPOSIUM.toml: cannot be read (a link leading out of the package): the pypi PM does not offer this package"},
		{"distribution SYMPOSIUM.toml oversize", map[string]string{
			"pkg-1.0.dist-info/METADATA": "Name: pkg\n", "pkg-1.0.dist-info/entry_points.txt": "[symposium]\nmain = pkg\n",
			"pkg/SYMPOSIUM.toml": bigTOML}, ".",
			"pkg/SYMPOSIUM.toml: cannot be read (" + sizeWords(len(bigTOML)) + "): the pypi PM does not offer this package"},
		{"SKILL.md oversize", map[string]string{"package.json": npm, "skills/s/SKILL.md": bigSkill}, ".",
			"skills/s/SKILL.md: cannot be read: " + sizeWords(len(bigSkill))},
		{"skills links out", map[string]string{"package.json": npm, "skills": "->" + filepath.Join(outside, "skills")}, ".",
			`package.json: skills[0]: skill group "skills": skills leads outside the plugin root; left out`},
		{"workspace SYMPOSIUM.toml links out", map[string]string{".symposium/config.toml": "", "SYMPOSIUM.toml": "->" + outsideTOML}, ".",
			"SYMPOSIUM.toml: cannot be read: a link leading out of the package"},
		{"workspace SYMPOSIUM.toml oversize", map[string]string{".symposium/config.toml": "", "SYMPOSIUM.toml": bigTOML}, ".",
			"SYMPOSIUM.toml: cannot be read: " + sizeWords(len(bigTOML))},
		{"registry entry oversize", map[string]string{"a/SYMPOSIUM.toml": toml, "b/SYMPOSIUM.toml": bigTOML}, ".",
			"b/SYMPOSIUM.toml: cannot be read: " + sizeWords(len(bigTOML))},
		{"registry entry links out", map[string]string{"a/SYMPOSIUM.toml": toml, "b/SYMPOSIUM.toml": "->" + outsideTOML}, ".",
			"b/SYMPOSIUM.toml: cannot be read: a link leading out of the package"},
		{"manifest file oversize", map[string]string{"m.toml": bigTOML}, "m.toml",
			"m.toml: cannot be read: " + sizeWords(len(bigTOML))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := disktree.Write(t, tc.files)
			code, out, errOut := runCmd(t, cmdValidate, filepath.Join(dir, tc.arg))
			want := filepath.Join(dir, tc.want)
			if code != ExitFailure || !hasLine(out, want) {
				t.Errorf("exit %d, want %d and the line\n%s\nstdout:\n%sstderr:\n%s", code, ExitFailure, want, out, errOut)
			}
			if strings.Contains(out, outside) {
				t.Errorf("a file outside the package was reached:\n%s", out)
			}
		})
	}
}

// TestValidateLinksInside: a link that stays inside the package (or the
// registry) is followed, as the PMs follow it.
func TestValidateLinksInside(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		arg   string
	}{
		"crate":    {map[string]string{"Cargo.toml": "[package]\nname = \"c\"\nversion = \"0.1.0\"\n", "SYMPOSIUM.toml": "->conf/plugin.toml", "conf/plugin.toml": "depends-on = \"serde\"\n"}, "."},
		"registry": {map[string]string{"a/SYMPOSIUM.toml": "name = \"a\"\ndepends-on = \"serde\"\n", "b/SYMPOSIUM.toml": "->../common/b.toml", "common/b.toml": "name = \"b\"\ndepends-on = \"serde\"\n"}, "."},
	} {
		t.Run(name, func(t *testing.T) {
			dir := disktree.Write(t, tc.files)
			if code, out, errOut := runCmd(t, cmdValidate, filepath.Join(dir, tc.arg)); code != ExitOK {
				t.Errorf("exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// TestValidateSiblingSyntaxError: a SYMPOSIUM.toml beside a package file
// that is not TOML is reported at its own line, not at the package file's.
func TestValidateSiblingSyntaxError(t *testing.T) {
	dir := disktree.Write(t, map[string]string{
		"Cargo.toml":     "[package]\nname = \"c\"\nversion = \"0.1.0\"\n",
		"SYMPOSIUM.toml": "depends-on = \"serde\"\n\n= bad\n",
	})
	code, out, _ := runCmd(t, cmdValidate, dir)
	want := filepath.Join(dir, "SYMPOSIUM.toml") + ":3: invalid TOML"
	if code != ExitFailure || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %d and %q\n%s", code, ExitFailure, want, out)
	}
}

// TestValidateUnreadable: a file the PM cannot open (mode 000) is a
// problem naming it and the cause.
func TestValidateUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads a file of mode 000: the unreadable case cannot be made")
	}
	for name, files := range map[string]map[string]string{
		"Cargo.toml":     {"Cargo.toml": "[package]\nname = \"c\"\nversion = \"0.1.0\"\n"},
		"SYMPOSIUM.toml": {"package.json": `{"name": "p", "version": "1.0.0"}`, "SYMPOSIUM.toml": "depends-on = \"x\"\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := disktree.Write(t, files)
			if err := os.Chmod(filepath.Join(dir, name), 0); err != nil {
				t.Fatal(err)
			}
			code, out, _ := runCmd(t, cmdValidate, dir)
			want := filepath.Join(dir, name) + ": cannot be read (permission denied)"
			if code != ExitFailure || !strings.Contains(out, want) {
				t.Errorf("exit %d, want %d and %q\n%s", code, ExitFailure, want, out)
			}
		})
	}
}

// sizeWords is how pkgfile states a file of n bytes over the manifest cap.
func sizeWords(n int) string {
	return strconv.Itoa(n) + " bytes, over the size cap of " + strconv.Itoa(pkgfile.MaxManifest) + " bytes"
}

// hasLine reports whether out holds line as a whole line.
func hasLine(out, line string) bool {
	for l := range strings.Lines(out) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}

// TestManifestReadsAsThePM: manifest reads FILE as a PM reads a manifest
// (sdk/pkgfile), never unbounded: a file over the 1 MiB cap is refused
// before it is read, a FIFO without a writer is refused without waiting
// for one (os.ReadFile waited forever), a device such as /dev/zero is
// never read, and a link leading out of FILE's directory is not followed.
// Each is exit 1 and one line naming the file and the cause.
func TestManifestReadsAsThePM(t *testing.T) {
	const toml = "name = \"good\"\ndepends-on = \"serde\"\n"
	pad := strings.Repeat("#"+strings.Repeat(" ", 78)+"\n", (pkgfile.MaxManifest+1<<20)/80)
	outside := disktree.Write(t, map[string]string{"SYMPOSIUM.toml": toml})
	dir := disktree.Write(t, map[string]string{
		"big/SYMPOSIUM.toml":      toml + pad,
		"big/SKILL.md":            "---\nname: s\ndescription: d\n---\n" + pad,
		"big/Cargo.toml":          "[package]\nname = \"c\"\nversion = \"0.1.0\"\n" + pad,
		"fifo/SYMPOSIUM.toml":     "fifo",
		"fifo/Cargo.toml":         "fifo",
		"dir/SYMPOSIUM.toml":      "dir",
		"link/SYMPOSIUM.toml":     "->" + filepath.Join(outside, "SYMPOSIUM.toml"),
		"inside/SYMPOSIUM.toml":   "->conf/plugin.toml",
		"inside/conf/plugin.toml": toml,
	})
	for _, tc := range []struct {
		file, cause string
	}{
		{"big/SYMPOSIUM.toml", sizeWords(len(toml + pad))},
		{"big/SKILL.md", sizeWords(len("---\nname: s\ndescription: d\n---\n" + pad))},
		{"big/Cargo.toml", sizeWords(len("[package]\nname = \"c\"\nversion = \"0.1.0\"\n" + pad))},
		{"fifo/SYMPOSIUM.toml", "not a regular file (a FIFO)"},
		{"fifo/Cargo.toml", "not a regular file (a FIFO)"},
		{"dir/SYMPOSIUM.toml", "not a regular file (a directory)"},
		{"link/SYMPOSIUM.toml", "a link leading out of the package"},
	} {
		file := filepath.Join(dir, tc.file)
		code, out, errOut := runCmd(t, cmdManifest, file)
		if want := "symposium-pm manifest: " + file + ": " + tc.cause + "\n"; code != ExitFailure || out != "" || errOut != want {
			t.Errorf("manifest %s: exit %d, want %d and stderr %q\nstdout %q\nstderr %q", tc.file, code, ExitFailure, want, out, errOut)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		code, _, errOut := runCmd(t, cmdManifest, "/dev/zero")
		if want := "symposium-pm manifest: /dev/zero: not a regular file (a character device)\n"; code != ExitFailure || errOut != want {
			t.Errorf("manifest /dev/zero: exit %d, stderr %q, want %d and %q", code, errOut, ExitFailure, want)
		}
	}
	// A link that stays inside FILE's directory is followed.
	if code, out, errOut := runCmd(t, cmdManifest, filepath.Join(dir, "inside/SYMPOSIUM.toml")); code != ExitOK || !strings.Contains(out, `"name":"good"`) {
		t.Errorf("manifest through a link inside: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// TestReadsNeverWaitOnAFIFO: the files validate and status open that are
// not manifests are opened as regular files only (sdk/pkgfile), never
// waiting for a FIFO's writer as os.Open did: a .whl given to validate
// (exit 1, naming it), and the state.json the registry PM writes in the
// cache (the registry counts as never fetched).
func TestReadsNeverWaitOnAFIFO(t *testing.T) {
	dir := disktree.Write(t, map[string]string{
		"pkg-1.0-py3-none-any.whl":              "fifo",
		"cache/reg/reg-a/" + regcache.StateFile: "fifo",
	})
	whl := filepath.Join(dir, "pkg-1.0-py3-none-any.whl")
	code, out, errOut := runCmd(t, cmdValidate, whl)
	if want := whl + ": not a regular file (a FIFO)"; code != ExitFailure || !hasLine(out, want) {
		t.Errorf("validate a FIFO .whl: exit %d, want %d and the line %q\nstdout:\n%sstderr:\n%s", code, ExitFailure, want, out, errOut)
	}
	if got := registryCache(filepath.Join(dir, "cache"), config.Registry{Name: "reg", Git: "https://x/reg"}); got != (cachedRegistry{}) {
		t.Errorf("registryCache with a FIFO state = %+v, want never fetched", got)
	}
}
