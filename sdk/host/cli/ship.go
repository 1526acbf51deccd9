package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pydist"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Ways a plugin ships, as validate infers them from the path it is given.
const (
	shipManifest  = "manifest file"
	shipPlugin    = "registry entry"
	shipRegistry  = "registry"
	shipCrate     = "crate"
	shipNPM       = "npm package"
	shipPython    = "python distribution"
	shipWheel     = "wheel"
	shipWorkspace = "workspace"
)

// shipping is what validate found at a path: how the plugin ships and the
// origin whose rules apply.
type shipping struct {
	// As is one of the ship* kinds.
	As string `json:"as"`
	// Origin is the rule set: registry, workspace or package.
	Origin string `json:"origin"`
	// Dir is the directory the plugin (or registry) lives in.
	Dir string `json:"-"`
	// File is the package file (Cargo.toml, package.json, pyproject.toml)
	// or the manifest file given.
	File string `json:"-"`
	// DistInfo, for a Python distribution given as its *.dist-info
	// directory, is that directory: the one distribution of Dir checked.
	DistInfo string `json:"-"`
}

// inferShipping says how the plugin at path ships. A file names itself (a
// package file, a wheel, a manifest); a directory is a crate or a Cargo
// workspace (Cargo.toml), an npm package (package.json), a Python
// distribution (pyproject.toml, or a *.dist-info directory inside), a
// workspace (.symposium/), a registry entry (SYMPOSIUM.toml or SKILL.md), or
// else a registry.
func inferShipping(path string) (shipping, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return shipping{}, err
	}
	if !fi.IsDir() {
		dir := filepath.Dir(path)
		switch base := filepath.Base(path); {
		case base == "Cargo.toml" || base == "package.json" || base == "pyproject.toml":
			return inferShipping(dir)
		case strings.EqualFold(filepath.Ext(base), ".whl"):
			return shipping{As: shipWheel, Origin: "package", File: path}, nil
		case base == manifest.ManifestFile:
			// The SYMPOSIUM.toml of a package or workspace is read with
			// that origin's rules, not as a registry entry.
			if s, err := inferShipping(dir); err == nil && s.As != shipPlugin && s.As != shipRegistry {
				return s, nil
			}
		}
		return shipping{As: shipManifest, Origin: "registry", File: path, Dir: dir}, nil
	}
	if strings.HasSuffix(filepath.Base(filepath.Clean(path)), ".dist-info") {
		// One installed distribution: its plugin lives beside it, in the
		// site-packages directory holding it.
		return shipping{As: shipPython, Origin: "package", Dir: filepath.Dir(filepath.Clean(path)), DistInfo: filepath.Clean(path)}, nil
	}
	// A name counts by its own entry, as the PMs count it: a link or a
	// directory there is judged when it is read.
	has := func(name string) bool { _, err := os.Lstat(filepath.Join(path, name)); return err == nil }
	switch {
	case has("Cargo.toml"):
		file := filepath.Join(path, "Cargo.toml")
		// One that cannot be read is a crate, and checkPackage says why.
		if data, err := pkgfile.ReadFile(path, "Cargo.toml", pkgfile.MaxManifest); err == nil {
			if tbl, err := decodeTable(file, data); err == nil {
				if _, ok := tbl["package"]; !ok {
					if _, ok := tbl["workspace"]; ok {
						return shipping{As: shipWorkspace, Origin: "workspace", Dir: path}, nil
					}
				}
			}
		}
		return shipping{As: shipCrate, Origin: "package", Dir: path, File: file}, nil
	case has("package.json"):
		return shipping{As: shipNPM, Origin: "package", Dir: path, File: filepath.Join(path, "package.json")}, nil
	case has("pyproject.toml"):
		return shipping{As: shipPython, Origin: "package", Dir: path, File: filepath.Join(path, "pyproject.toml")}, nil
	case len(distInfos(path)) > 0:
		return shipping{As: shipPython, Origin: "package", Dir: path}, nil
	case has(".symposium"):
		return shipping{As: shipWorkspace, Origin: "workspace", Dir: path}, nil
	}
	if _, ok := layout.Classify(path); ok {
		return shipping{As: shipPlugin, Origin: "registry", Dir: path}, nil
	}
	return shipping{As: shipRegistry, Origin: "registry", Dir: path}, nil
}

