// Package simpleapi is a client for Python package indexes speaking the
// simple repository API: PEP 691 JSON, negotiated with a fallback to PEP 503
// HTML, with PEP 592 yanking and PEP 658/714 core metadata. It also finds
// the index the user configured for pip or uv.
package simpleapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/download"
	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/netproxy"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/redirect"
)

// DefaultIndex is PyPI's simple API.
const DefaultIndex = "https://pypi.org/simple/"

// Accept asks for PEP 691 JSON first, then PEP 503 HTML.
const Accept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"

const jsonType = "application/vnd.pypi.simple.v1+json"

// File is one distribution file of a project.
type File struct {
	Filename string
	// URL is absolute; it may carry the index's credentials, so never
	// print it: use redact.URL.
	URL            string
	SHA256         string // lower-case hex, "" when the index gives none
	RequiresPython string
	Yanked         bool
	YankedReason   string
	// CoreMetadata says the METADATA is served at URL + ".metadata".
	CoreMetadata bool
}

// Project is a project page.
type Project struct {
	Name  string
	Files []File
}

// NotFoundError reports a project no configured index has.
type NotFoundError struct{ Name string }

// Error names the project.
func (e *NotFoundError) Error() string { return fmt.Sprintf("no index has a project named %q", e.Name) }

// RegistryError reports an index or network failure.
type RegistryError struct {
	// URL is redacted.
	URL    string
	Status int
	Err    error
}

// Error names the (redacted) URL and the status or cause.
func (e *RegistryError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d", e.URL, e.Status)
	}
	return fmt.Sprintf("%s: %v", e.URL, e.Err)
}

// Unwrap returns the network cause, if any.
func (e *RegistryError) Unwrap() error { return e.Err }

// Client reads one primary index and any extra ones.
type Client struct {
	// Indexes are simple API base URLs, primary first.
	Indexes []string
	HTTP    *http.Client
	// UserAgent is sent with every request.
	UserAgent string
}

// NewClient returns a client for cfg's indexes, with pip's proxies (see
// Proxies) and a redirect policy that drops header credentials when a
// redirect changes the scheme, host or port (sdk/redirect).
func NewClient(cfg Config, getenv func(string) string, userAgent string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = Proxies(cfg, getenv).Func()
	return &Client{
		Indexes:   append([]string{cfg.Index}, cfg.Extra...),
		HTTP:      &http.Client{Transport: tr, Timeout: 5 * time.Minute, CheckRedirect: redirect.Check},
		UserAgent: userAgent,
	}
}

// Proxies returns the proxy settings pip 23 uses: the environment read
// through getenv as Python's urllib reads it (netproxy.FromToolEnv:
// http_proxy, https_proxy, all_proxy and no_proxy, lower case before upper
// case, all_proxy for a scheme without its own), overridden by cfg.Proxy
// (PIP_PROXY, pip.conf's proxy), which pip sends every request through,
// http and https alike, whatever no_proxy says.
func Proxies(cfg Config, getenv func(string) string) netproxy.Settings {
	s := netproxy.FromToolEnv(getenv)
	if cfg.Proxy != "" {
		s = s.Override(netproxy.Settings{HTTP: cfg.Proxy, HTTPS: cfg.Proxy})
		s.NoProxy = ""
	}
	return s
}

// get sends a GET for rawURL. accept, when set, is the Accept header;
// identity asks for the body as stored (Accept-Encoding: identity), which
// net/http then hands over undecoded, as a download must be to match its
// hash.
func (c *Client) get(ctx context.Context, rawURL, accept string, identity bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &RegistryError{URL: redact.URL(rawURL), Err: errors.New("bad URL")}
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if identity {
		// Set by hand, the header also stops net/http from asking for
		// gzip and gunzipping the body behind the caller's back.
		req.Header.Set("Accept-Encoding", "identity")
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// The error text of net/http repeats the URL; keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &RegistryError{URL: redact.URL(rawURL), Err: err}
	}
	return resp, nil
}

// maxPage bounds a project page or root listing.
const maxPage = 256 << 20

// Project fetches name's page from every index and merges the files, the
// way pip does. It returns a *NotFoundError when no index has the project.
func (c *Client) Project(ctx context.Context, name string) (*Project, error) {
	n := pyname.Normalize(name)
	p := &Project{Name: n}
	found := false
	var firstErr error
	for _, base := range c.Indexes {
		files, ok, err := c.project(ctx, base, n)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if ok {
			found = true
			p.Files = append(p.Files, files...)
		}
	}
	if firstErr != nil && !found {
		return nil, firstErr
	}
	if !found {
		return nil, &NotFoundError{Name: n}
	}
	return p, nil
}

