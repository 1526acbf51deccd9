// Package redirect is the redirect policy of a PM's registry client: the
// http.Client.CheckRedirect that keeps credentials on the origin they were
// configured for.
//
// A registry client sets its token as an explicit Authorization header.
// net/http copies such a header to a redirect's target whenever the target's
// host is the original host or one of its subdomains, whatever the scheme
// and port: a registry at https://registry.example redirecting to
// http://registry.example would receive the token in clear text. libcurl
// (which cargo and git use) and Python's requests (which pip uses) drop
// credentials when a redirect changes the scheme, the host or the port, and
// so does Check.
package redirect

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// MaxRedirects is how many redirects Check follows for one request, as
// net/http's default policy does.
const MaxRedirects = 10

// credentialHeaders are the request headers that carry a user's
// credentials to a server (Proxy-Authorization goes to the proxy, whatever
// the target, and is kept).
var credentialHeaders = [...]string{"Authorization", "Cookie"}

// Check is an http.Client's CheckRedirect: it follows at most MaxRedirects
// redirects, and removes the credential headers (Authorization, Cookie) from
// a redirected request whose origin (scheme, host and port, the default
// port written or not) differs from the first request's. Credentials in the
// target URL's userinfo are the target's own and are left alone.
func Check(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if len(via) == 0 {
		return errors.New("redirect: no original request")
	}
	if origin(req) != origin(via[0]) {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// origin returns r's scheme://host:port, lower case, with the scheme's
// default port written out.
func origin(r *http.Request) string {
	scheme := strings.ToLower(r.URL.Scheme)
	host := strings.ToLower(r.URL.Hostname())
	port := r.URL.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + host + ":" + port
}