// pmOf names the PM that serves a package file's packages.
func pmOf(file string) string {
	switch filepath.Base(file) {
	case "Cargo.toml":
		return "cargo"
	case "package.json":
		return "npm"
	}
	return "pypi"
}

// checkPackage checks the plugin a package embeds, merged from its layers
// exactly as its PM merges them (the native declaration, then a
// SYMPOSIUM.toml beside it), with the package origin's rules. Every file
// is read as the PM reads it (sdk/pkgfile): a regular file inside the
// package of at most pkgfile.MaxManifest bytes; one that is not is a
// problem naming it and the cause.
func checkPackage(ctx context.Context, s shipping) []layout.Report {
	if s.File == "" {
		return checkDistribution(ctx, s.Dir, s.Dir, s.DistInfo)
	}
	r := layout.Report{File: s.File, Kind: "plugin"}
	data, err := pkgfile.ReadFile(s.Dir, filepath.Base(s.File), pkgfile.MaxManifest)
	if err != nil {
		r.Problems = append(r.Problems, manifest.Problem{File: s.File, Message: fmt.Sprintf(
			"cannot be read (%s): the %s PM ignores the %s, and nothing else of this %s is checked",
			pkgfile.Cause(err), pmOf(s.File), nativeLayer(s), s.As)})
		return []layout.Report{r}
	}
	m, layerErrs, err := packageManifest(s.File, data)
	if err != nil {
		r.Problems = append(r.Problems, problemOf(s.File, err)...)
		return []layout.Report{r}
	}
	for _, e := range layerErrs {
		r.Problems = append(r.Problems, problemOf(s.File, e)...)
	}
	if len(r.Problems) == 0 && !declaresPlugin(s, data) {
		msg := fmt.Sprintf("this %s embeds no plugin: it has no %s, no %s and no skills/ directory with a %s", s.As, nativeLayer(s), manifest.ManifestFile, skill.File)
		if declaresEntryPoints(s, data) {
			msg = fmt.Sprintf("this source tree declares [project.entry-points.%[1]s], which the pypi PM reads only from an installed distribution "+
				"(its entry_points.txt), never from pyproject.toml: validate the wheel built from it (a .whl file) or the site-packages it is installed in; "+
				"in a source tree the PM reads only %[2]s and a %[3]s at its root",
				pydist.EntryPointGroup, nativeLayer(s), manifest.ManifestFile)
		}
		r.Problems = append(r.Problems, manifest.Problem{File: s.File, Message: msg})
		return []layout.Report{r}
	}
	return []layout.Report{finishReport(ctx, r, m, s.Dir, len(layerErrs) == 0)}
}

// declaresEntryPoints reports whether a Python source tree, whose
// pyproject.toml holds data, declares entry points in the group through
// which an installed distribution offers its plugins: they count only once
// installed, so validating the tree alone finds no plugin.
func declaresEntryPoints(s shipping, data []byte) bool {
	if filepath.Base(s.File) != "pyproject.toml" {
		return false
	}
	tbl, err := decodeTable(s.File, data)
	if err != nil {
		return false
	}
	proj, _ := tbl["project"].(map[string]any)
	eps, _ := proj["entry-points"].(map[string]any)
	_, ok := eps[pydist.EntryPointGroup]
	return ok
}

// nativeLayer names the package file's own plugin declaration.
func nativeLayer(s shipping) string {
	switch filepath.Base(s.File) {
	case "Cargo.toml":
		return "[package.metadata.symposium] in Cargo.toml"
	case "package.json":
		return `"symposium" field in package.json`
	}
	return "[tool.symposium] in pyproject.toml"
}

