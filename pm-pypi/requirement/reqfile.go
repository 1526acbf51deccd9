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
	reqText, hashes, err := splitRequirementOptions(line)
	if err != nil {
		return err
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
			return err
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
	e.Hashes = hashes
	e.Constraint = constraint
	f.Entries = append(f.Entries, *e)
	return nil
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
// per-requirement options (--hash, --config-settings, --global-option...).
func splitRequirementOptions(line string) (string, []string, error) {
	idx := -1
	for _, marker := range []string{" --", "\t--", " -"} {
		if i := strings.Index(line, marker); i >= 0 && (idx < 0 || i < idx) {
			// " -" inside a marker expression (e.g. "a-b") never has a
			// space before it followed by an option letter; accept only
			// known option forms.
			rest := strings.TrimSpace(line[i:])
			if strings.HasPrefix(rest, "--hash") || strings.HasPrefix(rest, "--config-settings") ||
				strings.HasPrefix(rest, "--global-option") || strings.HasPrefix(rest, "--install-option") ||
				strings.HasPrefix(rest, "-C") {
				idx = i
			}
		}
	}
	if idx < 0 {
		return strings.TrimSpace(line), nil, nil
	}
	req := strings.TrimSpace(line[:idx])
	var hashes []string
	fields := strings.Fields(line[idx:])
	for i := 0; i < len(fields); i++ {
		fl := fields[i]
		switch {
		case strings.HasPrefix(fl, "--hash="):
			hashes = append(hashes, strings.TrimPrefix(fl, "--hash="))
		case fl == "--hash":
			if i+1 >= len(fields) {
				return "", nil, errors.New("--hash needs a value")
			}
			i++
			hashes = append(hashes, fields[i])
		case strings.HasPrefix(fl, "-"):
			if !strings.Contains(fl, "=") && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") {
				i++
			}
		default:
			return "", nil, fmt.Errorf("unexpected %q among options", fl)
		}
	}
	for _, h := range hashes {
		algo, digest, ok := strings.Cut(h, ":")
		if !ok || algo == "" || digest == "" {
			return "", nil, fmt.Errorf("bad --hash value %q (want algorithm:hexdigest)", h)
		}
	}
	return req, hashes, nil
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
	return strings.HasSuffix(s, ".whl") || strings.HasSuffix(s, ".tar.gz") || strings.HasSuffix(s, ".zip")
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