func (c *Client) project(ctx context.Context, base, n string) ([]File, bool, error) {
	page, err := url.Parse(strings.TrimRight(base, "/") + "/" + n + "/")
	if err != nil {
		return nil, false, &RegistryError{URL: redact.URL(base), Err: errors.New("bad index URL")}
	}
	resp, err := c.get(ctx, page.String(), Accept, false)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		return nil, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, &RegistryError{URL: redact.URL(page.String()), Status: resp.StatusCode}
	}
	// The final URL (after redirects) is the base for relative links;
	// credentials stay with the index's origin (a redirect to plain http
	// on the same host does not get them).
	final := resp.Request.URL
	if final.User == nil && page.User != nil && credentialsFollow(page, final) {
		final.User = page.User
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return nil, false, &RegistryError{URL: redact.URL(page.String()), Err: err}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var files []File
	if ct == jsonType {
		files, err = parseProjectJSON(body, final)
	} else {
		files, err = parseProjectHTML(body, final)
	}
	if err != nil {
		return nil, false, &RegistryError{URL: redact.URL(page.String()), Err: err}
	}
	for i := range files {
		if u, err := url.Parse(files[i].URL); err == nil && u.User == nil && page.User != nil && credentialsFollow(page, u) {
			u.User = page.User
			files[i].URL = u.String()
		}
	}
	return files, true, nil
}

// credentialsFollow reports whether the index credentials given for from
// may be sent to to: the same host, with the same scheme and port (a
// scheme's default port written or not), or the upgrade from http on port
// 80 to https on port 443, the cases in which Python's requests (pip's
// HTTP library) keeps them across a redirect. A move to plain http, or
// to another port, does not get them.
func credentialsFollow(from, to *url.URL) bool {
	if !strings.EqualFold(from.Hostname(), to.Hostname()) {
		return false
	}
	fromScheme, toScheme := strings.ToLower(from.Scheme), strings.ToLower(to.Scheme)
	fp, tp := portOf(from), portOf(to)
	if fromScheme == toScheme {
		return fp == tp
	}
	return fromScheme == "http" && fp == "80" && toScheme == "https" && tp == "443"
}

// portOf returns u's port, or its scheme's default one.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// ParseProjectJSON decodes a PEP 691 project page; relative URLs resolve
// against base.
func ParseProjectJSON(body []byte, base *url.URL) ([]File, error) {
	return parseProjectJSON(body, base)
}

func parseProjectJSON(body []byte, base *url.URL) ([]File, error) {
	var doc struct {
		Meta struct {
			APIVersion string `json:"api-version"`
		} `json:"meta"`
		Files []struct {
			Filename       string            `json:"filename"`
			URL            string            `json:"url"`
			Hashes         map[string]string `json:"hashes"`
			RequiresPython *string           `json:"requires-python"`
			Yanked         json.RawMessage   `json:"yanked"`
			CoreMetadata   json.RawMessage   `json:"core-metadata"`
			DistInfoMeta   json.RawMessage   `json:"dist-info-metadata"`
		} `json:"files"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("bad PEP 691 JSON: %w", jsonfile.Explain("", body, err))
	}
	if major, _, _ := strings.Cut(doc.Meta.APIVersion, "."); major != "1" {
		return nil, fmt.Errorf("unsupported simple API version %q", doc.Meta.APIVersion)
	}
	var out []File
	for _, f := range doc.Files {
		u, err := base.Parse(f.URL)
		if err != nil || f.Filename == "" {
			continue
		}
		file := File{Filename: f.Filename, URL: u.String(), SHA256: strings.ToLower(f.Hashes["sha256"])}
		if f.RequiresPython != nil {
			file.RequiresPython = *f.RequiresPython
		}
		file.Yanked, file.YankedReason = flagOrString(f.Yanked)
		cm, _ := flagOrString(f.CoreMetadata)
		dm, _ := flagOrString(f.DistInfoMeta)
		file.CoreMetadata = cm || dm
		out = append(out, file)
	}
	return out, nil
}

// flagOrString decodes a JSON value that is false, true, a string (true,
// with a reason) or an object (true).
func flagOrString(raw json.RawMessage) (bool, string) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "false" || s == "null":
		return false, ""
	case strings.HasPrefix(s, `"`):
		var r string
		json.Unmarshal(raw, &r)
		return true, r
	}
	return true, ""
}