// declaresPlugin reports whether a package, whose package file holds data,
// declares a plugin in any layer or ships skills. A SYMPOSIUM.toml counts
// by its own entry, as the PMs count it.
func declaresPlugin(s shipping, data []byte) bool {
	if _, err := os.Lstat(filepath.Join(s.Dir, manifest.ManifestFile)); err == nil {
		return true
	}
	if skill.Embeds(s.Dir) {
		return true
	}
	tbl, err := decodeTable(s.File, data)
	if err != nil {
		return false
	}
	switch filepath.Base(s.File) {
	case "Cargo.toml":
		p, _ := tbl["package"].(map[string]any)
		md, _ := p["metadata"].(map[string]any)
		_, ok := md["symposium"]
		return ok
	case "package.json":
		_, ok := tbl["symposium"]
		return ok
	}
	t, _ := tbl["tool"].(map[string]any)
	_, ok := t["symposium"]
	return ok
}

// problemOf renders an error about file as problems, keeping each
// problem's own place: every one of a [manifest.Problems], in order. The
// problems of a layer ignored are its own file's.
func problemOf(file string, err error) []manifest.Problem {
	var li layerIgnored
	if errors.As(err, &li) {
		file = li.file
	}
	var p manifest.Problem
	if errors.As(err, &p) {
		if p.File == "" {
			p.File = file
		}
		return []manifest.Problem{p}
	}
	var ps manifest.Problems
	if errors.As(err, &ps) && len(ps) > 0 {
		out := make([]manifest.Problem, len(ps))
		for i, p := range ps {
			if p.File == "" {
				p.File = file
			}
			out[i] = p
		}
		return out
	}
	return []manifest.Problem{{File: file, Message: err.Error()}}
}

// finishReport validates m, the merged manifest of a package plugin rooted
// at dir, and checks the skills of its local groups inside dir as the
// host walks them (layout.CheckSkills).
func finishReport(ctx context.Context, r layout.Report, m *manifest.Manifest, dir string, layersOK bool) layout.Report {
	wire, err := m.WireJSON()
	if err == nil {
		m, err = manifest.DecodeJSON(wire)
	}
	if err != nil {
		r.Problems = append(r.Problems, problemOf(r.File, err)...)
		return r
	}
	r.Name = m.Name
	p, ps := manifest.Validate(m, manifest.ValidateOptions{Origin: manifest.OriginPackage, DefaultName: m.Name, File: r.File})
	r.Problems = append(r.Problems, ps...)
	if p == nil {
		return r
	}
	r.Plugin, r.Valid, r.Name = p, layersOK, p.Name
	root, err := os.OpenRoot(dir)
	if err != nil {
		r.Valid, r.Plugin = false, nil
		r.Problems = append(r.Problems, manifest.Problem{File: r.File, Message: fmt.Sprintf("the plugin root %s cannot be opened: %v", dir, err)})
		return r
	}
	defer root.Close()
	layout.CheckSkills(ctx, &r, root, p, layout.SkillCheck{File: r.File})
	return r
}

