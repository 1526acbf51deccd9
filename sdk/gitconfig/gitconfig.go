// Package gitconfig reads a value from the user's git configuration outside
// any repository, as a PM needs it when it talks to the network as git's
// own tools would: cargo takes git's http.proxy (when its own http.proxy is
// unset) from libgit2's git_config_open_default, and git itself uses
// http.proxy before the environment's proxy. Both read, on Unix, the
// system file (/etc/gitconfig), the XDG file ($XDG_CONFIG_HOME/git/config,
// else $HOME/.config/git/config) and the global file ($HOME/.gitconfig),
// the later winning, and within a file the last setting winning.
//
// The syntax is git's: [section] and [section "subsection"] headers (and
// the deprecated [section.subsection]), with names case-insensitive and the
// rest of a header's line read as more of the file; "name = value" lines,
// a name alone meaning the value ""; values with double quotes, the
// escapes \", \\, \n, \t and \b, a backslash ending a line continuing it,
// and comments from # or ; outside quotes; a UTF-8 byte order mark.
// include.path is followed (relative to the including file, ~/ from the
// home directory; a missing file is passed over), as libgit2 follows it;
// includeIf is not, as its conditions name a repository and
// git_config_open_default has none.
//
// Reading is bounded: a file over MaxFile bytes, includes nested deeper
// than MaxIncludeDepth or more than MaxFiles files read for one lookup are
// errors. An error (a file that cannot be read or parsed) is what makes
// libgit2's git_config_open_default fail, and cargo then uses no value of
// git's at all.
package gitconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// MaxFile is the size cap of one configuration file (1 MiB; real ones are
// a few hundred bytes).
const MaxFile = pkgfile.MaxManifest

// MaxIncludeDepth is how deep include.path may nest, as in git and
// libgit2 (10): an include cycle ends there, with an error.
const MaxIncludeDepth = 10

// MaxFiles caps how many files (included ones counted) one lookup reads.
const MaxFiles = 64

