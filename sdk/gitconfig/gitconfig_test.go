package gitconfig

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// valueCases are configuration files and what http.proxy is in each
// ("-" for unset, "error" for a file git refuses).
var valueCases = []struct {
	name, file, want string
}{
	{"plain", "[http]\n\tproxy = http://p.example:3128\n", "http://p.example:3128"},
	{"upper-case names", "[HTTP]\n\tProxy = http://p:1\n", "http://p:1"},
	{"last wins", "[http]\nproxy = http://a:1\n[http]\nproxy = http://b:1\n", "http://b:1"},
	{"subsection is another key", "[http \"https://corp.example\"]\n\tproxy = http://p:1\n", "-"},
	{"deprecated subsection is another key", "[http.corp]\n\tproxy = http://p:1\n", "-"},
	{"other section", "[https]\nproxy = http://p:1\n", "-"},
	{"quoted with comment", "[http]\nproxy = \"http://p:1\" ; the corporate one\n", "http://p:1"},
	{"hash comment", "[http]\nproxy = http://p:1 # note\n", "http://p:1"},
	{"quoted hash", "[http]\nproxy = \"http://p:1/#x\"\n", "http://p:1/#x"},
	{"trailing spaces", "[http]\nproxy = http://p:1   \t\n", "http://p:1"},
	{"inner spaces", "[http]\nproxy = a  b\n", "a  b"},
	{"crlf", "[http]\r\nproxy = http://p:1\r\n", "http://p:1"},
	{"bom", "\xEF\xBB\xBF[http]\nproxy = http://p:1\n", "http://p:1"},
	{"continuation", "[http]\nproxy = http://p\\\n:1\n", "http://p:1"},
	{"escapes", "[http]\nproxy = \"a\\\\b\\\"c\\td\"\n", "a\\b\"c\td"},
	{"key on the header's line", "[http] proxy = http://p:1\n", "http://p:1"},
	{"no value", "[http]\nproxy\n", ""},
	{"empty value", "[http]\nproxy =\n", ""},
	{"empty quoted", "[http]\nproxy = \"\"\n", ""},
	{"no final newline", "[http]\nproxy=http://p:1", "http://p:1"},
	{"comments and blank lines", "# top\n; also\n\n[http] ; c\n\n  proxy = x\n", "x"},
	{"subsection escapes", "[http \"a\\\"b\"]\nproxy = y\n[http]\nproxy = x\n", "x"},
	{"invalid escape", "[http]\nproxy = a\\qb\n", "error"},
	{"unterminated quote", "[http]\nproxy = \"abc\n", "error"},
	{"outside a section", "proxy = x\n", "-"},
	{"bad header", "[http\nproxy = x\n", "error"},
	{"bad key", "[http]\npro_xy = x\n", "error"},
	{"key then junk", "[http]\nproxy x\n", "error"},
	{"digit key", "[http]\n1proxy = x\n", "error"},
}

func TestLookup(t *testing.T) {
	for _, tc := range valueCases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(f, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := lookupString(t, []string{f}, "", "http.proxy"); got != tc.want {
				t.Errorf("http.proxy = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLookupAgainstGit gives valueCases to git itself (skipped without
// git): `git config --file F --get http.proxy` must agree.
func TestLookupAgainstGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range valueCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "config")
			if err := os.WriteFile(f, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(git, "config", "--file", f, "--get", "http.proxy")
			cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
			out, err := cmd.Output()
			got := strings.TrimSuffix(string(out), "\n")
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && ee.ExitCode() == 1:
				got = "-"
			case errors.As(err, &ee):
				got = "error"
			default:
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("git says %q, the table %q", got, tc.want)
			}
		})
	}
}

// lookupString is Lookup's answer as valueCases write it.
func lookupString(t *testing.T, files []string, home, key string) string {
	t.Helper()
	v, found, err := Lookup(files, home, key)
	switch {
	case err != nil:
		if !strings.Contains(err.Error(), "git configuration: ") {
			t.Errorf("error %q does not say what it is about", err)
		}
		return "error"
	case !found:
		return "-"
	}
	return v
}

// TestFiles: libgit2's files and their order, lowest priority first.
func TestFiles(t *testing.T) {
	got := strings.Join(Files("/etc/gitconfig", "/home/u", ""), " ")
	if want := "/etc/gitconfig /home/u/.config/git/config /home/u/.gitconfig"; got != want {
		t.Errorf("Files = %s, want %s", got, want)
	}
	got = strings.Join(Files("", "/home/u", "/xdg"), " ")
	if want := "/xdg/git/config /home/u/.gitconfig"; got != want {
		t.Errorf("Files with XDG_CONFIG_HOME = %s, want %s", got, want)
	}
	if got := Files("", "", ""); len(got) != 0 {
		t.Errorf("Files without home = %v", got)
	}
}

