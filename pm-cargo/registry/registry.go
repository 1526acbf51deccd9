// Package registry is a client for a cargo registry's sparse index
// (config.json and the per-crate index files) and its web API search
// (/api/v1/crates?q=). It reads only; crate downloads go through cargo.
package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/redirect"
)

// DefaultUserAgent identifies Symposium to registries, as crates.io's data
// access policy asks.
const DefaultUserAgent = "symposium-pm-cargo (https://github.com/symposium-dev/symposium-pm)"

// maxIndexFile and maxAPIBody cap what the client reads.
const (
	maxIndexFile = 64 << 20
	maxAPIBody   = 8 << 20
)

// MaxCacheFile caps one of cargo's on-disk index cache files read back
// (128 MiB): it holds an index file's lines, each once, with their
// versions, so twice what the client reads of an index file leaves room.
const MaxCacheFile = 2 * maxIndexFile

// Client talks to one sparse registry.
//
// The token is sent as cargo sends it (RFC 3139): config.json is asked for
// without it, and again with it only when that answers 401; index files and
// the web API get it only when config.json says "auth-required": true
// (AuthRequired). A redirect to another origin (scheme, host or port) never
// carries it (redirect.Check), as libcurl does not carry it for cargo.
type Client struct {
	// HTTP is the HTTP client; nil means http.DefaultClient. A client
	// without a CheckRedirect policy is used with redirect.Check, so that
	// no redirect takes the token (or a cookie) to another origin.
	HTTP *http.Client
	// Index is the sparse index base URL without the sparse+ prefix,
	// ending in "/".
	Index string
	// UserAgent is sent with every request; empty means DefaultUserAgent.
	UserAgent string
	// Token is the registry's token, sent as the Authorization header
	// only when the registry asks for it (see Client). It never appears
	// in errors.
	Token string
	// AuthRequired is config.json's "auth-required" (IndexConfig's), set
	// by the caller once Config has answered: with it, Token goes to
	// index files, the web API and config.json itself; without it, only
	// to a config.json that answered 401 without it.
	AuthRequired bool
}

// IndexConfig is the index's config.json.
type IndexConfig struct {
	DL           string `json:"dl"`
	API          string `json:"api"`
	AuthRequired bool   `json:"auth-required"`
}

// Version is one line of an index file.
type Version struct {
	Name   string `json:"name"`
	Vers   string `json:"vers"`
	Cksum  string `json:"cksum"`
	Yanked bool   `json:"yanked"`
}

// Hit is one search result.
type Hit struct {
	Name        string `json:"name"`
	MaxVersion  string `json:"max_version"`
	Description string `json:"description"`
}

// StatusError is a non-success HTTP answer.
type StatusError struct {
	URL    string
	Status int
}

// Error names the URL and the status.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// NotFound reports whether an index answer means "no such crate": 404, 410
// or 451, as cargo treats them.
func (e *StatusError) NotFound() bool {
	return e.Status == http.StatusNotFound || e.Status == http.StatusGone || e.Status == http.StatusUnavailableForLegalReasons
}

// httpClient is c.HTTP (else http.DefaultClient), with redirect.Check as
// its redirect policy when it has none of its own.
func (c *Client) httpClient() *http.Client {
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	if hc.CheckRedirect == nil {
		own := *hc
		own.CheckRedirect = redirect.Check
		hc = &own
	}
	return hc
}

// get fetches u, at most limit bytes, with the token when withToken is set
// (and there is one).
func (c *Client) get(ctx context.Context, u string, limit int64, withToken bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact.URL(u), err)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	if withToken && c.Token != "" {
		req.Header.Set("Authorization", c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact.URL(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, &StatusError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redact.URL(u), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", redact.URL(u), limit)
	}
	return data, nil
}

// unwrapURLError drops *url.Error's own copy of the URL, which may carry
// credentials.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// Config fetches config.json as cargo does: without the token (unless
// AuthRequired is already known), then, when that answers 401 and there
// is a token, once more with it. A 401 without a token, or with the token,
// is a *StatusError of status 401.
func (c *Client) Config(ctx context.Context) (IndexConfig, error) {
	var cfg IndexConfig
	u := c.Index + "config.json"
	data, err := c.get(ctx, u, 1<<20, c.AuthRequired)
	var se *StatusError
	if err != nil && !c.AuthRequired && c.Token != "" && errors.As(err, &se) && se.Status == http.StatusUnauthorized {
		data, err = c.get(ctx, u, 1<<20, true)
	}
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("%sconfig.json: %w", redact.URL(c.Index), err)
	}
	return cfg, nil
}

