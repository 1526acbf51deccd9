// Package registry is a client for the npm registry protocol: packuments
// (abbreviated, with the full document as fallback), scoped names encoded as
// "@scope%2fname", tarball downloads verified against the packument's
// dist.integrity (SRI; sha1 dist.shasum only when integrity is absent), and
// the /-/v1/search endpoint. It takes registries and credentials from an
// npmrc.Config and never puts a credential in an error.
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
	"github.com/symposium-dev/symposium-pm/sdk/download"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/redirect"
)

// AcceptAbbreviated asks for the abbreviated ("corgi") packument, falling
// back to the full document, like the npm CLI.
const AcceptAbbreviated = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"

// MaxPackumentBytes caps a packument download.
const MaxPackumentBytes = 256 << 20

// MaxTarballBytes caps a tarball download.
const MaxTarballBytes = 512 << 20

// Client talks to the registries an npmrc.Config names.
type Client struct {
	cfg       *npmrc.Config
	http      *http.Client
	userAgent string
}

// MaxCAFile is the size cap for the certificate file npm's cafile names
// (4 MiB): a system bundle of every trusted root is about 200 KiB.
const MaxCAFile = 4 << 20

// New returns a client for cfg. env supplies proxy variables; userAgent is
// sent with every request. Redirects follow sdk/redirect's policy: a
// redirect to another scheme, host or port (https://registry.example to
// http://registry.example, say) drops the Authorization header, which
// net/http would otherwise copy to the same host in clear text.
func New(cfg *npmrc.Config, env npmrc.Env, userAgent string) (*Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = cfg.ProxySettings(env).Func()
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if !cfg.StrictSSL() {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // the user's strict-ssl=false
	}
	if f := cfg.CAFile(); f != "" {
		pem, err := pkgfile.ReadUserFile(f, MaxCAFile)
		if err != nil {
			return nil, fmt.Errorf("npm cafile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("npm cafile %s holds no PEM certificate", f)
		}
		tlsCfg.RootCAs = pool
	}
	tr.TLSClientConfig = tlsCfg
	return &Client{cfg: cfg, http: &http.Client{Transport: tr, Timeout: 10 * time.Minute, CheckRedirect: redirect.Check}, userAgent: userAgent}, nil
}

// Config returns the client's configuration.
func (c *Client) Config() *npmrc.Config { return c.cfg }

// HTTPError is a failed request: a transport failure (Status 0) or an
// unexpected HTTP status. URL carries no credentials.
type HTTPError struct {
	URL    string
	Status int
	Err    error
}

// Error describes the failed request.
func (e *HTTPError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("GET %s: HTTP %d", e.URL, e.Status)
	}
	return fmt.Sprintf("GET %s: %v", e.URL, e.Err)
}

// Unwrap returns the transport error.
func (e *HTTPError) Unwrap() error { return e.Err }

// ErrNotFound is returned (wrapped) when the registry has no such package.
var ErrNotFound = errors.New("no such package in the registry")

// Packument is the decoded subset of a package document, read with the
// object semantics of JSON.parse, as npm reads it (exact member names, a
// repeated member's last value).
type Packument struct {
	Name     string              `json:"name"`
	DistTags map[string]string   `json:"dist-tags"`
	Versions map[string]*Version `json:"versions"`
	// Description is present in full documents only.
	Description string `json:"description"`
}

// Version is one version's manifest within a packument.
type Version struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description"`
	Deprecated  json.RawMessage `json:"deprecated"`
	Dist        Dist            `json:"dist"`
}

// IsDeprecated reports whether the version carries a deprecation message
// (npm treats an empty string or false as not deprecated).
func (v *Version) IsDeprecated() bool {
	switch strings.TrimSpace(string(v.Deprecated)) {
	case "", `""`, "false", "null":
		return false
	}
	return true
}

// Dist is where a version's tarball is and how to verify it.
type Dist struct {
	Tarball   string `json:"tarball"`
	Shasum    string `json:"shasum"`
	Integrity string `json:"integrity"`
}

// PackumentURL returns the packument URL of name on registry (which ends in
// "/"); a scoped name's slash is encoded as %2f, as the npm CLI does.
func PackumentURL(registry, name string) string {
	return registry + strings.Replace(url.PathEscape(name), "%2F", "%2f", 1)
}

func (c *Client) get(ctx context.Context, rawURL, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &HTTPError{URL: redact.URL(rawURL), Err: errors.New("invalid URL")}
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if auth := c.cfg.Authorization(rawURL); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the URL, which may carry credentials: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &HTTPError{URL: redact.URL(rawURL), Err: err}
	}
	return resp, nil
}

// Packument fetches the packument of name from its registry. A missing
// package yields an error wrapping ErrNotFound.
func (c *Client) Packument(ctx context.Context, name string) (*Packument, error) {
	u := PackumentURL(c.cfg.Registry(name), name)
	resp, err := c.get(ctx, u, AcceptAbbreviated)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNotFound, redact.URL(u))
	case resp.StatusCode != http.StatusOK:
		return nil, &HTTPError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPackumentBytes+1))
	if err != nil {
		return nil, &HTTPError{URL: redact.URL(u), Err: err}
	}
	if len(body) > MaxPackumentBytes {
		return nil, &HTTPError{URL: redact.URL(u), Err: fmt.Errorf("packument over %d bytes", MaxPackumentBytes)}
	}
	p, err := decodePackument(body)
	if err != nil {
		return nil, &HTTPError{URL: redact.URL(u), Err: err}
	}
	return p, nil
}

// Download streams the tarball at rawURL into w, at most MaxTarballBytes.
// A failure of w (a full disk) is returned as w reported it, not as an
// *HTTPError: it is the machine's, not the registry's.
func (c *Client) Download(ctx context.Context, rawURL string, w io.Writer) error {
	resp, err := c.get(ctx, rawURL, "application/octet-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{URL: redact.URL(rawURL), Status: resp.StatusCode}
	}
	n, werr, err := download.Copy(w, resp.Body, MaxTarballBytes)
	if werr != nil {
		return werr
	}
	if err != nil {
		return &HTTPError{URL: redact.URL(rawURL), Err: err}
	}
	if n > MaxTarballBytes {
		return &HTTPError{URL: redact.URL(rawURL), Err: fmt.Errorf("tarball over %d bytes", MaxTarballBytes)}
	}
	return nil
}

// SearchResult is one hit of /-/v1/search.
type SearchResult struct {
	Name        string
	Version     string
	Description string
}

// Search queries the default registry's /-/v1/search endpoint.
func (c *Client) Search(ctx context.Context, text string, size int) ([]SearchResult, error) {
	u := c.cfg.Registry("") + "-/v1/search?" + url.Values{"text": {text}, "size": {fmt.Sprint(size)}}.Encode()
	resp, err := c.get(ctx, u, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &HTTPError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	var doc json.RawMessage
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxPackumentBytes)).Decode(&doc); err != nil {
		return nil, &HTTPError{URL: redact.URL(u), Err: fmt.Errorf("invalid search response: %w", err)}
	}
	out, err := decodeSearch(doc)
	if err != nil {
		return nil, &HTTPError{URL: redact.URL(u), Err: fmt.Errorf("invalid search response: %w", err)}
	}
	return out, nil
}
