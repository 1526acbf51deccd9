package requirement

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/symposium-dev/symposium-pm/pm-pypi/marker"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Entry is one requirement line of a requirements file.
type Entry struct {
	// File and Line locate the line (the first physical line of a
	// continued one).
	File string
	Line int
	// Name is the PEP 503 normalized distribution name.
	Name string
	// Req is the parsed requirement; for path, URL and editable lines it
	// holds only the name (and URL).
	Req Requirement
	// Version is the exact version the line pins (== or ===, or a wheel
	// file name), or "".
	Version string
	// Editable is set for -e lines.
	Editable bool
	// Constraint is set for lines read from a -c constraints file.
	Constraint bool
	// Hashes are the --hash values, as written ("sha256:...").
	Hashes []string
}

// File is the result of reading a requirements file and its includes.
type File struct {
	// Entries are the requirement lines, in reading order, includes
	// expanded in place.
	Entries []Entry
	// Files lists every file read, the top one first.
	Files []string
	// IndexURL and ExtraIndexURLs are the -i / --extra-index-url options.
	IndexURL       string
	ExtraIndexURLs []string
	// Problems are the lines that could not be understood; they were
	// skipped.
	Problems []error
	// Warnings are about lines kept with less than they say: a requirement
	// pip reads only with its legacy rules ("asdf==", "Jinja2==3.0.0#c"),
	// or options pip refuses ("-C bar" without KEY=VAL), keeps its name
	// without a version; stray text among options is ignored, as pip does.
	Warnings []error
}

// Options configure ParseFile.
type Options struct {
	// ReadFile reads a file; nil means os.ReadFile.
	ReadFile func(name string) ([]byte, error)
	// Getenv expands ${VAR} references; nil leaves them as written.
	Getenv func(key string) string
	// ProjectName names the project at a local directory (for "-e ./dir"
	// and "./dir" lines); nil leaves those unnamed.
	ProjectName func(dir string) string
}

// MaxIncludeDepth bounds nested -r/-c includes.
const MaxIncludeDepth = 32

// ParseFile reads the requirements file at path with its -r and -c
// includes (relative to the including file; cycles are read once).
func ParseFile(path string, opts Options) (*File, error) {
	if opts.ReadFile == nil {
		return nil, errors.New("requirement.ParseFile: Options.ReadFile is nil")
	}
	f := &File{}
	seen := map[string]bool{}
	if err := f.read(path, false, 0, seen, opts); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) read(path string, constraint bool, depth int, seen map[string]bool, opts Options) error {
	if seen[path] {
		return nil
	}
	seen[path] = true
	data, err := opts.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading requirements file: %w", err)
	}
	f.Files = append(f.Files, path)
	text, err := decodeText(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, ll := range logicalLines(text) {
		line := ll.text
		if opts.Getenv != nil {
			line = expandEnv(line, opts.Getenv)
		}
		if err := f.parseLine(path, ll.num, line, constraint, depth, seen, opts); err != nil {
			f.Problems = append(f.Problems, fmt.Errorf("%s:%d: %w", path, ll.num, err))
		}
	}
	return nil
}

type logicalLine struct {
	num  int
	text string
}

var commentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|\s+)#.*$`) })

// logicalLines joins backslash continuations and strips comments, the way
// pip does.
func logicalLines(text string) []logicalLine {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	phys := strings.Split(text, "\n")
	var out []logicalLine
	var cur []string
	start := 0
	for i, l := range phys {
		l = strings.TrimRight(l, "\r")
		isComment := commentRE().MatchString(l)
		if !strings.HasSuffix(l, `\`) || isComment {
			if isComment {
				l = " " + l
			}
			if cur != nil {
				cur = append(cur, l)
				out = append(out, logicalLine{start + 1, strings.Join(cur, "")})
				cur = nil
			} else {
				out = append(out, logicalLine{i + 1, l})
			}
			continue
		}
		if cur == nil {
			start = i
		}
		cur = append(cur, strings.TrimRight(strings.TrimLeft(l, `\`), `\`))
	}
	if cur != nil {
		out = append(out, logicalLine{start + 1, strings.Join(cur, "")})
	}
	kept := out[:0]
	for _, ll := range out {
		ll.text = strings.TrimSpace(commentRE().ReplaceAllString(ll.text, ""))
		if ll.text != "" {
			kept = append(kept, ll)
		}
	}
	return kept
}

var envRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`) })

func expandEnv(s string, getenv func(string) string) string {
	return envRE().ReplaceAllStringFunc(s, func(m string) string {
		if v := getenv(m[2 : len(m)-1]); v != "" {
			return v
		}
		return m
	})
}