// Files returns the files git_config_open_default reads on Unix, lowest
// priority first: system (the system-wide file, "" for none), the XDG file
// ($XDG_CONFIG_HOME/git/config when xdgConfigHome is set, else
// home/.config/git/config) and home/.gitconfig. An empty home leaves out
// the files under it.
func Files(system, home, xdgConfigHome string) []string {
	var out []string
	if system != "" {
		out = append(out, system)
	}
	switch {
	case xdgConfigHome != "":
		out = append(out, filepath.Join(xdgConfigHome, "git", "config"))
	case home != "":
		out = append(out, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// Lookup returns the value of key ("section.name", without a subsection:
// "http.proxy") in files, lowest priority first, as git_config_get_string
// does: the last setting read wins, and a name without "=" is found with
// the value "". Files that do not exist are passed over; home expands
// "~/" in include.path. Errors name the file (and line) at fault.
func Lookup(files []string, home, key string) (value string, found bool, err error) {
	i := strings.LastIndexByte(key, '.')
	if i <= 0 || i == len(key)-1 {
		return "", false, fmt.Errorf("gitconfig: %q is not a section.name key", key)
	}
	l := &lookup{section: strings.ToLower(key[:i]), name: strings.ToLower(key[i+1:]), home: home}
	for _, f := range files {
		if err := l.read(f, 0); err != nil {
			return "", false, err
		}
	}
	return l.value, l.found, nil
}

type lookup struct {
	section, name, home string
	value               string
	found               bool
	files               int
}

// read reads the file at path, included at the given depth (0 for a file
// of Files).
func (l *lookup) read(path string, depth int) error {
	data, err := pkgfile.ReadUserFile(path, MaxFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("git configuration: %w", err)
	}
	if l.files++; l.files > MaxFiles {
		return fmt.Errorf("git configuration: %s: more than %d files read through include.path", path, MaxFiles)
	}
	return Parse(path, data, func(e Entry) error {
		if e.Section == l.section && e.Subsection == "" && e.Key == l.name {
			l.value, l.found = e.Value, true
		}
		if e.Section != "include" || e.Subsection != "" || e.Key != "path" {
			return nil
		}
		if !e.HasValue {
			return fmt.Errorf("git configuration: %s:%d: include.path has no value", path, e.Line)
		}
		if depth >= MaxIncludeDepth {
			return fmt.Errorf("git configuration: %s:%d: include.path nested more than %d deep", path, e.Line, MaxIncludeDepth)
		}
		inc := l.includePath(path, e.Value)
		if inc == "" {
			return nil
		}
		return l.read(inc, depth+1)
	})
}

// includePath resolves include.path's value v found in the file from: "~/"
// from the home directory, a relative path from from's directory. It
// returns "" for what cannot be resolved ("~user/", "~/" without a home,
// an empty path), which is passed over.
func (l *lookup) includePath(from, v string) string {
	switch {
	case v == "":
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if l.home == "" {
			return ""
		}
		return filepath.Join(l.home, strings.TrimPrefix(v, "~"))
	case strings.HasPrefix(v, "~"):
		return ""
	case filepath.IsAbs(v):
		return v
	}
	return filepath.Join(filepath.Dir(from), v)
}

// Entry is one "name = value" setting of a configuration file.
type Entry struct {
	// Section is the section's name in lower case ("http"); for a
	// deprecated [section.subsection] header, the whole name in lower
	// case ("http.example"); "" for a setting before any header, which
	// git accepts (as a key of no section).
	Section string
	// Subsection is a [section "subsection"] header's subsection, as
	// written (it is case-sensitive), else "".
	Subsection string
	// Key is the name, in lower case.
	Key string
	// Value is the value, unquoted and unescaped; "" when HasValue is
	// false.
	Value string
	// HasValue is false for a name without "=".
	HasValue bool
	// Line is the line the name is on (from 1).
	Line int
}

// Parse calls fn with each setting of the configuration file data (named
// name in errors), in order, and stops at fn's first error. Syntax errors
// name the file and line.
func Parse(name string, data []byte, fn func(Entry) error) error {
	p := &parser{name: name, data: data, line: 1}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		p.pos = 3
	}
	var section, sub string // "" before the first header, as git reads it
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return nil
		case c == '\n' || isSpace(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, ss, err := p.header()
			if err != nil {
				return err
			}
			section, sub = s, ss
		case isAlpha(c):
			line := p.line
			key, value, has, err := p.setting(c)
			if err != nil {
				return err
			}
			if err := fn(Entry{Section: section, Subsection: sub, Key: key, Value: value, HasValue: has, Line: line}); err != nil {
				return err
			}
		default:
			return p.errorf(p.line, "unexpected %q", c)
		}
	}
}

type parser struct {
	name string
	data []byte
	pos  int
	line int
}

// next returns the next byte, with "\r\n" read as "\n"; ok is false at the
// end.
func (p *parser) next() (c byte, ok bool) {
	if p.pos >= len(p.data) {
		return 0, false
	}
	c = p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c, true
}

// nextOrNewline is next with the end read as "\n", as git reads it.
func (p *parser) nextOrNewline() byte {
	c, ok := p.next()
	if !ok {
		return '\n'
	}
	return c
}

func (p *parser) skipLine() {
	for {
		if c, ok := p.next(); !ok || c == '\n' {
			return
		}
	}
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("git configuration: %s:%d: %s", p.name, line, fmt.Sprintf(format, args...))
}

// header reads a section header after its "[".
func (p *parser) header() (section, sub string, err error) {
	line := p.line
	var b strings.Builder
	for {
		c, ok := p.next()
		switch {
		case !ok || c == '\n':
			return "", "", p.errorf(line, "unterminated section header")
		case c == ']':
			if b.Len() == 0 {
				return "", "", p.errorf(line, "empty section name")
			}
			return b.String(), "", nil
		case isSpace(c):
			if b.Len() == 0 {
				return "", "", p.errorf(line, "empty section name")
			}
			sub, err := p.subsection(line)
			return b.String(), sub, err
		case isKeyChar(c) || c == '.':
			b.WriteByte(lower(c))
		default:
			return "", "", p.errorf(line, "invalid character %q in a section name", c)
		}
	}
}

// subsection reads `"subsection"]` after a section name and spaces.
func (p *parser) subsection(line int) (string, error) {
	c, ok := p.next()
	for ok && isSpace(c) && c != '\n' {
		c, ok = p.next()
	}
	if !ok || c != '"' {
		return "", p.errorf(line, "a section name followed by something other than a quoted subsection")
	}
	var b strings.Builder
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			return "", p.errorf(line, "unterminated subsection")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, ok = p.next(); !ok || c == '\n' {
				return "", p.errorf(line, "unterminated subsection")
			}
		}
		b.WriteByte(c)
	}
	if c, ok := p.next(); !ok || c != ']' {
		return "", p.errorf(line, "a subsection not followed by \"]\"")
	}
	return b.String(), nil
}

// setting reads a "name [= value]" line whose name starts with first.
func (p *parser) setting(first byte) (key, value string, has bool, err error) {
	line := p.line
	var b strings.Builder
	b.WriteByte(lower(first))
	c := p.nextOrNewline()
	for isKeyChar(c) {
		b.WriteByte(lower(c))
		c = p.nextOrNewline()
	}
	for c == ' ' || c == '\t' {
		c = p.nextOrNewline()
	}
	key = b.String()
	switch c {
	case '\n':
		return key, "", false, nil
	case '=':
		value, err = p.value(line)
		return key, value, err == nil, err
	}
	return "", "", false, p.errorf(line, "invalid character %q after the name %q", c, key)
}

// value reads a value after its "=", as git's parse_value does.
func (p *parser) value(line int) (string, error) {
	var b strings.Builder
	quoted, comment := false, false
	spaces := 0
	for {
		c := p.nextOrNewline()
		if c == '\n' {
			if quoted {
				return "", p.errorf(line, "unterminated quoted value")
			}
			return b.String(), nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quoted {
			if b.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			switch e := p.nextOrNewline(); e {
			case '\n':
				// A continuation: the value goes on on the next line.
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(e)
			default:
				return "", p.errorf(line, "invalid escape \\%c in a value", e)
			}
		case '"':
			quoted = !quoted
		default:
			b.WriteByte(c)
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
