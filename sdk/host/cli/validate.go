package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

const validateUsage = `Usage: symposium-pm validate [--json] [--origin registry|workspace|package] [--name N] PATH...

Checks Symposium plugins the way Symposium and the PMs load them. What each
PATH is decides how it is read, and the first line for it says so:

  a crate (directory or Cargo.toml)      [package.metadata.symposium] and a
                                         SYMPOSIUM.toml beside it, merged as
                                         the cargo PM merges them; skills/
  an npm package (directory or           its "symposium" field and a
    package.json)                        SYMPOSIUM.toml, merged as the npm PM
                                         merges them; skills/
  a Python distribution (a source tree   [tool.symposium] and SYMPOSIUM.toml;
    with pyproject.toml, an unpacked     or the packages its "symposium" entry
    distribution or site-packages with   points name, else its top-level
    *.dist-info, one *.dist-info         packages (per RECORD, else
    directory, or a .whl file)           top_level.txt) with a SYMPOSIUM.toml
  a workspace (a Cargo workspace or a    its own SYMPOSIUM.toml or skills/,
    directory with .symposium/)          with the workspace rules (no dormancy)
  a registry entry (a directory with     the registry rules
    SYMPOSIUM.toml or SKILL.md), a
    manifest file, or a registry
    directory (every entry)

--origin overrides the rules inferred for manifest files and plugin
directories. Every file is read as the PM serving it reads it: a file it
would refuse (a link leading out of the package, one over 1 MiB, a directory
or FIFO where a file is expected) is a problem naming the file and the cause.
Every problem is printed as file:line: field: message. Exit
status: 0 when everything is valid (warnings allowed), 1 otherwise, 2 for bad
usage.

With --json prints {"version":1,"valid","checked":[{"path","as","origin"}],
"plugins":[...],"errors":[...]}.

`

const manifestUsage = `Usage: symposium-pm manifest [--pretty] [--package NAME] FILE

Prints the wire JSON of a plugin manifest: exactly what a PM puts in an
offer. FILE is
  - a SYMPOSIUM.toml (or any TOML manifest) or a JSON manifest: printed as
    is, as a registry PM sends it; with --package NAME, merged as the
    package NAME's only layer (name default, default skills/ group);
  - a SKILL.md: the plugin synthesized from a bare skill;
  - a Cargo.toml, package.json or pyproject.toml: the package-embedded
    plugin its PM offers, merged from [package.metadata.symposium],
    "symposium" or [tool.symposium] and a SYMPOSIUM.toml beside it.
Layers that do not parse are reported on stderr and left out, as PMs do.
FILE is read as a PM reads a manifest: a regular file (not a FIFO or a
device) of at most 1 MiB, a link followed only inside FILE's directory.

`

// validateResult is the --json output of validate.
type validateResult struct {
	Version int             `json:"version"`
	Valid   bool            `json:"valid"`
	Checked []checkedPath   `json:"checked"`
	Plugins []layout.Report `json:"plugins"`
	Errors  []string        `json:"errors,omitempty"`
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("validate", validateUsage, stderr)
	asJSON := fs.Bool("json", false, "print a JSON report instead of lines")
	origin := fs.String("origin", "", "rules for manifest files and plugin directories: registry, workspace or package (default: inferred from what PATH is; registry entries always use registry)")
	name := fs.String("name", "", "default plugin name for the workspace and package origins (default: the directory name)")
	if code, ok := parseArgs(fs, args, arity{1, -1, "PATH..."}, stdout); !ok {
		return code
	}
	opts := layout.CheckOptions{DefaultName: *name}
	switch *origin {
	case "":
	case "registry":
		opts.Origin = manifest.OriginRegistry
	case "workspace":
		opts.Origin = manifest.OriginWorkspace
	case "package":
		opts.Origin = manifest.OriginPackage
	default:
		fmt.Fprintf(stderr, "symposium-pm validate: unknown origin %q (registry, workspace or package)\n", *origin)
		return ExitUsage
	}
	res := validateResult{Version: JSONVersion, Valid: true, Plugins: []layout.Report{}, Checked: []checkedPath{}}
	var out bytes.Buffer
	warnings := 0
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "symposium-pm validate: %v\n", err)
			return ExitFailure
		}
		reports, as, err := validatePath(ctx, path, *origin, opts)
		if as.As != "" {
			res.Checked = append(res.Checked, checkedPath{Path: path, shipping: as})
			fmt.Fprintf(&out, "%s: checked as %s %s (origin %s)\n", path, article(as.As), as.As, as.Origin)
		}
		if err != nil {
			res.Valid = false
			res.Errors = append(res.Errors, pathError(path, err))
			fmt.Fprintf(&out, "%s\n", pathError(path, err))
			continue
		}
		for _, r := range reports {
			res.Plugins = append(res.Plugins, r)
			if !r.Valid {
				res.Valid = false
			}
			for _, p := range r.Problems {
				if p.Warning {
					warnings++
				}
				fmt.Fprintln(&out, p.Error())
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "symposium-pm validate: %v\n", err)
			return ExitFailure
		}
	} else {
		invalid := 0
		for _, r := range res.Plugins {
			if !r.Valid {
				invalid++
			}
		}
		out.WriteString(summary(len(res.Plugins), invalid, warnings, len(res.Errors)))
		if _, err := stdout.Write(out.Bytes()); err != nil {
			return ExitFailure
		}
	}
	if !res.Valid {
		return ExitFailure
	}
	return ExitOK
}

