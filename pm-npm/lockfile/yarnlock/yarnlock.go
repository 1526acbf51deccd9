// Package yarnlock reads yarn.lock files: the classic v1 text format
// ("# yarn lockfile v1") and the YAML format of yarn berry (2+, recognised by
// its __metadata entry).
//
// Both map descriptors ("name@range", several joined by ", " per entry) to
// the package installed for them. Neither records the root project's direct
// dependencies, so Resolve looks up the descriptor built from the
// package.json declaration.
package yarnlock

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

// Entry is what a yarn.lock records for one or more descriptors.
type Entry struct {
	Version string
	// Resolution is berry's "name@npm:1.2.3" (or "name@workspace:path"); v1
	// files have none.
	Resolution string
	// Resolved is v1's tarball URL.
	Resolved string
	// Integrity is v1's SRI hash; Checksum berry's.
	Integrity string
	Checksum  string
}

// Lock is a parsed yarn.lock.
type Lock struct {
	// Berry is true for a yarn 2+ file.
	Berry bool
	// MetadataVersion is berry's __metadata.version (0 for v1 files).
	MetadataVersion int
	// Entries maps every descriptor to its entry.
	Entries map[string]*Entry
}

// Parse parses a yarn.lock of either format.
func Parse(data []byte) (*Lock, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if isBerry(data) {
		return parseBerry(data)
	}
	return parseV1(data)
}

func isBerry(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if bytes.HasPrefix(t, []byte("# yarn lockfile v1")) {
			return false
		}
		if bytes.HasPrefix(line, []byte("__metadata:")) || bytes.HasPrefix(line, []byte("\"__metadata\":")) {
			return true
		}
	}
	return false
}

// parseV1 reads the classic format: unindented "descriptor[, descriptor]:"
// lines opening an entry, indented "key value" lines inside it, and deeper
// blocks (dependencies) that are skipped.
func parseV1(data []byte) (*Lock, error) {
	l := &Lock{Entries: map[string]*Entry{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var cur *Entry
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(trimmed)
		switch {
		case indent == 0:
			if !strings.HasSuffix(line, ":") {
				return nil, fmt.Errorf("invalid yarn.lock: line %d: expected \"descriptor:\", found %q", lineNo, clip(line))
			}
			keys, err := splitDescriptors(line[:len(line)-1])
			if err != nil {
				return nil, fmt.Errorf("invalid yarn.lock: line %d: %w", lineNo, err)
			}
			cur = &Entry{}
			for _, k := range keys {
				l.Entries[k] = cur
			}
		case cur == nil:
			return nil, fmt.Errorf("invalid yarn.lock: line %d: indented line outside an entry", lineNo)
		case indent == 2:
			key, val, err := keyValue(trimmed)
			if err != nil {
				return nil, fmt.Errorf("invalid yarn.lock: line %d: %w", lineNo, err)
			}
			switch key {
			case "version":
				cur.Version = val
			case "resolved":
				cur.Resolved = val
			case "integrity":
				cur.Integrity = val
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("invalid yarn.lock: %w", err)
	}
	return l, nil
}

// splitDescriptors splits `"a@^1", a@^2` into its unquoted descriptors.
func splitDescriptors(s string) ([]string, error) {
	var out []string
	for _, part := range splitOutsideQuotes(s) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.HasPrefix(part, `"`) {
			u, err := strconv.Unquote(part)
			if err != nil {
				return nil, fmt.Errorf("bad quoted descriptor %s", clip(part))
			}
			part = u
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty descriptor list")
	}
	return out, nil
}

func splitOutsideQuotes(s string) []string {
	var parts []string
	inQ, esc, start := false, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case c == '\\' && inQ:
			esc = true
		case c == '"':
			inQ = !inQ
		case c == ',' && !inQ:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// keyValue splits `key "value"`, `key value` or `"key" value`; a block
// opener ("dependencies:") has an empty value.
func keyValue(s string) (string, string, error) {
	var key, rest string
	if strings.HasPrefix(s, `"`) {
		end := strings.Index(s[1:], `"`)
		if end < 0 {
			return "", "", fmt.Errorf("unterminated quoted key %s", clip(s))
		}
		key, rest = s[1:end+1], s[end+2:]
	} else {
		k, r, _ := strings.Cut(s, " ")
		key, rest = k, r
	}
	key = strings.TrimSuffix(key, ":")
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, `"`) {
		u, err := strconv.Unquote(rest)
		if err != nil {
			return "", "", fmt.Errorf("bad quoted value for %s", key)
		}
		rest = u
	}
	return key, rest, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func parseBerry(data []byte) (*Lock, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid yarn.lock: %w", err)
	}
	l := &Lock{Berry: true, Entries: map[string]*Entry{}}
	if len(doc.Content) == 0 {
		return l, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("invalid yarn.lock: top level is not a mapping")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind != yaml.MappingNode {
			continue
		}
		fields := scalars(v)
		if k.Value == "__metadata" {
			l.MetadataVersion, _ = strconv.Atoi(fields["version"])
			continue
		}
		e := &Entry{Version: fields["version"], Resolution: fields["resolution"], Checksum: fields["checksum"]}
		for _, d := range strings.Split(k.Value, ",") {
			if d = strings.TrimSpace(d); d != "" {
				l.Entries[d] = e
			}
		}
	}
	return l, nil
}

// scalars returns the scalar members of a mapping node.
func scalars(m *yaml.Node) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i+1].Kind == yaml.ScalarNode {
			out[m.Content[i].Value] = m.Content[i+1].Value
		}
	}
	return out
}

