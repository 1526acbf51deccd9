// Package requirement parses Python dependency declarations: PEP 508
// requirement strings (as in pyproject.toml) and pip requirements files with
// their includes, constraints, continuation lines, options and hashes.
package requirement

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/marker"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// Requirement is one PEP 508 dependency specification.
type Requirement struct {
	// Name is the distribution name as written.
	Name string
	// Extras are the requested extras, as written.
	Extras []string
	// Specifier is the PEP 440 specifier set, without parentheses ("" for
	// none).
	Specifier string
	// URL is the direct reference of "name @ url", or "".
	URL string
	// Marker is the environment marker after ";", or "".
	Marker string
}

// Normalized returns the PEP 503 normalized name.
func (r Requirement) Normalized() string { return pyname.Normalize(r.Name) }

// Pin returns the exact version the requirement pins with "==" (no
// wildcard) or "===", if it does.
func (r Requirement) Pin() (string, bool) {
	for _, clause := range strings.Split(r.Specifier, ",") {
		clause = strings.TrimSpace(clause)
		var v string
		switch {
		case strings.HasPrefix(clause, "==="):
			v = strings.TrimSpace(clause[3:])
		case strings.HasPrefix(clause, "=="):
			v = strings.TrimSpace(clause[2:])
			if strings.HasSuffix(v, ".*") {
				continue
			}
		default:
			continue
		}
		if c, err := versions.CanonicalPEP440(v); err == nil {
			return c, true
		}
		if v != "" {
			return v, true
		}
	}
	return "", false
}

// String renders the requirement in PEP 508 form.
func (r Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Name)
	if len(r.Extras) > 0 {
		b.WriteString("[" + strings.Join(r.Extras, ",") + "]")
	}
	if r.URL != "" {
		b.WriteString(" @ " + r.URL)
	} else {
		b.WriteString(r.Specifier)
	}
	if r.Marker != "" {
		if r.URL != "" {
			b.WriteByte(' ')
		}
		b.WriteString("; " + r.Marker)
	}
	return b.String()
}

// Parse parses a PEP 508 requirement string such as
// `requests[socks] >=2.8.1, ==2.8.* ; python_version < "3.8"` or
// `pip @ https://example.com/pip.whl`.
func Parse(s string) (Requirement, error) {
	var r Requirement
	orig := s
	s = strings.TrimSpace(s)
	fail := func(format string, args ...any) (Requirement, error) {
		return Requirement{}, fmt.Errorf("requirement %q: %s", orig, fmt.Sprintf(format, args...))
	}
	// Name.
	i := 0
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	r.Name = s[:i]
	if !pyname.Valid(r.Name) {
		return fail("bad or missing distribution name")
	}
	s = strings.TrimLeft(s[i:], " \t")
	// Extras.
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return fail("unclosed extras list")
		}
		for _, e := range strings.Split(s[1:end], ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				if strings.TrimSpace(s[1:end]) == "" {
					break
				}
				return fail("empty extra name")
			}
			if !pyname.Valid(e) {
				return fail("bad extra name %q", e)
			}
			r.Extras = append(r.Extras, e)
		}
		s = strings.TrimLeft(s[end+1:], " \t")
	}
	// Direct reference.
	if strings.HasPrefix(s, "@") {
		s = strings.TrimLeft(s[1:], " \t")
		end := len(s)
		// A marker after a URL must be preceded by whitespace.
		for j := 0; j < len(s); j++ {
			if s[j] == ' ' || s[j] == '\t' {
				rest := strings.TrimLeft(s[j:], " \t")
				if strings.HasPrefix(rest, ";") {
					end = j
					break
				}
				if rest != "" {
					return fail("unexpected text %q after URL", rest)
				}
				end = j
				break
			}
		}
		r.URL = s[:end]
		if r.URL == "" {
			return fail("empty URL after @")
		}
		if _, err := url.Parse(r.URL); err != nil {
			return fail("bad URL: %v", err)
		}
		s = strings.TrimLeft(s[end:], " \t")
		if strings.HasPrefix(s, ";") {
			r.Marker = strings.TrimSpace(s[1:])
			if r.Marker == "" {
				return fail("empty marker after ;")
			}
			if _, err := marker.Parse(r.Marker); err != nil {
				return fail("%v", err)
			}
		}
		return r, nil
	}
	// Version specifier and marker.
	spec := s
	if semi := strings.IndexByte(s, ';'); semi >= 0 {
		spec = s[:semi]
		r.Marker = strings.TrimSpace(s[semi+1:])
		if r.Marker == "" {
			return fail("empty marker after ;")
		}
		if _, err := marker.Parse(r.Marker); err != nil {
			return fail("%v", err)
		}
	}
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "(") {
		if !strings.HasSuffix(spec, ")") {
			return fail("unclosed parenthesis in version specifier")
		}
		spec = strings.TrimSpace(spec[1 : len(spec)-1])
	}
	// The PEP 508 grammar takes clauses separated by commas; only a trailing
	// comma is tolerated (as packaging does), not an empty clause before
	// another.
	if clauses := strings.Split(spec, ","); len(clauses) > 1 {
		for _, c := range clauses[:len(clauses)-1] {
			if strings.TrimSpace(c) == "" {
				return fail("empty clause in version specifier %q", spec)
			}
		}
	}
	if spec != "" {
		if err := versions.ValidatePEP440Specifier(spec); err != nil {
			return fail("%v", err)
		}
		// Keep the clauses compact: ">=1.0, <2" becomes ">=1.0,<2".
		parts := strings.Split(spec, ",")
		for k, p := range parts {
			parts[k] = strings.Join(strings.Fields(p), "")
		}
		r.Specifier = strings.Join(parts, ",")
	}
	return r, nil
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '-' || c == '_'
}