// ParseProjectHTML decodes a PEP 503 project page.
func ParseProjectHTML(body []byte, base *url.URL) ([]File, error) {
	return parseProjectHTML(body, base)
}

func parseProjectHTML(body []byte, base *url.URL) ([]File, error) {
	anchors, baseHref := scanHTML(string(body))
	if baseHref != "" {
		if b, err := base.Parse(baseHref); err == nil {
			base = b
		}
	}
	var out []File
	for _, a := range anchors {
		href, ok := a.attrs["href"]
		if !ok {
			continue
		}
		u, err := base.Parse(href)
		if err != nil {
			continue
		}
		f := File{Filename: a.text}
		if algo, digest, ok := strings.Cut(u.Fragment, "="); ok && algo == "sha256" {
			f.SHA256 = strings.ToLower(digest)
		}
		u.Fragment = ""
		u.RawFragment = ""
		f.URL = u.String()
		if f.Filename == "" {
			f.Filename = u.Path[strings.LastIndex(u.Path, "/")+1:]
		}
		if rp, ok := a.attrs["data-requires-python"]; ok {
			f.RequiresPython = rp
		}
		if y, ok := a.attrs["data-yanked"]; ok {
			f.Yanked, f.YankedReason = true, y
		}
		if cm, ok := a.attrs["data-core-metadata"]; ok && cm != "false" {
			f.CoreMetadata = true
		} else if dm, ok := a.attrs["data-dist-info-metadata"]; ok && dm != "false" {
			f.CoreMetadata = true
		}
		out = append(out, f)
	}
	return out, nil
}

// ProjectNames reads the primary index's root listing (normalized names).
func (c *Client) ProjectNames(ctx context.Context) ([]string, error) {
	root := strings.TrimRight(c.Indexes[0], "/") + "/"
	resp, err := c.get(ctx, root, Accept, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &RegistryError{URL: redact.URL(root), Status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return nil, &RegistryError{URL: redact.URL(root), Err: err}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var names []string
	if ct == jsonType {
		var doc struct {
			Projects []struct {
				Name string `json:"name"`
			} `json:"projects"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, &RegistryError{URL: redact.URL(root), Err: fmt.Errorf("bad PEP 691 JSON: %w", jsonfile.Explain("", body, err))}
		}
		for _, p := range doc.Projects {
			names = append(names, pyname.Normalize(p.Name))
		}
		return names, nil
	}
	anchors, _ := scanHTML(string(body))
	for _, a := range anchors {
		if a.text != "" {
			names = append(names, pyname.Normalize(a.text))
		}
	}
	return names, nil
}

// Download streams f into w and returns the sha256 (hex) of what it wrote;
// the caller compares it with f.SHA256. The file is asked for as stored
// (Accept-Encoding: identity, as pip asks), and what the server sends is
// written and hashed as it came, never decoded: a .tar.gz served with
// Content-Encoding: gzip is the .tar.gz the index's hash is of. At most
// limit bytes are accepted. A failure of w (a full disk) is returned as w
// reported it, not as a *RegistryError: it is the machine's, not the
// index's.
func (c *Client) Download(ctx context.Context, f File, w io.Writer, limit int64) (string, error) {
	resp, err := c.get(ctx, f.URL, "", true)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &RegistryError{URL: redact.URL(f.URL), Status: resp.StatusCode}
	}
	h := sha256.New()
	n, werr, err := download.Copy(io.MultiWriter(w, h), resp.Body, limit)
	if werr != nil {
		return "", werr
	}
	if err != nil {
		return "", &RegistryError{URL: redact.URL(f.URL), Err: err}
	}
	if n > limit {
		return "", fmt.Errorf("%s is larger than the limit of %d bytes", f.Filename, limit)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CoreMetadata fetches f's METADATA (PEP 658), when the index serves it.
func (c *Client) CoreMetadata(ctx context.Context, f File) ([]byte, error) {
	if !f.CoreMetadata {
		return nil, errors.New("index serves no core metadata for " + f.Filename)
	}
	u, err := url.Parse(f.URL)
	if err != nil {
		return nil, err
	}
	u.Path += ".metadata"
	resp, err := c.get(ctx, u.String(), "", false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &RegistryError{URL: redact.URL(u.String()), Status: resp.StatusCode}
	}
	return io.ReadAll(io.LimitReader(resp.Body, 16<<20))
}
