// Package redact hides credentials in what a package manager or the host
// shows: URLs with user information ("https://user:token@host/"), query
// parameters that carry tokens or signatures, credential headers
// (Authorization, Cookie, ...), configuration values such as npm's
// "_authToken=" or a "password:" line, and free text (an error message, a
// toolchain's output) that quotes any of these.
//
// Every secret becomes Mask ("***"); what surrounds it stays, so a reader
// still sees which URL or setting was involved. Redaction is idempotent:
// redacting an already redacted string changes nothing. It is a last line
// of defence, not a parser: code that holds a credential keeps it apart from
// what it prints (as net/http's url.Error would not), and redacts what it
// cannot control, such as a child process's output.
//
// No library does this job: net/url's URL.Redacted keeps the user name
// (often the token itself, as in "https://TOKEN@github.com/"), masks only
// parsed URLs and knows nothing of headers, configuration lines or text.
package redact

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask replaces every secret.
const Mask = "***"

// URL returns raw, a single URL, with its user information replaced by Mask
// ("https://***@host/path") and the values of query parameters that look
// like credentials masked ("?token=***"). It works on the text, not on a
// parse, so that a URL the parser refuses (or reads differently, as
// "s://#:secret@host", whose '@' falls in a fragment) is masked too, and the
// rest of the URL is shown as written. Without "://", an scp-like
// "user:password@host:path" becomes "***@host:path" (a user alone, as in
// "git@host:path", is an address, not a secret). The result is then
// redacted as Text.
func URL(raw string) string {
	return Text(maskQuery(fallback(raw)))
}

// maskQuery masks the values of credential-like query parameters in s,
// keeping their order and spelling.
func maskQuery(s string) string {
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == Mask {
			continue
		}
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if SecretKey(k) {
			parts[i] = p[:len(p)-len(v)] + Mask
		}
	}
	s = base + "?" + strings.Join(parts, "&")
	if hasFrag {
		s += "#" + frag
	}
	return s
}

// fallback masks what looks like user information: after "://" and any
// further slashes (a typed "https:///user:token@host" has its user
// information there, though a parser reads an empty host and a path),
// everything up to the last '@' before the path or query; without "://",
// an scp-like "user:password@host:path" keeps only "***@host:path".
func fallback(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		slashes := len(rest) - len(strings.TrimLeft(rest, "/"))
		head := scheme + "://" + rest[:slashes] // kept as written
		rest = rest[slashes:]
		auth := rest
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			auth = rest[:i]
		}
		if at := strings.LastIndex(auth, "@"); at >= 0 && auth[:at] != Mask {
			return head + Mask + rest[at:]
		}
		return s
	}
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	user := s[:at]
	if strings.ContainsAny(user, "/?") || !strings.Contains(user, ":") || user == Mask {
		return s
	}
	return Mask + s[at:]
}

// SecretKey reports whether a query parameter, header or setting named key
// is likely to hold a credential: its name mentions a token, password,
// secret, key, signature, credential, session or auth(orization), or it is
// a cookie.
func SecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

var secretWords = []string{"token", "pass", "secret", "key", "sig", "credential", "session", "auth", "cookie"}

// secretPatterns are the regular expressions Text applies, compiled on
// first use rather than when the package is initialised: a PM that never
// reports a problem never needs them.
var secretPatterns = sync.OnceValue(func() struct{ assignment, header *regexp.Regexp } {
	return struct{ assignment, header *regexp.Regexp }{
		// assignment finds "name = value", "name: value" and JSON's
		// "name": "value" for credential-like names; the value is group
		// 2: a quoted string whole, spaces and all (a passphrase, or
		// cargo's token = "Bearer <token>"), or a word, after a Bearer
		// or Basic scheme if one comes first.
		assignment: regexp.MustCompile(`(?i)((?:_authToken|_auth|_password|password|passwd|token|secret|api[-_]?key|access[-_]?key)"?\s*[=:]\s*)("[^"\r\n]*"?|'[^'\r\n]*'?|(?:(?:bearer|basic)\s+)?[^\s"',;&]+)`),
		// header finds credential headers in text; the value runs to the
		// end of the line.
		header: regexp.MustCompile(`(?i)\b((?:proxy-)?(?:authorization|cookie|set-cookie|x-api-key|private-token|x-auth-token|x-npm-otp)\s*:\s*)([^\r\n]+)`),
	}
})

