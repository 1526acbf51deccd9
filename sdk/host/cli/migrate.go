package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/migrate"
)

const migrateUsage = `Usage: symposium-pm migrate [--check|--diff] [--json] PATH...

Rewrites plugin manifest keys Symposium has retired (crates, source = "crate",
source.crate_path, SKILL.md crates:, ...) to the current schema, in place.
Each PATH is a SYMPOSIUM.toml, a SKILL.md, or a directory (a plugin, a whole
registry) searched for both. Only the retired keys are edited: comments, key
order and formatting of everything else are kept. A retired form with no
mechanical translation is reported with its reason as file:line, and that
file is left untouched.

  --check   change nothing; list what would change as file:line: old → new,
            and exit 1 when anything would (for registry CI)
  --diff    change nothing; print the changes as a unified diff

  --json    print a versioned document instead of the lines on stdout:
            {"version":1,"mode":"write|check|diff","files":[{"path",
            "changes":[{"line","old","new"}],"diff"}],"checked","migrated",
            "changes","warnings":[{"message","file","line"}]}; files lists
            the files changed (or that would be), warnings every file left
            untouched and why

Exit status: 0 when done (with --check: when nothing would change), 1 when
something would change under --check, a file could not be migrated or a PATH
does not exist, 2 for bad usage.

`

// migrateDoc is the --json output of migrate.
type migrateDoc struct {
	Version int    `json:"version"`
	Mode    string `json:"mode"` // write, check or diff
	// Files are the files changed, or that would be under --check and
	// --diff, in the order found.
	Files []migratedFile `json:"files"`
	// Checked counts the files examined, Migrated those in Files, Changes
	// their changes.
	Checked  int `json:"checked"`
	Migrated int `json:"migrated"`
	Changes  int `json:"changes"`
	// Warnings are the files left untouched (a retired form with no
	// mechanical translation, a file that does not parse, one that cannot
	// be read or written), with the reason and, when known, the line.
	Warnings []Warning `json:"warnings"`
}

// migrateChange is one change of migrate --json: the 1-based line where it
// starts, the text of the lines changed and what replaces them.
type migrateChange struct {
	Line int    `json:"line"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// migratedFile is one file of migrate --json.
type migratedFile struct {
	Path    string          `json:"path"`
	Changes []migrateChange `json:"changes"`
	Diff    string          `json:"diff,omitempty"`
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("migrate", migrateUsage, stderr)
	check := fs.Bool("check", false, "list what would change and exit 1 if anything would; write nothing")
	diff := fs.Bool("diff", false, "print a unified diff of the changes; write nothing")
	asJSON := fs.Bool("json", false, "print a versioned document of the changes and of the files left untouched")
	if code, ok := parseArgs(fs, args, arity{0, -1, "PATH..."}, stdout); !ok {
		return code
	}
	if fs.NArg() == 0 {
		usageError(fs, "no PATH given")
		return ExitUsage
	}
	if *check && *diff {
		usageError(fs, "--check and --diff cannot be used together")
		return ExitUsage
	}
	doc := migrateDoc{Version: JSONVersion, Mode: "write", Files: []migratedFile{}, Warnings: []Warning{}}
	switch {
	case *check:
		doc.Mode = "check"
	case *diff:
		doc.Mode = "diff"
	}
	// problem reports a file left untouched, on stderr and in the document.
	problem := func(path, what string, err error) {
		fmt.Fprintf(stderr, "%s: %s: %s\n", migrateWhere(path, err), what, migrateReason(err))
		w := Warning{Message: what + ": " + migrateReason(err), File: path}
		var re *migrate.RefusedError
		if errors.As(err, &re) {
			w.Line = re.Line
		}
		doc.Warnings = append(doc.Warnings, w)
	}
	files, err := migrate.Collect(ctx, fs.Args())
	failed := false
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm migrate: %v\n", err)
		doc.Warnings = append(doc.Warnings, Warning{Message: err.Error()})
		failed = true
	}
	doc.Checked = len(files)
	for _, f := range files {
		if f.Err != nil {
			failed = true
			problem(f.Path, "cannot migrate", f.Err)
			continue
		}
		if f.Skipped != nil {
			problem(f.Path, "skipped", f.Skipped)
			continue
		}
		if len(f.Changes) == 0 {
			continue
		}
		mf := migratedFile{Path: f.Path}
		for _, c := range f.Changes {
			mf.Changes = append(mf.Changes, migrateChange{Line: c.Line, Old: c.Old, New: c.New})
		}
		switch {
		case *diff:
			mf.Diff = migrate.UnifiedDiff(f.Path, f.Old, f.New)
			if !*asJSON {
				fmt.Fprint(stdout, mf.Diff)
			}
		case !*check:
			if err := migrate.WriteFile(f.Path, f.New); err != nil {
				problem(f.Path, "cannot write", err)
				failed = true
				continue
			}
		}
		doc.Files = append(doc.Files, mf)
		doc.Migrated++
		doc.Changes += len(f.Changes)
		if !*diff && !*asJSON {
			for _, c := range f.Changes {
				fmt.Fprintf(stdout, "%s:%d: %s → %s\n", f.Path, c.Line, migrateFragment(c.Old), migrateFragment(c.New))
			}
		}
	}
	verb := "migrated"
	if *check || *diff {
		verb = "would migrate"
	}
	fmt.Fprintf(stderr, "symposium-pm migrate: %s %d of %d files (%s)\n", verb, doc.Migrated, doc.Checked, plural(doc.Changes, "change"))
	if *asJSON {
		if err := printJSON(stdout, doc); err != nil {
			fmt.Fprintf(stderr, "symposium-pm migrate: %v\n", err)
			return ExitFailure
		}
	}
	if failed || (*check && doc.Migrated > 0) {
		return ExitFailure
	}
	return ExitOK
}

// migrateFragment shows a multi-line fragment on one line, its lines separated by
// " ⏎ ".
func migrateFragment(s string) string {
	if s == "" {
		return "(nothing)"
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return strings.Join(lines, " ⏎ ")
}

// migrateWhere names a file, with the line of a refusal when known.
func migrateWhere(path string, err error) string {
	var re *migrate.RefusedError
	if errors.As(err, &re) && re.Line > 0 {
		return fmt.Sprintf("%s:%d", path, re.Line)
	}
	return path
}

// migrateReason is the reason of a refusal, or the error.
func migrateReason(err error) string {
	var re *migrate.RefusedError
	if errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}
