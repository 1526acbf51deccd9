package gitcache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/symposium-dev/symposium-pm/sdk/gitconfig"
	"github.com/symposium-dev/symposium-pm/sdk/netproxy"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
)

// remote is a parsed registry URL: where to reach it, and the credentials
// that came with it, kept apart so that they never appear in a message.
type remote struct {
	// url is the URL with any credentials removed: safe to log and to store.
	url string
	// endpoint is the parsed URL, credentials removed.
	endpoint *transport.Endpoint
	// user and password came from the URL's userinfo, if any.
	user, password string
}

// parseRemote parses a registry URL: https://, http://, ssh://, git://,
// file://, scp-like user@host:path, or a local path (made absolute).
func parseRemote(raw string) (*remote, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("registry URL is empty")
	}
	if strings.ContainsAny(raw, "\x00\n\r") {
		return nil, errors.New("registry URL contains a control character")
	}
	if !strings.Contains(raw, "://") && !looksSCP(raw) && !filepath.IsAbs(raw) {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, fmt.Errorf("registry path %s: %w", raw, err)
		}
		raw = abs
	}
	ep, err := transport.NewEndpoint(raw)
	if err != nil {
		// The parser quotes the URL it could not parse, password and all,
		// as is or Go-quoted: keep only the cause where there is one, and
		// replace both forms elsewhere.
		shown := redact.URL(raw)
		cause := err.Error()
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			cause = ue.Err.Error()
		}
		cause = strings.ReplaceAll(cause, strconv.Quote(raw), strconv.Quote(shown))
		msg := fmt.Sprintf("registry URL %s: %s", shown, strings.ReplaceAll(cause, raw, shown))
		return nil, &scrubbedError{msg: msg, err: err}
	}
	r := &remote{user: ep.User, password: ep.Password}
	switch ep.Protocol {
	case "http", "https":
		if ep.Host == "" {
			// "https:///user:token@host/r" parses with an empty host and
			// the rest as the path; shown, it would show the token.
			return nil, fmt.Errorf("registry URL %s: no host after %s://", redact.URL(raw), ep.Protocol)
		}
		// Credentials travel as auth, not in the URL.
		clean := *ep
		clean.User, clean.Password = "", ""
		r.endpoint = &clean
		r.url = clean.String()
	case "ssh":
		// The user of an ssh URL is part of the address, not a secret; a
		// password in an ssh URL is dropped from what is shown.
		clean := *ep
		clean.Password = ""
		r.endpoint = &clean
		r.url = clean.String()
		if looksSCP(raw) {
			r.url = raw
			if ep.Password != "" {
				r.url = redact.URL(raw)
			}
		}
		r.user, r.password = "", ep.Password
	case "git":
		// The git protocol has no authentication: user information in a
		// git:// URL is of no use to the daemon and is dropped, as for
		// https, so that a password never reaches a message or state.json.
		clean := *ep
		clean.User, clean.Password = "", ""
		r.endpoint = &clean
		r.url = clean.String()
		r.user, r.password = "", ep.Password
	case "file":
		r.endpoint = ep
		r.url = ep.Path
	default:
		return nil, fmt.Errorf("registry URL %s: unsupported protocol %q", redact.URL(raw), ep.Protocol)
	}
	return r, nil
}

// looksSCP reports whether s is an scp-like address such as git@host:path.
func looksSCP(s string) bool {
	if strings.Contains(s, "://") {
		return false
	}
	at := strings.Index(s, "@")
	colon := strings.Index(s, ":")
	return at > 0 && colon > at && !strings.ContainsAny(s[:at], "/")
}

// scrub removes the remote's secrets from an error message.
func (r *remote) scrub(err error) error {
	if err == nil || r.password == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, r.password) {
		return err
	}
	return &scrubbedError{msg: strings.ReplaceAll(msg, r.password, redact.Mask), err: err}
}

// scrubbedError keeps the identity of a wrapped error while hiding its text.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// isHTTP reports whether the remote speaks git over HTTP(S).
func (r *remote) isHTTP() bool {
	return r.endpoint.Protocol == "http" || r.endpoint.Protocol == "https"
}