// pathError renders a path that could not be checked at all as
// `path: message`, without repeating the path when the error already
// starts with it.
func pathError(path string, err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, path+":") {
		return msg
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", path, pe.Err)
	}
	return fmt.Sprintf("%s: %s", path, msg)
}

func summary(plugins, invalid, warnings, unreadable int) string {
	plural := func(n int, s string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, s)
		}
		return fmt.Sprintf("%d %ss", n, s)
	}
	s := fmt.Sprintf("checked %s: %d valid, %d invalid, %s", plural(plugins, "plugin"), plugins-invalid, invalid, plural(warnings, "warning"))
	if unreadable > 0 {
		s += fmt.Sprintf(", %s not checked", plural(unreadable, "path"))
	}
	return s + "\n"
}

func cmdManifest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("manifest", manifestUsage, stderr)
	pretty := fs.Bool("pretty", false, "indent the JSON")
	pkg := fs.String("package", "", "merge FILE as the SYMPOSIUM.toml layer of package `NAME`")
	if code, ok := parseArgs(fs, args, arity{1, 1, "FILE"}, stdout); !ok {
		return code
	}
	file := fs.Arg(0)
	// Read as a PM reads a manifest (sdk/pkgfile): a regular file, never a
	// FIFO or a device, of at most 1 MiB, a link followed only inside its
	// directory.
	data, err := pkgfile.ReadFile(filepath.Dir(file), filepath.Base(file), pkgfile.MaxManifest)
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm manifest: %v\n", err)
		return ExitFailure
	}
	var m *manifest.Manifest
	switch base := filepath.Base(file); {
	case base == "Cargo.toml" || base == "package.json" || base == "pyproject.toml":
		var layerErrs []error
		m, layerErrs, err = packageManifest(file, data)
		for _, e := range layerErrs {
			fmt.Fprintf(stderr, "%s: warning: %v\n", file, e)
		}
	case *pkg != "":
		var tbl map[string]any
		if tbl, err = decodeTable(file, data); err == nil {
			var layerErrs []error
			m, layerErrs = manifest.Embedded(*pkg, manifest.Layer{Source: manifest.ManifestFile, Table: tbl})
			for _, e := range layerErrs {
				fmt.Fprintf(stderr, "%s: warning: %v\n", file, e)
			}
		}
	case base == skill.File:
		s, perr := skill.Parse(data, true)
		if perr != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, perr)
			return ExitFailure
		}
		dir, _ := filepath.Abs(filepath.Dir(file))
		m = layout.SkillPlugin(filepath.Base(dir), s)
	case strings.EqualFold(filepath.Ext(file), ".json"):
		m, err = manifest.DecodeJSON(data)
	default:
		m, err = manifest.DecodeTOML(data)
	}
	if err != nil {
		var ps manifest.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				p.File = file
				fmt.Fprintln(stderr, p.Error())
			}
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
		}
		return ExitFailure
	}
	wire, err := m.WireJSON()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return ExitFailure
	}
	if *pretty {
		var buf bytes.Buffer
		if err := json.Indent(&buf, wire, "", "  "); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
			return ExitFailure
		}
		wire = buf.Bytes()
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", wire); err != nil {
		return ExitFailure
	}
	return ExitOK
}

