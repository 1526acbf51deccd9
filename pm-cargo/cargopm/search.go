package cargopm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargoconfig"
	"github.com/symposium-dev/symposium-pm/pm-cargo/registry"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// searchPageSize is how many hits search asks the registry for.
const searchPageSize = 20

// cratesIOAPI is the web API of crates.io, used when the index is crates.io's
// git index (which has no config.json reachable over HTTP).
const cratesIOAPI = "https://crates.io"

// Search asks the registry's web API (named by the index's config.json) for
// crates matching query. A vendored or local-registry source is searched on
// disk instead.
func (p *PM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	cfg, err := p.cargoConfig()
	if err != nil {
		return nil, err
	}
	src, err := cfg.CratesIO(p.session().Env.Get)
	if err != nil {
		return nil, err
	}
	if src.Kind == cargoconfig.Directory {
		return searchDirectory(src.Dir, query), nil
	}
	client := &registry.Client{HTTP: p.httpClient}
	api := ""
	if base, ok := src.Sparse(); ok {
		// As cargo: config.json without the token, again with it on a 401;
		// the web API gets it only when config.json says auth-required.
		client.Index = base
		client.Token = p.registryToken(src.Name)
		ic, err := client.Config(ctx)
		if err != nil {
			var se *registry.StatusError
			if errors.As(err, &se) && se.Status == http.StatusUnauthorized {
				return nil, protocol.ErrRegistry(nil, se.URL, se.Status, "registry request failed: %v; %s", se, authHint(src.Name, client.Token != ""))
			}
			return nil, registryError(nil, base+"config.json", err)
		}
		api = ic.API
		client.AuthRequired = ic.AuthRequired
	} else if src.Index == cargoconfig.CratesIOGit {
		api = cratesIOAPI
	} else {
		return nil, protocol.ErrRegistry(nil, redact.URL(src.Index), 0, "search: the %s index is not a sparse index, so its web API is unknown", src.Name)
	}
	hits, err := client.Search(ctx, api, query, searchPageSize)
	if err != nil {
		return nil, registryError(nil, api, err)
	}
	out := make([]protocol.SearchHit, 0, len(hits))
	for _, h := range hits {
		if !validCrateName(h.Name) {
			continue
		}
		out = append(out, protocol.SearchHit{ID: protocol.PackageID{PM: Name, Name: h.Name, Version: h.MaxVersion}, Description: h.Description})
	}
	return out, nil
}

// registryToken returns the token cargo would send to the named registry:
// from the environment (CARGO_REGISTRY_TOKEN for crates.io,
// CARGO_REGISTRIES_<NAME>_TOKEN otherwise), else from
// $CARGO_HOME/credentials.toml ([registry] or [registries.<name>]). The
// token is never logged.
func (p *PM) registryToken(name string) string {
	env := p.session().Env
	if t := env.Get(tokenVar(name)); t != "" {
		return t
	}
	home := p.cargoHome()
	if home == "" {
		return ""
	}
	for _, f := range []string{"credentials.toml", "credentials"} {
		data, err := pkgfile.ReadUserFile(filepath.Join(home, f), pkgfile.MaxManifest)
		if err != nil {
			continue
		}
		var creds struct {
			Registry   struct{ Token string } `toml:"registry"`
			Registries map[string]struct {
				Token string `toml:"token"`
			} `toml:"registries"`
		}
		if err := toml.Unmarshal(data, &creds); err != nil {
			p.session().Logger.Warn("cargo: cannot read the credentials file", "file", filepath.Join(home, f))
			return ""
		}
		if name == "crates-io" {
			return creds.Registry.Token
		}
		return creds.Registries[name].Token
	}
	return ""
}

// registryError turns a client error into -32012 with the status and a
// credential-free URL.
func registryError(id *protocol.PackageID, url string, err error) error {
	var se *registry.StatusError
	if errors.As(err, &se) {
		return protocol.ErrRegistry(id, se.URL, se.Status, "registry request failed: %v", se)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return protocol.ErrRegistry(id, redact.URL(url), 0, "registry request failed: %s", redact.Error(err))
}

// authHint is what cargo tells the user when config.json answers 401: the
// registry wants a token and none is configured for it, or it rejected the
// one sent.
func authHint(registry string, hadToken bool) string {
	if hadToken {
		return fmt.Sprintf("the registry rejected the token configured for `%s`", registry)
	}
	login := "cargo login --registry " + registry
	if registry == "crates-io" {
		login = "cargo login"
	}
	return fmt.Sprintf("the registry requires a token and none is configured for `%s`: run `%s` or set %s", registry, login, tokenVar(registry))
}

// tokenVar is the environment variable cargo reads the named registry's
// token from.
func tokenVar(registry string) string {
	if registry == "crates-io" {
		return "CARGO_REGISTRY_TOKEN"
	}
	return "CARGO_REGISTRIES_" + envVarName(registry) + "_TOKEN"
}

// searchDirectory matches query against the crates of a vendored directory.
func searchDirectory(dir, query string) []protocol.SearchHit {
	entries, _ := os.ReadDir(dir)
	best := map[string]string{}
	q := strings.ToLower(query)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m, err := readPackage(dir + "/" + e.Name())
		if err != nil || !strings.Contains(strings.ToLower(m.name), q) {
			continue
		}
		if old, ok := best[m.name]; !ok {
			best[m.name] = m.version
		} else if c, err := versions.Cargo.Compare(m.version, old); err == nil && c > 0 {
			best[m.name] = m.version
		}
	}
	out := make([]protocol.SearchHit, 0, len(best))
	for n, v := range best {
		out = append(out, protocol.SearchHit{ID: protocol.PackageID{PM: Name, Name: n, Version: v}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.Name < out[j].ID.Name })
	return out
}
