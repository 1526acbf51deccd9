package cargopm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargoconfig"
	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skilltree"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Layer sources, as they appear in messages.
const (
	metadataLayer = "Cargo.toml [package.metadata.symposium]"
	fileLayer     = "SYMPOSIUM.toml"
)

// computeOffers answers active_plugins (see ActivePlugins) for the
// workspace's path dependencies paths, recording in rec every directory
// listed and file read.
func (p *PM) computeOffers(ctx context.Context, deps []protocol.PackageID, paths map[string]string, rec *depcache.Recorder) ([]protocol.Offer, error) {
	srcs := p.recordedSources(ctx, paths, p.vendoredDirs(ctx, rec), rec)
	offers := []protocol.Offer{}
	seen := map[string]bool{}
	log := p.session().Logger
	for _, id := range deps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if id.PM != Name || !validCrateName(id.Name) {
			continue
		}
		req := id.Version
		if req == "" || req == protocol.AnyVersion {
			req = "*"
		} else if exactVersion(req) {
			req = "=" + req
		}
		lc, ok := srcs.find(id.Name, req)
		if !ok {
			log.Debug("cargo: no source on disk", "crate", id.String())
			continue
		}
		key := lc.Name + "@" + lc.Version
		if seen[key] {
			continue
		}
		seen[key] = true
		if !embedsPlugin(lc.Dir, crateRecorder(lc, rec)) {
			continue
		}
		offer, err := p.offer(ctx, lc, rec)
		if err != nil {
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("the plugin of crate %s is not offered: %v", key, err),
				File: filepath.Join(lc.Dir, "Cargo.toml"), Package: crateID(protocol.PackageID{PM: Name, Name: lc.Name, Version: lc.Version})},
				"cargo: crate plugin skipped", "crate", key, "err", err)
			continue
		}
		offers = append(offers, offer)
	}
	return offers, nil
}

// embedsPlugin reports whether the crate at dir declares plugin content.
// Nothing is followed out of the crate: SYMPOSIUM.toml and skills/ count by
// their own entry (a link there is refused later by checkSource), and
// Cargo.toml is read through an os.Root.
func embedsPlugin(dir string, rec *depcache.Recorder) bool {
	rec.ObserveDir(dir)
	rec.Observe(filepath.Join(dir, fileLayer))
	rec.Observe(filepath.Join(dir, "Cargo.toml"))
	rec.ObserveTree(dir, "skills")
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	if _, err := root.Lstat(fileLayer); err == nil {
		return true
	}
	// Parse the manifest only when it mentions the table at all.
	if data, err := pkgfile.ReadRoot(root, "Cargo.toml", pkgfile.MaxManifest); err == nil && bytes.Contains(data, []byte("symposium")) {
		if m, err := cargotoml.Parse(filepath.Join(dir, "Cargo.toml"), data); err == nil {
			// Any [package.metadata.symposium], a table or not: offer
			// reports one that is not a table instead of dropping the
			// crate without a word.
			if _, ok := m.Metadata["symposium"]; ok {
				return true
			}
		}
	}
	if fi, err := root.Lstat("skills"); err != nil || !fi.IsDir() {
		return err == nil // a skills link or file: let checkSource judge it
	}
	return skilltree.Embeds(dir)
}