// Resolve implements lockfile.Resolver. The importer is not needed: yarn
// keys entries by descriptor, whichever workspace declared it.
func (l *Lock) Resolve(importer, name, spec string) (lockfile.Resolution, bool) {
	cands := []string{name + "@" + spec}
	if l.Berry && !strings.Contains(spec, ":") {
		cands = append([]string{name + "@npm:" + spec}, cands...)
	}
	if spec == "" || spec == "*" {
		cands = append(cands, name+"@*", name+"@npm:*", name)
	}
	for _, c := range cands {
		e, ok := l.Entries[c]
		if !ok {
			continue
		}
		r := lockfile.Resolution{Name: name, Version: e.Version}
		if real, ref, ok := splitResolution(e.Resolution); ok {
			r.Name = real
			if p, ok := strings.CutPrefix(ref, "workspace:"); ok {
				r.Link = lockfile.JoinRel("", p)
			}
		} else if strings.HasPrefix(spec, "npm:") {
			if real, _, ok := strings.Cut(strings.TrimPrefix(spec[4:], "@"), "@"); ok {
				if strings.HasPrefix(spec[4:], "@") {
					real = "@" + real
				}
				r.Name = real
			}
		}
		if real, ok := tarballName(spec, e); ok && e.Resolution == "" {
			r.Name = real
		}
		if r.Link == "" {
			if p, ok := strings.CutPrefix(spec, "link:"); ok {
				r.Link = lockfile.JoinRel(importer, p)
			}
		}
		return r, true
	}
	return lockfile.Resolution{}, false
}

// tarballName reads the package a v1 entry installed for a dependency
// declared with a registry tarball URL ("https://host/@scope/name/-/name-1.0.0.tgz"):
// the name the URL's path gives, when its file name agrees with that name
// and the entry's version. Other URLs name no package.
func tarballName(spec string, e *Entry) (string, bool) {
	if !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		return "", false
	}
	u, err := url.Parse(e.Resolved)
	if err != nil {
		return "", false
	}
	name, file, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/-/")
	if !ok || name == "" {
		return "", false
	}
	if un, err := url.PathUnescape(name); err == nil {
		name = un
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	if file != base+"-"+e.Version+".tgz" {
		return "", false
	}
	// Keep only the last path segments that make up a (scoped) name.
	parts := strings.Split(name, "/")
	if len(parts) >= 2 && strings.HasPrefix(parts[len(parts)-2], "@") {
		return strings.Join(parts[len(parts)-2:], "/"), true
	}
	return parts[len(parts)-1], true
}

// splitResolution splits berry's "name@protocol:ref" (name may be scoped).
func splitResolution(res string) (name, ref string, ok bool) {
	if res == "" {
		return "", "", false
	}
	start := 0
	if strings.HasPrefix(res, "@") {
		start = 1
	}
	i := strings.Index(res[start:], "@")
	if i < 0 {
		return "", "", false
	}
	return res[:start+i], res[start+i+1:], true
}