// distInfos lists the *.dist-info directories of an unpacked distribution.
func distInfos(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if de.IsDir() && strings.HasSuffix(de.Name(), ".dist-info") {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out
}

// checkDistribution checks the plugins of the unpacked Python
// distributions at site (installed ones, or a wheel's contents), as the
// pypi PM finds them: the import packages its entry points in group
// "symposium" name, or else each of its own top-level packages (from its
// RECORD, else its top_level.txt) that holds a SYMPOSIUM.toml. shown
// replaces site in the paths reported (the wheel's name for a wheel).
// only, when set, is the one *.dist-info directory to check. When site
// holds several distributions (a site-packages directory), those that
// embed no plugin are left out, and saying so is left to the case where
// none does.
func checkDistribution(ctx context.Context, site, shown, only string) []layout.Report {
	var reports []layout.Report
	dis := distInfos(site)
	if only != "" {
		dis = []string{only}
	}
	several := len(dis) > 1
	for _, di := range dis {
		name := strings.SplitN(strings.TrimSuffix(filepath.Base(di), ".dist-info"), "-", 2)[0]
		name = pyname.Normalize(name)
		// roots are the plugin roots, each with the plugin name the PM
		// gives it: the distribution's, or with several entry points each
		// entry point's.
		type pluginRoot struct{ dir, name string }
		var roots []pluginRoot
		// The entry points and top-level packages the pypi PM reads
		// (sdk/pydist): an entry_points.txt that does not parse whole
		// declares nothing, as the PM ignores it.
		var eps []pydist.EntryPoint
		epf := filepath.Join(di, pydist.EntryPointsFile)
		if data, err := pkgfile.ReadFile(di, pydist.EntryPointsFile, pkgfile.MaxManifest); err == nil {
			groups, err := pydist.ParseEntryPoints(data)
			if err != nil {
				reports = append(reports, layout.Report{File: epf, Kind: "plugin", Problems: []manifest.Problem{{File: epf, Message: err.Error() + "; the pypi PM ignores every entry point of this file"}}})
			}
			eps = groups[pydist.EntryPointGroup]
		} else if !errors.Is(err, fs.ErrNotExist) {
			reports = append(reports, layout.Report{File: epf, Kind: "plugin", Problems: []manifest.Problem{{File: epf, Message: fmt.Sprintf("cannot be read (%s); the pypi PM ignores the entry points it declares", pkgfile.Cause(err))}}})
		}
		for _, ep := range eps {
			rel, ok := pydist.ModuleDir(ep.Module())
			d := filepath.Join(site, rel)
			if fi, err := os.Stat(d); !ok || err != nil || !fi.IsDir() {
				reports = append(reports, layout.Report{File: epf, Kind: "plugin", Problems: []manifest.Problem{{
					File: epf, Line: ep.Line, Field: pydist.EntryPointGroup + "." + ep.Name,
					Message: fmt.Sprintf("entry point %s = %q names no package directory in the distribution", ep.Name, ep.Value)}}})
				continue
			}
			pr := pluginRoot{dir: d, name: name}
			if len(eps) > 1 {
				pr.name = ep.Name
			}
			roots = append(roots, pr)
		}
		listed := true
		if len(eps) == 0 {
			tops := pydist.ReadTopLevel(di)
			listed = tops.Listed
			for _, err := range []error{tops.RecordErr, tops.TopLevelErr} {
				if err != nil {
					reports = append(reports, layout.Report{File: di, Kind: "plugin", Problems: []manifest.Problem{{File: di, Message: err.Error()}}})
				}
			}
			for _, top := range tops.Names {
				d := filepath.Join(site, top)
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					continue
				}
				// Counted by its own entry, as the pypi PM counts it.
				if _, err := os.Lstat(filepath.Join(d, manifest.ManifestFile)); err == nil {
					roots = append(roots, pluginRoot{dir: d, name: name})
				}
			}
		}
		for _, root := range roots {
			d := root.dir
			file := filepath.Join(d, manifest.ManifestFile)
			r := layout.Report{File: file, Kind: "plugin"}
			var layers []manifest.Layer
			data, err := pkgfile.ReadFile(d, manifest.ManifestFile, pkgfile.MaxManifest)
			switch {
			case err == nil:
				tbl, err := decodeTable(file, data)
				if err != nil {
					r.Problems = append(r.Problems, problemOf(file, err)...)
					reports = append(reports, r)
					continue
				}
				layers = append(layers, manifest.Layer{Source: file, Table: tbl})
			case !errors.Is(err, fs.ErrNotExist):
				r.Problems = append(r.Problems, manifest.Problem{File: file, Message: fmt.Sprintf(
					"cannot be read (%s): the pypi PM does not offer this package", pkgfile.Cause(err))})
				reports = append(reports, r)
				continue
			}
			m, errs := manifest.Embedded(root.name, layers...)
			for _, e := range errs {
				r.Problems = append(r.Problems, problemOf(file, e)...)
			}
			reports = append(reports, finishReport(ctx, r, m, d, len(errs) == 0))
		}
		if len(roots) == 0 && len(eps) == 0 && !several {
			msg := "this distribution embeds no plugin: no entry point in group \"symposium\" and no top-level package (per its RECORD or top_level.txt) with a " + manifest.ManifestFile
			if !listed {
				msg = "this distribution embeds no plugin: no entry point in group \"symposium\", and no RECORD or top_level.txt to list its top-level packages (a " + manifest.ManifestFile + " in one of them would be the plugin)"
			}
			reports = append(reports, layout.Report{File: di, Kind: "plugin", Problems: []manifest.Problem{{File: di, Message: msg}}})
		}
	}
	if several && len(reports) == 0 {
		reports = append(reports, layout.Report{File: site, Kind: "plugin", Problems: []manifest.Problem{{File: site,
			Message: fmt.Sprintf("none of the %d distributions here embeds a plugin: none has an entry point in group \"symposium\" or a top-level package (per its RECORD or top_level.txt) with a %s", len(dis), manifest.ManifestFile)}}})
	}
	if shown != site {
		for i := range reports {
			reports[i].File = strings.Replace(reports[i].File, site, shown, 1)
			for j := range reports[i].Problems {
				reports[i].Problems[j].File = strings.Replace(reports[i].Problems[j].File, site, shown, 1)
			}
			for j := range reports[i].Skills {
				reports[i].Skills[j].File = strings.Replace(reports[i].Skills[j].File, site, shown, 1)
			}
		}
	}
	return reports
}