// TestLookupPriority: the global file wins over the XDG one, which wins
// over the system one; a missing file is passed over; an unparsable one
// fails the whole lookup, as it fails libgit2's git_config_open_default.
func TestLookupPriority(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sys := write("etc/gitconfig", "[http]\nproxy = system\n")
	xdg := write("xdg/git/config", "[http]\nproxy = xdg\n")
	global := write("home/.gitconfig", "[user]\nname = x\n")
	missing := filepath.Join(dir, "nowhere", "config")
	if got := lookupString(t, []string{sys, missing, xdg, global}, "", "http.proxy"); got != "xdg" {
		t.Errorf("xdg over system: %q", got)
	}
	write("home/.gitconfig", "[http]\nproxy = global\n")
	if got := lookupString(t, []string{sys, xdg, global}, "", "http.proxy"); got != "global" {
		t.Errorf("global over xdg: %q", got)
	}
	if got := lookupString(t, []string{sys, os.DevNull}, "", "http.proxy"); got != "system" {
		t.Errorf("with GIT_CONFIG_GLOBAL=/dev/null, as git reads it (empty): %q", got)
	}
	write("etc/gitconfig", "[http\n")
	if got := lookupString(t, []string{sys, xdg, global}, "", "http.proxy"); got != "error" {
		t.Errorf("with a malformed system file: %q", got)
	}
	write("etc/gitconfig", strings.Repeat("#", MaxFile+1))
	if got := lookupString(t, []string{sys, xdg, global}, "", "http.proxy"); got != "error" {
		t.Errorf("with an oversize system file: %q", got)
	}
}

// TestLookupInclude: include.path is read where it stands (later settings
// win over it, it wins over earlier ones), relative to the including file
// or from the home directory; a missing include is passed over; a cycle
// ends in an error at MaxIncludeDepth; includeIf is not followed.
func TestLookupInclude(t *testing.T) {
	home := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("conf/proxy.inc", "[http]\nproxy = included\n")
	write("home.inc", "[http]\nproxy = from-home\n")
	for _, tc := range []struct{ name, file, want string }{
		{"relative", "[include]\npath = conf/proxy.inc\n", "included"},
		{"later wins", "[include]\npath = conf/proxy.inc\n[http]\nproxy = after\n", "after"},
		{"include wins", "[http]\nproxy = before\n[include]\npath = conf/proxy.inc\n", "included"},
		{"home", "[include]\npath = ~/home.inc\n", "from-home"},
		{"absolute", "[include]\npath = " + filepath.Join(home, "home.inc") + "\n", "from-home"},
		{"missing", "[http]\nproxy = kept\n[include]\npath = nowhere.inc\n", "kept"},
		{"includeIf", "[includeIf \"gitdir:/\"]\npath = conf/proxy.inc\n", "-"},
		{"cycle", "[include]\npath = .gitconfig\n", "error"},
		{"no value", "[include]\npath\n", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := write(".gitconfig", tc.file)
			if got := lookupString(t, []string{f}, home, "http.proxy"); got != tc.want {
				t.Errorf("http.proxy = %q, want %q", got, tc.want)
			}
		})
	}
	// Fan-out: every file includes the next level twice.
	for i := 0; i < 8; i++ {
		write("fan"+string(rune('0'+i)), "[include]\npath = fan"+string(rune('1'+i))+"\npath = fan"+string(rune('1'+i))+"\n")
	}
	write("fan8", "[http]\nproxy = deep\n")
	if got := lookupString(t, []string{filepath.Join(home, "fan0")}, home, "http.proxy"); got != "error" {
		t.Errorf("2^8 files through include.path: %q, want an error past %d files", got, MaxFiles)
	}
}

func TestLookupBadKey(t *testing.T) {
	for _, k := range []string{"proxy", ".proxy", "http."} {
		if _, _, err := Lookup(nil, "", k); err == nil {
			t.Errorf("Lookup(%q) accepted", k)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range valueCases {
		f.Add([]byte(tc.file))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := Parse("fuzz", data, func(e Entry) error {
			n++
			if e.Key == "" || e.Line < 1 || (!e.HasValue && e.Value != "") {
				t.Fatalf("entry %+v", e)
			}
			return nil
		})
		if err != nil && !strings.Contains(err.Error(), "fuzz:") {
			t.Fatalf("error without the file: %v", err)
		}
		if n > len(data) {
			t.Fatalf("%d entries from %d bytes", n, len(data))
		}
	})
}
