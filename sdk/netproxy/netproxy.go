// Package netproxy chooses the HTTP proxy for a package manager's requests.
//
// The rules are those of golang.org/x/net/http/httpproxy, which net/http's
// ProxyFromEnvironment also follows: HTTPS requests use the HTTPS proxy and
// HTTP requests the HTTP proxy; a proxy written without a scheme is taken as
// http://; NO_PROXY holds host names (which also cover their subdomains),
// ".domain" suffixes, IP addresses, CIDR ranges, optional ports, or "*";
// localhost and loopback addresses are never proxied. This package is a
// thin wrapper over httpproxy, and a thin wrapper is enough: what differs
// between ecosystems is only where the three settings come from (the
// process environment, read from the session's environment rather than the
// PM's own; cargo's http.proxy; npm's proxy, https-proxy and noproxy), not
// how a proxy is chosen once they are known. Each PM computes its Settings
// from its ecosystem's sources, most specific first (Override), and hands
// Func to its http.Transport.
//
// What this package adds to httpproxy: the environment is read through a
// function (a PM serves a session whose environment is not its own), and a
// malformed proxy setting yields an error that names the setting with its
// credentials masked (httpproxy's own error quotes the value whole).
package netproxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpproxy"

	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// Settings are the proxy settings that apply to a PM's requests.
type Settings struct {
	// HTTP is the proxy for http:// requests ("" for none).
	HTTP string
	// HTTPS is the proxy for https:// requests ("" for none).
	HTTPS string
	// NoProxy lists, comma-separated, the hosts reached directly.
	NoProxy string
}

// FromEnv reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY through getenv, each in
// upper case first and then in lower case, as httpproxy.FromEnvironment
// does for the process environment. A nil getenv yields no settings.
func FromEnv(getenv func(string) string) Settings {
	if getenv == nil {
		return Settings{}
	}
	get := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return getenv(strings.ToLower(k))
	}
	return Settings{HTTP: get("HTTP_PROXY"), HTTPS: get("HTTPS_PROXY"), NoProxy: get("NO_PROXY")}
}

// FromToolEnv reads the environment as libcurl (behind cargo and git) and
// Python's urllib (behind pip) do, which differs from FromEnv in two ways:
// each variable is read in lower case first, then in upper case, and
// ALL_PROXY (all_proxy first) is the proxy for whichever scheme has none of
// its own. Node's npm reads neither ALL_PROXY nor lower case first, and
// takes FromEnv. (libcurl also ignores an upper-case HTTP_PROXY, against the
// "httpoxy" attack on CGI programs; a PM is no CGI program, and urllib
// honours it, so FromToolEnv does too.) A nil getenv yields no settings.
func FromToolEnv(getenv func(string) string) Settings {
	if getenv == nil {
		return Settings{}
	}
	get := func(k string) string {
		if v := getenv(strings.ToLower(k)); v != "" {
			return v
		}
		return getenv(k)
	}
	all := get("ALL_PROXY")
	s := Settings{HTTP: get("HTTP_PROXY"), HTTPS: get("HTTPS_PROXY"), NoProxy: get("NO_PROXY")}
	if s.HTTP == "" {
		s.HTTP = all
	}
	if s.HTTPS == "" {
		s.HTTPS = all
	}
	return s
}

// Override returns s with each field that o sets replacing s's: o holds the
// more specific source (an ecosystem's own configuration over the
// environment).
func (s Settings) Override(o Settings) Settings {
	if o.HTTP != "" {
		s.HTTP = o.HTTP
	}
	if o.HTTPS != "" {
		s.HTTPS = o.HTTPS
	}
	if o.NoProxy != "" {
		s.NoProxy = o.NoProxy
	}
	return s
}

// For returns the proxy for a request to target, or nil to go direct. A
// malformed proxy setting for target's scheme is an error naming the
// setting, credentials masked (httpproxy itself would quietly go direct).
func (s Settings) For(target *url.URL) (*url.URL, error) {
	return s.Func()(&http.Request{URL: target})
}

// Func returns the proxy function for an http.Transport. The settings are
// parsed once, when Func is called.
func (s Settings) Func() func(*http.Request) (*url.URL, error) {
	cfg := httpproxy.Config{HTTPProxy: s.HTTP, HTTPSProxy: s.HTTPS, NoProxy: s.NoProxy}
	f := cfg.ProxyFunc()
	bad := map[string]error{}
	for scheme, raw := range map[string]string{"http": s.HTTP, "https": s.HTTPS} {
		if raw != "" && !valid(raw) {
			bad[scheme] = fmt.Errorf("invalid proxy setting %q for %s requests", redact.URL(raw), scheme)
		}
	}
	return func(r *http.Request) (*url.URL, error) {
		if err := bad[r.URL.Scheme]; err != nil {
			return nil, err
		}
		return f(r.URL)
	}
}

// valid reports whether httpproxy can use raw: a URL with a scheme and a
// host, or a host[:port] to which it prefixes "http://".
func valid(raw string) bool {
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		return err == nil && u.Scheme != "" && u.Host != ""
	}
	u, err := url.Parse("http://" + raw)
	return err == nil && u.Host != ""
}