// decodeText decodes UTF-8 (with or without BOM) and BOM-marked UTF-16.
func decodeText(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return string(data[3:]), nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		le := data[0] == 0xFF
		data = data[2:]
		if len(data)%2 != 0 {
			return "", errors.New("truncated UTF-16 text")
		}
		u := make([]uint16, len(data)/2)
		for i := range u {
			if le {
				u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
			} else {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			}
		}
		return string(utf16.Decode(u)), nil
	}
	return string(data), nil
}

// fileOptions take a value and apply to the whole file.
var fileOptions = map[string]bool{
	"-i": true, "--index-url": true, "--extra-index-url": true, "-f": true, "--find-links": true,
	"--trusted-host": true, "--only-binary": true, "--no-binary": true, "--use-feature": true,
	"--progress-bar": true,
}

// fileFlags take no value.
var fileFlags = map[string]bool{
	"--no-index": true, "--pre": true, "--prefer-binary": true, "--require-hashes": true,
}

func (f *File) parseLine(path string, num int, line string, constraint bool, depth int, seen map[string]bool, opts Options) error {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	opt, val, hasVal := splitOption(fields)
	switch opt {
	case "-r", "--requirement", "-c", "--constraint":
		if !hasVal {
			return fmt.Errorf("%s needs a file name", opt)
		}
		if strings.Contains(val, "://") {
			return fmt.Errorf("remote include %q is not read offline", val)
		}
		if depth >= MaxIncludeDepth {
			return fmt.Errorf("includes nested deeper than %d", MaxIncludeDepth)
		}
		inc := val
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(path), filepath.FromSlash(inc))
		}
		isC := constraint || opt == "-c" || opt == "--constraint"
		return f.read(inc, isC, depth+1, seen, opts)
	case "-e", "--editable":
		if !hasVal {
			return fmt.Errorf("%s needs a path or URL", opt)
		}
		e := f.pathEntry(path, num, val, opts)
		if e == nil {
			return fmt.Errorf("cannot tell the distribution name of editable %q (add #egg=name)", val)
		}
		e.Editable = true
		e.Constraint = constraint
		f.Entries = append(f.Entries, *e)
		return nil
	case "-i", "--index-url":
		if hasVal {
			f.IndexURL = val
		}
		return nil
	case "--extra-index-url":
		if hasVal {
			f.ExtraIndexURLs = append(f.ExtraIndexURLs, val)
		}
		return nil
	}
	if fileOptions[opt] || fileFlags[opt] {
		return nil
	}
	if strings.HasPrefix(fields[0], "-") {
		return fmt.Errorf("unknown option %q", fields[0])
	}
	// A requirement, then per-requirement options.
	warn := func(format string, args ...any) {
		f.Warnings = append(f.Warnings, fmt.Errorf("%s:%d: %s", path, num, fmt.Sprintf(format, args...)))
	}
	reqText, hashes, stray, optErr := splitRequirementOptions(line)
	if stray != "" {
		warn("ignoring %q among the options, as pip does", stray)
	}
	var e *Entry
	if looksLikePath(reqText) {
		e = f.pathEntry(path, num, reqText, opts)
		if e == nil {
			return fmt.Errorf("cannot tell the distribution name of %q (add #egg=name)", reqText)
		}
	} else {
		r, err := Parse(reqText)
		if err != nil {
			name, ok := legacyName(reqText)
			if !ok {
				return err
			}
			// pip (with its legacy specifiers) still installs this; the
			// version it names is not one.
			warn("%v; listing %s without a version", err, name)
			r = Requirement{Name: name}
		}
		e = &Entry{File: path, Line: num, Name: r.Normalized(), Req: r}
		if v, ok := r.Pin(); ok {
			e.Version = v
		} else if r.URL != "" {
			if _, v, ok := NameFromURL(r.URL); ok {
				e.Version = v
			}
		}
	}
	if optErr != nil {
		// pip refuses the line (and its whole file): keep only the name.
		warn("%v (pip refuses this line); listing %s without a version", optErr, e.Name)
		e.Version, e.Req.Specifier, hashes = "", "", nil
	}
	e.Hashes = hashes
	e.Constraint = constraint
	f.Entries = append(f.Entries, *e)
	return nil
}

// legacyName returns the distribution name of a requirement that PEP 508
// refuses but pip's legacy specifiers read: a name (and extras) followed by
// comparison clauses whose versions are not PEP 440 ones ("asdf==",
// "Jinja2==3.0.0#comment"), optionally a marker.
func legacyName(s string) (string, bool) {
	i := 0
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	name := s[:i]
	if !pyname.Valid(name) {
		return "", false
	}
	rest := strings.TrimLeft(s[i:], " \t")
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", false
		}
		rest = strings.TrimLeft(rest[end+1:], " \t")
	}
	if semi := strings.IndexByte(rest, ';'); semi >= 0 {
		if _, err := marker.Parse(strings.TrimSpace(rest[semi+1:])); err != nil {
			return "", false
		}
		rest = rest[:semi]
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1]
	}
	if rest == "" {
		return "", false
	}
	for _, clause := range strings.Split(rest, ",") {
		clause = strings.TrimSpace(clause)
		op := ""
		for _, o := range []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"} {
			if strings.HasPrefix(clause, o) {
				op = o
				break
			}
		}
		if op == "" || strings.ContainsAny(strings.TrimSpace(clause[len(op):]), " \t()") {
			return "", false
		}
	}
	return name, true
}