// auth returns the credentials that came with the URL, if any.
func (r *remote) auth() transport.AuthMethod {
	if r.isHTTP() && (r.user != "" || r.password != "") {
		return &githttp.BasicAuth{Username: r.user, Password: r.password}
	}
	return nil
}

// proxy returns the proxy git would use for the remote, or the zero value
// to go direct: http.proxy from the user's git configuration (gitProxy),
// else the environment as git's libcurl reads it (https_proxy, http_proxy,
// all_proxy, lower case first: netproxy.FromToolEnv); no_proxy applies to
// both. An empty http.proxy turns proxying off. A malformed setting, or a
// git configuration that does not parse, is an error naming it, as git
// fails on it: going direct instead would go around the proxy the user
// configured.
func (r *remote) proxy(getenv func(string) string) (transport.ProxyOptions, error) {
	if !r.isHTTP() || getenv == nil {
		return transport.ProxyOptions{}, nil
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return transport.ProxyOptions{}, nil
	}
	settings := netproxy.FromToolEnv(getenv)
	configured, found, err := gitProxy(getenv)
	switch {
	case err != nil:
		return transport.ProxyOptions{}, fmt.Errorf("%s: %w", r.url, err)
	case found && configured == "":
		return transport.ProxyOptions{}, nil
	case found:
		settings = settings.Override(netproxy.Settings{HTTP: configured, HTTPS: configured})
	}
	p, err := settings.For(u)
	if err != nil {
		return transport.ProxyOptions{}, fmt.Errorf("%s: %w", r.url, err)
	}
	if p == nil {
		return transport.ProxyOptions{}, nil
	}
	opts := transport.ProxyOptions{URL: (&url.URL{Scheme: p.Scheme, Host: p.Host}).String()}
	if p.User != nil {
		opts.Username = p.User.Username()
		opts.Password, _ = p.User.Password()
	}
	return opts, nil
}

// credentialFill asks git's credential helpers for the remote's credentials
// (`git credential fill`, never prompting). It returns nil when git is not
// installed or no helper knows the host.
func (r *remote) credentialFill(ctx context.Context, environ []string) transport.AuthMethod {
	if !r.isHTTP() {
		return nil
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	var in bytes.Buffer
	fmt.Fprintf(&in, "protocol=%s\nhost=%s\n", r.endpoint.Protocol, r.hostPort())
	if p := strings.TrimPrefix(r.endpoint.Path, "/"); p != "" {
		fmt.Fprintf(&in, "path=%s\n", p)
	}
	if r.user != "" {
		fmt.Fprintf(&in, "username=%s\n", r.user)
	}
	in.WriteString("\n")
	cmd := exec.CommandContext(ctx, gitBin, "credential", "fill")
	cmd.Env = append(append([]string{}, environ...), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var user, pass string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "username":
			user = v
		case "password":
			pass = v
		}
	}
	if pass == "" {
		return nil
	}
	r.password = pass
	r.user = user
	return &githttp.BasicAuth{Username: user, Password: pass}
}

func (r *remote) hostPort() string {
	if r.endpoint.Port != 0 {
		return fmt.Sprintf("%s:%d", r.endpoint.Host, r.endpoint.Port)
	}
	return r.endpoint.Host
}

// gitProxy returns http.proxy from the user's git configuration as git reads
// it outside a repository: the system file ($GIT_CONFIG_SYSTEM, else
// /etc/gitconfig; none when $GIT_CONFIG_NOSYSTEM is true), then the global
// files ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config or
// ~/.config/git/config, then ~/.gitconfig), the later winning.
// (url-specific http.<url>.proxy settings are not read.)
func gitProxy(getenv func(string) string) (value string, found bool, err error) {
	home := getenv("HOME")
	system := "/etc/gitconfig"
	if v := getenv("GIT_CONFIG_SYSTEM"); v != "" {
		system = v
	}
	switch strings.ToLower(getenv("GIT_CONFIG_NOSYSTEM")) {
	case "1", "true", "yes", "on":
		system = ""
	}
	files := gitconfig.Files(system, home, getenv("XDG_CONFIG_HOME"))
	if global := getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = []string{global}
		if system != "" {
			files = []string{system, global}
		}
	}
	return gitconfig.Lookup(files, home, "http.proxy")
}
