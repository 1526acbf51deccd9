package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
)

const validateUsage = `Usage: symposium-pm validate [--json] [--origin registry|workspace|package] PATH...

Checks Symposium plugin manifests the way Symposium loads them. Each PATH is a
manifest file (SYMPOSIUM.toml, a JSON wire manifest, or a bare SKILL.md), a
plugin directory, or a registry directory whose entries are all checked.
Every problem is printed as file:line: field: message. Exit status: 0 when
everything is valid (warnings allowed), 1 otherwise, 2 for bad usage.

`

const manifestUsage = `Usage: symposium-pm manifest [--pretty] FILE

Prints the wire JSON of a plugin manifest: exactly what a PM puts in an
offer. FILE is a SYMPOSIUM.toml (or any TOML manifest), a JSON manifest, or a
SKILL.md (printed as the plugin synthesized from it).

`

// validateResult is the --json output of validate.
type validateResult struct {
	Valid   bool              `json:"valid"`
	Plugins []manifest.Report `json:"plugins"`
	Errors  []string          `json:"errors,omitempty"`
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, validateUsage); fs.PrintDefaults() }
	asJSON := fs.Bool("json", false, "print a JSON report instead of lines")
	origin := fs.String("origin", "registry", "rules for manifest files and plugin directories: registry, workspace or package (registry entries always use registry)")
	name := fs.String("name", "", "default plugin name for the workspace and package origins (default: the directory name)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "symposium-pm validate: no PATH given")
		fs.Usage()
		return ExitUsage
	}
	opts := manifest.CheckOptions{DefaultName: *name}
	switch *origin {
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
	res := validateResult{Valid: true, Plugins: []manifest.Report{}}
	var out bytes.Buffer
	warnings := 0
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "symposium-pm validate: %v\n", err)
			return ExitFailure
		}
		reports, err := manifest.CheckPath(path, opts)
		if err != nil {
			res.Valid = false
			res.Errors = append(res.Errors, err.Error())
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
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, manifestUsage); fs.PrintDefaults() }
	pretty := fs.Bool("pretty", false, "indent the JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ExitUsage
	}
	file := fs.Arg(0)
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm manifest: %v\n", err)
		return ExitFailure
	}
	var m *manifest.Manifest
	switch {
	case filepath.Base(file) == manifest.SkillFile:
		s, perr := manifest.ParseSkillMD(data, true)
		if perr != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, perr)
			return ExitFailure
		}
		dir, _ := filepath.Abs(filepath.Dir(file))
		m = manifest.SynthesizeSkillPlugin(filepath.Base(dir), s)
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