// splitOption splits "--opt=value", "--opt value" and "-rfile" forms.
func splitOption(fields []string) (opt, val string, ok bool) {
	first := fields[0]
	if !strings.HasPrefix(first, "-") {
		return "", "", false
	}
	if k, v, found := strings.Cut(first, "="); found && strings.HasPrefix(first, "--") {
		return k, v, true
	}
	if len(first) > 2 && first[1] != '-' {
		return first[:2], first[2:], true
	}
	if len(fields) > 1 {
		return first, fields[1], true
	}
	return first, "", false
}

// splitRequirementOptions separates the requirement text from trailing
// per-requirement options the way pip does: the options start at the first
// word beginning with "-". It returns the --hash values and the first word
// that is neither an option nor an option's value (pip ignores such words).
// err reports what pip refuses: an option it does not know, a missing
// value, a --config-settings value without KEY=VAL.
func splitRequirementOptions(line string) (req string, hashes []string, stray string, err error) {
	fields := strings.Fields(line)
	n := 0
	for n < len(fields) && !strings.HasPrefix(fields[n], "-") {
		n++
	}
	if n == len(fields) {
		return strings.TrimSpace(line), nil, "", nil
	}
	// The requirement is the line up to that word.
	cut := 0
	for k := 0; k < n; k++ {
		i := strings.Index(line[cut:], fields[k])
		cut += i + len(fields[k])
	}
	req = strings.TrimSpace(line[:cut])
	opts := fields[n:]
	for i := 0; i < len(opts); i++ {
		fl := opts[i]
		if !strings.HasPrefix(fl, "-") {
			if stray == "" {
				stray = fl
			}
			continue
		}
		name, val, hasVal := fl, "", false
		if k, v, ok := strings.Cut(fl, "="); ok && strings.HasPrefix(fl, "--") {
			name, val, hasVal = k, v, true
		} else if strings.HasPrefix(fl, "-C") && len(fl) > 2 {
			name, val, hasVal = "-C", fl[2:], true
		}
		switch name {
		case "--hash", "--config-settings", "-C", "--global-option":
		default:
			if err == nil {
				err = fmt.Errorf("unknown option %q", fl)
			}
			continue
		}
		if !hasVal {
			if i+1 >= len(opts) {
				if err == nil {
					err = fmt.Errorf("%s needs a value", name)
				}
				continue
			}
			i++
			val = opts[i]
		}
		switch name {
		case "--hash":
			algo, digest, ok := strings.Cut(val, ":")
			if !ok || algo == "" || digest == "" {
				if err == nil {
					err = fmt.Errorf("bad --hash value %q (want algorithm:hexdigest)", val)
				}
				continue
			}
			hashes = append(hashes, val)
		case "--config-settings", "-C":
			if !strings.Contains(val, "=") && err == nil {
				err = fmt.Errorf("%s %q is not of the form KEY=VAL", name, val)
			}
		}
	}
	return req, hashes, stray, err
}

// looksLikePath reports whether a requirement line is a path or URL rather
// than a PEP 508 string.
func looksLikePath(s string) bool {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
		return true
	}
	if i := strings.Index(s, "://"); i > 0 && !strings.Contains(s[:i], "@") && !strings.ContainsAny(s[:i], " ;") {
		return true
	}
	if strings.HasPrefix(s, "file:") {
		return true
	}
	if !strings.HasSuffix(s, ".whl") && !strings.HasSuffix(s, ".tar.gz") && !strings.HasSuffix(s, ".zip") {
		return false
	}
	// An archive name is a path unless it is "name @ url": what precedes
	// an "@" does not look like a path (pip's rule).
	if before, _, ok := strings.Cut(s, "@"); ok && !strings.ContainsAny(before, `/\`) && !strings.HasPrefix(before, ".") {
		return false
	}
	return true
}

func (f *File) pathEntry(file string, num int, target string, opts Options) *Entry {
	name, version, ok := NameFromURL(target)
	if !ok && opts.ProjectName != nil && !strings.Contains(target, "://") {
		dir := strings.TrimPrefix(target, "file:")
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(file), filepath.FromSlash(dir))
		}
		if n := opts.ProjectName(dir); n != "" {
			name, ok = n, true
		}
	}
	if !ok {
		return nil
	}
	r := Requirement{Name: name, URL: target}
	return &Entry{File: file, Line: num, Name: r.Normalized(), Req: r, Version: version}
}