// IndexPath is the path of a crate's index file: 1/a, 2/ab, 3/a/abc,
// ab/cd/abcd (lower-cased).
func IndexPath(name string) string {
	n := strings.ToLower(name)
	switch len(n) {
	case 0:
		return ""
	case 1:
		return "1/" + n
	case 2:
		return "2/" + n
	case 3:
		return "3/" + n[:1] + "/" + n
	}
	return n[:2] + "/" + n[2:4] + "/" + n
}

// Versions fetches and parses a crate's index file, with the token only
// when AuthRequired is set.
func (c *Client) Versions(ctx context.Context, name string) ([]Version, error) {
	u := c.Index + IndexPath(name)
	data, err := c.get(ctx, u, maxIndexFile, c.AuthRequired)
	if err != nil {
		return nil, err
	}
	return ParseIndexFile(redact.URL(u), data)
}

// ParseIndexFile parses index lines (one JSON object per line; blank lines
// ignored).
func ParseIndexFile(name string, data []byte) ([]Version, error) {
	var out []Version
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxIndexFile)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var v Version
		if err := json.Unmarshal(b, &v); err != nil {
			var je *jsonfile.Error
			if errors.As(jsonfile.Explain(name, b, err), &je) {
				je.Line = line // the line of the index file, not of the object
				return nil, je
			}
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if v.Name == "" || v.Vers == "" {
			return nil, fmt.Errorf("%s:%d: index line without name or vers", name, line)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Search queries the web API at api (config.json's "api") for query, with
// the token only when AuthRequired is set, as cargo search does.
func (c *Client) Search(ctx context.Context, api, query string, perPage int) ([]Hit, error) {
	if api == "" {
		return nil, fmt.Errorf("%s: the registry has no web API (config.json has no \"api\")", redact.URL(c.Index))
	}
	u := strings.TrimSuffix(api, "/") + "/api/v1/crates?q=" + url.QueryEscape(query) + "&per_page=" + strconv.Itoa(perPage)
	data, err := c.get(ctx, u, maxAPIBody, c.AuthRequired)
	if err != nil {
		return nil, err
	}
	var body struct {
		Crates []struct {
			Name        string  `json:"name"`
			MaxVersion  string  `json:"max_version"`
			Description *string `json:"description"`
		} `json:"crates"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("%s: invalid search answer: %w", redact.URL(u), err)
	}
	hits := make([]Hit, 0, len(body.Crates))
	for _, cr := range body.Crates {
		if cr.Name == "" || cr.MaxVersion == "" {
			continue
		}
		h := Hit{Name: cr.Name, MaxVersion: cr.MaxVersion}
		if cr.Description != nil {
			h.Description = strings.TrimSpace(*cr.Description)
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// cacheVersion is the first byte of the index cache files cargo keeps under
// $CARGO_HOME/registry/index/<dir>/.cache/ that this parser understands.
const cacheVersion = 3

// ParseCacheFile parses one of cargo's on-disk index cache files
// ($CARGO_HOME/registry/index/*/.cache/<index path>): a version byte, a
// little-endian u32 index format version, a NUL-terminated header (the
// ETag or Last-Modified), then NUL-terminated pairs of version and JSON
// index line. It lets an offline PM see what cargo last saw, yanked flags
// included, without the network.
func ParseCacheFile(name string, data []byte) ([]Version, error) {
	if len(data) < 5 || data[0] != cacheVersion {
		return nil, fmt.Errorf("%s: not an index cache file of version %d", name, cacheVersion)
	}
	fields := bytes.Split(data[5:], []byte{0})
	if len(fields) < 1 {
		return nil, fmt.Errorf("%s: truncated index cache file", name)
	}
	var out []Version
	for i := 1; i+1 < len(fields); i += 2 {
		line := fields[i+1]
		if len(line) == 0 || line[0] != '{' {
			return nil, fmt.Errorf("%s: entry %d is not an index line", name, (i+1)/2)
		}
		var v Version
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("%s: entry %d: %w", name, (i+1)/2, err)
		}
		out = append(out, v)
	}
	return out, nil
}