// offer builds the offer for the crate source lc: the
// [package.metadata.symposium] layer, then SYMPOSIUM.toml over it, name
// defaulting to the crate name and the default skills/ group added unless
// disabled. A layer that does not parse is dropped with a warning.
//
// Each layer dropped is also a diagnostic of the request ctx belongs to.
func (p *PM) offer(ctx context.Context, lc localCrate, rec *depcache.Recorder) (protocol.Offer, error) {
	id := protocol.PackageID{PM: Name, Name: lc.Name, Version: lc.Version}
	root, err := filepath.EvalSymlinks(lc.Dir)
	if err != nil {
		return protocol.Offer{}, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return protocol.Offer{}, err
	}
	// The real directory is the offer's root, recorded even for a crate
	// cargo owns (a cached answer offers only roots it recorded); the
	// crate's files were recorded under lc.Dir, which the stamps follow to
	// the same files, unless cargo owns them.
	rec.ObserveDir(root)
	if a := registryArchive(root); a != "" {
		// checkSource's audit verdict depends on it; cargo writes it
		// once per version, like the source it unpacked.
		crateRecorder(lc, rec).Observe(a)
	}
	if err := p.checkSource(id, localCrate{Name: lc.Name, Version: lc.Version, Dir: root}); err != nil {
		return protocol.Offer{}, err
	}
	// Read through an os.Root so that nothing outside the crate is read,
	// whatever changed since the check.
	r, err := os.OpenRoot(root)
	if err != nil {
		return protocol.Offer{}, err
	}
	defer r.Close()
	var layers []manifest.Layer
	cargoToml, symposiumToml := filepath.Join(root, "Cargo.toml"), filepath.Join(root, fileLayer)
	if m, err := readManifestIn(r, root); err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("cannot read the crate manifest (%v); its [package.metadata.symposium] is ignored", err),
			File: cargoToml, Package: crateID(id)},
			"cargo: cannot read the crate manifest; its [package.metadata.symposium] is ignored", "crate", id.String(), "err", err)
	} else if t, ok := m.Metadata["symposium"]; ok {
		if tbl, ok := t.(map[string]any); ok {
			layers = append(layers, manifest.Layer{Source: metadataLayer, Table: tbl})
		} else {
			p.warn(ctx, pmserver.Diagnostic{Message: "[package.metadata.symposium] is not a table; it is ignored (write it as a [package.metadata.symposium] table)",
				File: cargoToml, Package: crateID(id)},
				"cargo: [package.metadata.symposium] is not a table; ignored", "crate", id.String())
		}
	}
	data, err := pkgfile.ReadRoot(r, fileLayer, pkgfile.MaxManifest)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Over the 1 MiB manifest cap, or changed since the check: this
		// crate is refused, the others are still offered.
		return protocol.Offer{}, protocol.ErrInvalidContent(id, err.Error())
	}
	if err == nil {
		var tbl map[string]any
		if err := tomlfile.Unmarshal(filepath.Join(root, fileLayer), data, &tbl); err != nil {
			d := pmserver.Diagnostic{Message: fmt.Sprintf("SYMPOSIUM.toml is not valid TOML; it is ignored: %v", err),
				File: symposiumToml, Package: crateID(id)}
			// The diagnostic names the file and line itself: the message
			// keeps only the decoder's words.
			var te *tomlfile.Error
			if errors.As(err, &te) {
				d.Line = te.Line
				d.Message = "SYMPOSIUM.toml is not valid TOML; it is ignored: " + te.Msg
				if te.Key != "" {
					d.Message = "SYMPOSIUM.toml is not valid TOML; it is ignored: " + te.Key + ": " + te.Msg
				}
			}
			p.warn(ctx, d,
				"cargo: SYMPOSIUM.toml is not valid TOML; ignored", "crate", id.String(), "err", err)
		} else {
			layers = append(layers, manifest.Layer{Source: fileLayer, Table: tbl})
		}
	}
	m, errs := manifest.Embedded(lc.Name, layers...)
	for _, e := range errs {
		file := cargoToml
		if strings.HasPrefix(e.Error(), fileLayer) {
			file = symposiumToml
		}
		p.warn(ctx, pmserver.Diagnostic{Message: e.Error(), File: file, Package: crateID(id)},
			"cargo: plugin manifest layer dropped", "crate", id.String(), "err", e)
	}
	wire, err := m.WireJSON()
	if err != nil {
		return protocol.Offer{}, fmt.Errorf("encoding the manifest of %s: %w", id, err)
	}
	return protocol.Offer{ID: id, Root: root, Manifest: wire}, nil
}

// readManifestIn reads the Cargo.toml of the crate opened as r at dir: a
// regular file in the crate of at most pkgfile.MaxManifest (1 MiB).
func readManifestIn(r *os.Root, dir string) (*cargotoml.Manifest, error) {
	data, err := pkgfile.ReadRoot(r, "Cargo.toml", pkgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	return cargotoml.Parse(filepath.Join(dir, "Cargo.toml"), data)
}

// vendoredDirs lists the directory sources cargo builds from (see
// cargoconfig.Config.Directories). An unreadable configuration, and what
// cargo warns about its files (a .cargo/config beside a
// .cargo/config.toml), are diagnostics of the request ctx belongs to.
// Every configuration file cargo could read is recorded in rec.
func (p *PM) vendoredDirs(ctx context.Context, rec *depcache.Recorder) []string {
	if rec != nil {
		for _, f := range cargoconfig.Candidates(p.session().Workspace, p.cargoHome()) {
			rec.Observe(f)
		}
	}
	cfg, err := p.cargoConfig()
	if err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("cannot read the cargo configuration (%v); vendored crate sources are not looked at", err)},
			"cargo: cannot read cargo configuration", "err", err)
		return nil
	}
	for _, w := range cfg.Warnings {
		p.warn(ctx, pmserver.Diagnostic{Message: w.Message, File: w.File}, "cargo: "+w.Message)
	}
	return cfg.Directories()
}

// LoadPlugin resolves id's requirement and returns the crate's plugin: from
// disk when a source there satisfies the requirement, else acquired through
// cargo. Any crate yields a plugin (at least the default skills/ group).
func (p *PM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	lc, err := p.resolve(ctx, id, protocol.UpdateNone)
	if protocol.CodeOf(err) == protocol.CodeOffline {
		lc, err = p.resolve(ctx, id, protocol.UpdateCheck)
	}
	if err != nil {
		return nil, err
	}
	o, err := p.offer(ctx, lc, nil)
	if err != nil {
		return nil, err
	}
	return []protocol.Offer{o}, nil
}

// Fetch acquires id at the given update level and reports the exact id and
// the source directory.
func (p *PM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	lc, err := p.resolve(ctx, id, update)
	if err != nil {
		return protocol.FetchResult{}, err
	}
	root, err := filepath.EvalSymlinks(lc.Dir)
	if err != nil {
		return protocol.FetchResult{}, err
	}
	exact := protocol.PackageID{PM: Name, Name: lc.Name, Version: lc.Version}
	if err := p.checkSource(exact, localCrate{Name: lc.Name, Version: lc.Version, Dir: root}); err != nil {
		return protocol.FetchResult{}, err
	}
	return protocol.FetchResult{ID: exact, Root: root}, nil
}