// NameFromURL guesses the distribution name (and exact version, when the
// URL names a wheel or sdist file) of a URL or path requirement, from an
// "#egg=name" fragment or the file name. It reports false when neither says.
func NameFromURL(u string) (name, version string, ok bool) {
	if i := strings.Index(u, "#"); i >= 0 {
		frag := u[i+1:]
		u = u[:i]
		for _, kv := range strings.Split(frag, "&") {
			if k, v, _ := strings.Cut(kv, "="); k == "egg" && v != "" {
				n, _, _ := strings.Cut(v, "[")
				if pyname.Valid(n) {
					return n, "", true
				}
			}
		}
	}
	if i := strings.IndexAny(u, "?"); i >= 0 {
		u = u[:i]
	}
	base := path.Base(strings.ReplaceAll(u, "\\", "/"))
	if strings.Contains(u, "://") {
		// A URL's file name is percent-encoded ("torch-2.1.0%2Bcpu-..."
		// for the local version 2.1.0+cpu): decoded, as pip reads it.
		if b, err := url.PathUnescape(base); err == nil {
			base = b
		}
	}
	if strings.HasSuffix(base, ".whl") {
		parts := strings.Split(strings.TrimSuffix(base, ".whl"), "-")
		if len(parts) >= 5 && pyname.Valid(parts[0]) {
			return parts[0], canonical(parts[1]), true
		}
		return "", "", false
	}
	for _, ext := range []string{".tar.gz", ".zip", ".tar.bz2", ".tgz"} {
		if strings.HasSuffix(base, ext) {
			stem := strings.TrimSuffix(base, ext)
			if i := strings.LastIndex(stem, "-"); i > 0 && pyname.Valid(stem[:i]) {
				if _, err := versions.CanonicalPEP440(stem[i+1:]); err == nil {
					return stem[:i], canonical(stem[i+1:]), true
				}
			}
		}
	}
	return "", "", false
}

func canonical(v string) string {
	if c, err := versions.CanonicalPEP440(v); err == nil {
		return c
	}
	return v
}