// authorityEnd are the bytes that end a URL's user information and host in
// free text: the path, query and the punctuation that commonly quotes a URL.
const authorityEnd = "/?\"'`\\ \t\r\n<>()[]{},;"

// Text returns s with every credential it can recognise masked: the user
// information of every URL ("git+https://***@github.com/o/r"), credential
// assignments ("_authToken=***", "password: ***", `"token": "***"`) and
// credential header lines ("Authorization: ***").
func Text(s string) string {
	if strings.Contains(s, "://") {
		s = userinfo(s)
	}
	if strings.ContainsAny(s, "=:") {
		re := secretPatterns()
		s = re.header.ReplaceAllString(s, "${1}"+Mask)
		s = re.assignment.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.assignment.FindStringSubmatch(m)
			return sub[1] + maskValue(sub[2])
		})
	}
	return s
}

// maskValue masks an assigned value, keeping the quotes around a quoted
// one.
func maskValue(v string) string {
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		if len(v) > 1 && v[len(v)-1] == v[0] {
			return v[:1] + Mask + v[:1]
		}
		return v[:1] + Mask
	}
	return Mask
}

// schemeByte reports whether c may appear in a URL scheme.
func schemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// urlEnd are the bytes that end a URL in free text; urlTrail the
// punctuation that, at its end, belongs to the sentence around it.
const (
	urlEnd   = " \t\r\n\"'`<>"
	urlTrail = ".,:;!?)]}"
)

// userinfo masks the user information and the credential-like query
// parameters of every URL in s.
func userinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, authorityEnd)
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			b.WriteString(Mask)
			s = s[at:]
		}
		// The rest of the URL, up to where the text around it resumes.
		end = strings.IndexAny(s, urlEnd)
		if end < 0 {
			end = len(s)
		}
		u := strings.TrimRight(s[:end], urlTrail)
		if next := strings.Index(u, "://"); next >= 0 {
			// Another URL follows without a break: this one ends
			// before its scheme.
			for next > 0 && schemeByte(u[next-1]) {
				next--
			}
			u = strings.TrimRight(u[:next], urlTrail)
		}
		b.WriteString(maskQuery(u))
		s = s[len(u):]
	}
}

// Header returns a copy of h with the values of credential headers
// (Authorization, Proxy-Authorization, Cookie, Set-Cookie and any header
// whose name SecretKey recognises) masked, for logging a request.
func Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if SecretKey(k) {
			out[k] = []string{Mask}
			continue
		}
		red := make([]string, len(vs))
		for i, v := range vs {
			red[i] = Text(v)
		}
		out[k] = red
	}
	return out
}

// Error returns err's message redacted as text.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return Text(err.Error())
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that redacts every
// string, error and Stringer attribute as text. Use it where a handler is
// built; wrap a handler built elsewhere with Handler.
func ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	return attr(a)
}

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, x := range g {
			red[i] = attr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Text(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, Text(x.String()))
		case []string:
			red := make([]string, len(x))
			for i, s := range x {
				red[i] = Text(s)
			}
			return slog.Any(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Handler wraps h so that every record's message and attributes are
// redacted before h sees them, for a logger the program did not build (a
// handler handed over by a harness).
func Handler(h slog.Handler) slog.Handler {
	if _, ok := h.(handler); ok {
		return h
	}
	return handler{h}
}

type handler struct{ inner slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = attr(a)
	}
	return handler{h.inner.WithAttrs(red)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.inner.WithGroup(name)} }