// decodeTable reads a TOML or JSON document as a generic table. A TOML
// syntax error is a [manifest.Problems] carrying the line, so it prints as
// file:line like the problems of a SYMPOSIUM.toml.
func decodeTable(file string, data []byte) (map[string]any, error) {
	var tbl map[string]any
	if strings.EqualFold(filepath.Ext(file), ".json") {
		if err := json.Unmarshal(data, &tbl); err != nil {
			var je *jsonfile.Error
			if errors.As(jsonfile.Explain("", data, err), &je) {
				if je.Key == "" && !strings.HasPrefix(je.Msg, "invalid JSON") {
					je.Msg = "invalid JSON: " + je.Msg
				}
				if je.Key == "" && strings.HasPrefix(je.Msg, "expected") {
					je.Msg = "the document must be a JSON object" // the only type a table can be wrong in
				}
				return nil, manifest.Problems{{Line: je.Line, Message: fmt.Sprintf("column %d: %s", je.Column, je.Msg)}}
			}
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return tbl, nil
	}
	if err := toml.Unmarshal(data, &tbl); err != nil {
		p := manifest.Problem{Message: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			p.Line, _ = de.Position()
		}
		return nil, manifest.Problems{p}
	}
	return tbl, nil
}

// packageManifest builds the package-embedded manifest a PM offers for the
// package described by file (Cargo.toml, package.json or pyproject.toml):
// its native layer, then a SYMPOSIUM.toml beside it, merged with the
// package name as the default name.
func packageManifest(file string, data []byte) (*manifest.Manifest, []error, error) {
	tbl, err := decodeTable(file, data)
	if err != nil {
		return nil, nil, err
	}
	sub := func(t map[string]any, keys ...string) map[string]any {
		for _, k := range keys {
			next, ok := t[k].(map[string]any)
			if !ok {
				return nil
			}
			t = next
		}
		return t
	}
	var name, source string
	var native map[string]any
	var layerErrs []error
	switch filepath.Base(file) {
	case "Cargo.toml":
		name, _ = sub(tbl, "package")["name"].(string)
		source = "Cargo.toml [package.metadata.symposium]"
		native = sub(tbl, "package", "metadata", "symposium")
		if v, ok := sub(tbl, "package", "metadata")["symposium"]; ok && native == nil {
			layerErrs = append(layerErrs, fmt.Errorf("%s is %s, not a table; ignored", source, tomlfile.ValueWords(v)))
		}
	case "package.json":
		name, _ = tbl["name"].(string)
		source = `package.json "symposium"`
		native = sub(tbl, "symposium")
	case "pyproject.toml":
		name, _ = sub(tbl, "project")["name"].(string)
		name = pyname.Normalize(name)
		source = "pyproject.toml [tool.symposium]"
		native = sub(tbl, "tool", "symposium")
	}
	if name == "" {
		return nil, nil, fmt.Errorf("%s names no package", filepath.Base(file))
	}
	layers := []manifest.Layer{{Source: source, Table: native}}
	// Read as the PMs read it (sdk/pkgfile): a regular file inside the
	// package, at most pkgfile.MaxManifest bytes.
	sibling := filepath.Join(filepath.Dir(file), manifest.ManifestFile)
	data, err = pkgfile.ReadFile(filepath.Dir(file), manifest.ManifestFile, pkgfile.MaxManifest)
	switch {
	case err == nil:
		t, err := decodeTable(sibling, data)
		if err != nil {
			layerErrs = append(layerErrs, layerIgnored{file: sibling, err: err})
		} else {
			layers = append(layers, manifest.Layer{Source: sibling, Table: t})
		}
	case !errors.Is(err, fs.ErrNotExist):
		layerErrs = append(layerErrs, manifest.Problem{File: sibling, Message: fmt.Sprintf("cannot be read (%s): %s",
			pkgfile.Cause(err), siblingRefused(file))})
	}
	m, errs := manifest.Embedded(name, layers...)
	return m, append(layerErrs, errs...), nil
}

// layerIgnored is a layer of a package plugin dropped because its file,
// file, does not decode: its problems are that file's, not the package
// file's (problemOf places them there).
type layerIgnored struct {
	file string
	err  error
}

func (e layerIgnored) Error() string { return e.file + ": layer ignored: " + e.err.Error() }
func (e layerIgnored) Unwrap() error { return e.err }

// siblingRefused says what the PM of the package described by file does
// with a SYMPOSIUM.toml it refuses to read: the cargo and pypi PMs do not
// offer the package, the npm PM drops the layer.
func siblingRefused(file string) string {
	if filepath.Base(file) == "package.json" {
		return "the npm PM ignores this layer"
	}
	return fmt.Sprintf("the %s PM does not offer this package", pmOf(file))
}

// checkedPath says how validate read one PATH.
type checkedPath struct {
	Path string `json:"path"`
	shipping
}

func article(s string) string {
	if strings.IndexByte("aeiou", s[0]) >= 0 || strings.HasPrefix(s, "npm") {
		return "an"
	}
	return "a"
}

// validatePath checks one PATH as what it is (see validateUsage). An
// explicit origin keeps the manifest-file and plugin-directory reading
// with those rules.
func validatePath(ctx context.Context, path, origin string, opts layout.CheckOptions) ([]layout.Report, shipping, error) {
	s, err := inferShipping(path)
	if err != nil {
		return nil, s, err
	}
	if origin != "" && (s.As == shipManifest || s.As == shipPlugin || s.As == shipRegistry) {
		if s.As != shipRegistry {
			s.Origin = origin
		}
		r, err := layout.CheckPath(path, opts)
		return r, s, err
	}
	switch s.As {
	case shipCrate, shipNPM, shipPython:
		return checkPackage(ctx, s), s, nil
	case shipWheel:
		r, err := checkWheel(ctx, s.File)
		return r, s, err
	case shipWorkspace:
		r, err := checkWorkspace(ctx, s.Dir, opts.DefaultName)
		return r, s, err
	}
	r, err := layout.CheckPath(path, opts)
	return r, s, err
}