// checkWheel unpacks a wheel into a temporary directory, under the rules
// and caps every PM unpacks archives with (sdk/archive), and checks it as
// an unpacked distribution.
func checkWheel(ctx context.Context, path string) ([]layout.Report, error) {
	// A regular file, opened without waiting on a FIFO (sdk/pkgfile); the
	// archive's own caps bound what is read from it.
	f, err := pkgfile.Open(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "symposium-validate-wheel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := archive.ExtractZip(ctx, f, fi.Size(), root, archive.Options{Name: path}); err != nil {
		return nil, err
	}
	if len(distInfos(tmp)) == 0 {
		return nil, fmt.Errorf("%s: no .dist-info directory: not a wheel", path)
	}
	return checkDistribution(ctx, tmp, path+"!", ""), nil
}

// checkWorkspace checks a workspace's own plugin (its SYMPOSIUM.toml, or
// its skills/ directory) with the workspace origin's rules: no dormancy.
func checkWorkspace(ctx context.Context, dir, name string) ([]layout.Report, error) {
	file := filepath.Join(dir, manifest.ManifestFile)
	if _, err := os.Stat(file); err == nil {
		return layout.CheckPath(file, layout.CheckOptions{Origin: manifest.OriginWorkspace, DefaultName: name})
	}
	if skill.Embeds(dir) {
		abs, _ := filepath.Abs(dir)
		m, _ := manifest.DecodeJSON(json.RawMessage(`{"skills":[{"source":{"path":"skills"}}]}`))
		r := layout.Report{File: filepath.Join(dir, manifest.DefaultSkillsPath), Kind: "plugin"}
		r = finishReport(ctx, r, m, dir, true)
		if r.Name == "" {
			r.Name = cmp.Or(name, filepath.Base(abs))
		}
		return []layout.Report{r}, nil
	}
	return nil, fmt.Errorf("%s: the workspace has no plugin of its own: no %s and no skills/ directory", dir, manifest.ManifestFile)
}
