package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/manifest/migrate"
)

const migrateUsage = `Usage: symposium-pm migrate [--check|--diff] PATH...

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

Exit status: 0 when done (with --check: when nothing would change), 1 when
something would change under --check or a file could not be migrated, 2 for
bad usage.

`

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flagSet("migrate", migrateUsage, stderr)
	check := fs.Bool("check", false, "list what would change and exit 1 if anything would; write nothing")
	diff := fs.Bool("diff", false, "print a unified diff of the changes; write nothing")
	if code, ok := parseArgs(fs, args, arity{0, -1, "PATH..."}); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "symposium-pm migrate: no PATH given")
		fs.Usage()
		return ExitUsage
	}
	if *check && *diff {
		fmt.Fprintln(stderr, "symposium-pm migrate: --check and --diff cannot be used together")
		return ExitUsage
	}
	files, err := migrate.Collect(ctx, fs.Args())
	failed := false
	if err != nil {
		fmt.Fprintf(stderr, "symposium-pm migrate: %v\n", err)
		failed = true
	}
	changed, nchanges := 0, 0
	for _, f := range files {
		if f.Err != nil {
			failed = true
			fmt.Fprintf(stderr, "%s: cannot migrate: %s\n", migrateWhere(f.Path, f.Err), migrateReason(f.Err))
			continue
		}
		if f.Skipped != nil {
			fmt.Fprintf(stderr, "%s: skipped: %s\n", migrateWhere(f.Path, f.Skipped), migrateReason(f.Skipped))
			continue
		}
		if len(f.Changes) == 0 {
			continue
		}
		switch {
		case *diff:
			fmt.Fprint(stdout, migrate.UnifiedDiff(f.Path, f.Old, f.New))
		case !*check:
			if err := migrate.WriteFile(f.Path, f.New); err != nil {
				fmt.Fprintf(stderr, "%s: cannot write: %v\n", f.Path, err)
				failed = true
				continue
			}
		}
		changed++
		nchanges += len(f.Changes)
		if !*diff {
			for _, c := range f.Changes {
				fmt.Fprintf(stdout, "%s:%d: %s → %s\n", f.Path, c.Line, migrateFragment(c.Old), migrateFragment(c.New))
			}
		}
	}
	verb := "migrated"
	if *check || *diff {
		verb = "would migrate"
	}
	fmt.Fprintf(stderr, "symposium-pm migrate: %s %d of %d files (%d changes)\n", verb, changed, len(files), nchanges)
	if failed || (*check && changed > 0) {
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
