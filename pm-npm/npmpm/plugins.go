package npmpm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skilltree"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Layer sources, as named in warnings.
const (
	sourcePackageJSON = `package.json "symposium"`
	sourceTOML        = "SYMPOSIUM.toml"
)

// computeOffers answers active_plugins (see ActivePlugins) from disk,
// recording in rec every directory whose listing and file whose content the
// answer depends on.
func (p *PM) computeOffers(ctx context.Context, deps []protocol.PackageID, rec *depcache.Recorder) ([]protocol.Offer, error) {
	offers := []protocol.Offer{}
	seen := map[protocol.PackageID]bool{}
	want := map[string]bool{}
	for _, d := range deps {
		if d.PM == Name && packagejson.ValidName(d.Name) {
			want[d.Name] = true
		}
	}
	// Each node_modules directory is listed once for all dependencies,
	// rather than probed for each dependency in each member and parent.
	idx := p.indexInstalled(rec, p.installedParents(rec), want)
	for _, d := range deps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d.PM != Name || seen[d] || !packagejson.ValidName(d.Name) {
			continue
		}
		seen[d] = true
		c, ok := p.localCopy(ctx, rec, idx, d)
		if !ok {
			p.log.Debug("dependency not installed or cached", "package", d.Name, "version", d.Version)
			continue
		}
		// An installer-owned copy's files are stood for by its installer's
		// record; only its root, if offered, is recorded, since a loaded
		// answer's roots must be directories it recorded.
		mrec := rec
		if c.installerOwned {
			mrec = nil
		}
		// An exact version asked for is the one answered, though the
		// package.json may spell it otherwise ("v1.0.0" for 1.0.0).
		version := c.version
		if d.Version != protocol.AnyVersion && d.Version != "" {
			version = d.Version
		}
		m, embeds := p.manifest(ctx, mrec, d.Name, version, c.root, c.pkg)
		if !embeds || m == nil {
			continue
		}
		if c.installerOwned {
			rec.ObserveDir(c.root)
		}
		offers = append(offers, protocol.Offer{
			ID:       protocol.PackageID{PM: Name, Name: d.Name, Version: version},
			Root:     c.root,
			Manifest: m,
		})
	}
	return offers, nil
}

// localCopy finds dep on disk: the exact version when dep names one (any
// version for "*"; versions equal as node-semver compares them, see
// sameVersion), installed copies (members' node_modules first, then the
// directories up to the project root, the root's and its parents') before
// cached ones.
func (p *PM) localCopy(ctx context.Context, rec *depcache.Recorder, idx *installIndex, dep protocol.PackageID) (candidate, bool) {
	want := func(v string) bool {
		return dep.Version == protocol.AnyVersion || dep.Version == "" || sameVersion(dep.Version, v)
	}
	if c, ok := p.installedCopy(ctx, rec, idx, dep.Name, want); ok {
		return c, true
	}
	for _, c := range p.cachedCopies(rec, dep.Name) {
		if want(c.version) {
			return c, true
		}
	}
	return candidate{}, false
}

// LoadPlugin implements pmserver.PM: it serves an installed or cached copy
// satisfying the requirement when there is one, else fetches with update
// level "check". Any npm package yields a plugin (at least the default
// skills/ group).
func (p *PM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	c, ok := p.resolveLocal(id.Name, id.Version)
	if !ok {
		var err error
		c, err = p.fetch(ctx, id, protocol.UpdateCheck)
		if err != nil {
			return nil, err
		}
	}
	m, _ := p.manifest(ctx, nil, id.Name, c.version, c.root, nil)
	if m == nil {
		return []protocol.Offer{}, nil
	}
	return []protocol.Offer{{
		ID:       protocol.PackageID{PM: Name, Name: id.Name, Version: c.version},
		Root:     c.root,
		Manifest: m,
	}}, nil
}

// manifest builds the wire manifest of the package unpacked at root, and
// reports whether the package embeds a plugin (SYMPOSIUM.toml, a
// "symposium" object in package.json, or skills/**/SKILL.md). pkg is root's
// parsed package.json when the caller has it, else nil. Layers that fail to
// parse are dropped with a warning, as Symposium does. The package's
// directory, its package.json, SYMPOSIUM.toml and skills/ tree are recorded
// in rec.
//
// Each layer dropped is also a diagnostic of the request ctx belongs to.
func (p *PM) manifest(ctx context.Context, rec *depcache.Recorder, name, version, root string, pkg *packagejson.Manifest) (json.RawMessage, bool) {
	rec.ObserveDir(root)
	embeds := false
	id := pkgID(name, version)
	pkgPath := filepath.Join(root, "package.json")
	var jsonLayer, tomlLayer map[string]any
	var err error
	if pkg == nil {
		rec.Observe(filepath.Join(root, "package.json"))
		pkg, err = packagejson.ReadPackage(root)
	}
	if err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf(`cannot read package.json (%v); its "symposium" layer is ignored`, err), File: pkgPath, Package: id},
			"cannot read package.json; its \"symposium\" layer is ignored", "package", name, "root", root, "err", err)
	} else if len(pkg.Symposium) > 0 {
		dec := json.NewDecoder(bytes.NewReader(pkg.Symposium))
		var v any
		if err := dec.Decode(&v); err == nil {
			if t, ok := v.(map[string]any); ok {
				jsonLayer, embeds = t, true
			} else {
				p.warn(ctx, pmserver.Diagnostic{Message: `package.json "symposium" is not an object; it is ignored (write it as {"skills": ...})`, File: pkgPath, Package: id},
					`ignoring package.json "symposium": not an object`, "package", name)
			}
		}
	}
	tomlPath := filepath.Join(root, "SYMPOSIUM.toml")
	rec.Observe(tomlPath)
	data, err := pkgfile.ReadFile(root, "SYMPOSIUM.toml", pkgfile.MaxManifest)
	switch {
	case err == nil:
		embeds = true
		if err := tomlfile.Unmarshal(tomlPath, data, &tomlLayer); err != nil {
			tomlLayer = nil // a document that does not decode contributes nothing
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("SYMPOSIUM.toml: layer ignored: %v", err), File: tomlPath, Package: id},
				"SYMPOSIUM.toml: layer ignored", "package", name, "err", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		// Present but unusable (not a regular file, a link out of the
		// package, over the cap): this package's layer only is dropped.
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("SYMPOSIUM.toml: layer ignored: %v", err), File: tomlPath, Package: id},
			"SYMPOSIUM.toml: layer ignored", "package", name, "err", err)
	}
	rec.ObserveTree(root, manifest.DefaultSkillsPath)
	if !embeds && skilltree.Embeds(root) {
		embeds = true
	}
	m, errs := manifest.Embedded(name,
		manifest.Layer{Source: sourcePackageJSON, Table: jsonLayer},
		manifest.Layer{Source: sourceTOML, Table: tomlLayer})
	for _, err := range errs {
		file := pkgPath
		if strings.HasPrefix(err.Error(), sourceTOML) {
			file = tomlPath
		}
		p.warn(ctx, pmserver.Diagnostic{Message: err.Error(), File: file, Package: id},
			"plugin layer ignored", "package", name, "err", err)
	}
	wire, err := m.WireJSON()
	if err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("cannot encode the plugin manifest (%v); no plugin is offered", err), Package: id},
			"cannot encode plugin manifest", "package", name, "err", err)
		return nil, false
	}
	return wire, embeds
}
