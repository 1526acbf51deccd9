package testscript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/pm-cargo/registry"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/packagelock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/pnpmlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/yarnlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pipfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pipfilelock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/poetrylock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pylock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/uvlock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/pyproject"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// goWords are fragments of Go's own vocabulary that must never reach a
// user: type names, and the decoders' phrasing around them.
var goWords = []string{
	"interface {}", "int64", "float64", "struct field", "Go struct", "Go value",
	"[]interface", "map[string]", "unmarshal", "json: cannot", "toml: cannot",
}

// parsers are every reader of a file format the project has, each given
// the contents of a file.
func parsers() map[string]func([]byte) error {
	ignore := func(_ any, err error) error { return err }
	return map[string]func([]byte) error{
		"manifest.DecodeTOML": func(b []byte) error { return ignore(manifest.DecodeTOML(b)) },
		"manifest.DecodeJSON": func(b []byte) error { return ignore(manifest.DecodeJSON(b)) },
		"manifest.Validate": func(b []byte) error {
			m, err := manifest.DecodeTOML(b)
			if err != nil {
				return err
			}
			var msgs []string
			for _, o := range []manifest.Origin{manifest.OriginRegistry, manifest.OriginWorkspace, manifest.OriginPackage} {
				_, ps := manifest.Validate(m, manifest.ValidateOptions{Origin: o, DefaultName: "x", File: "SYMPOSIUM.toml"})
				for _, p := range ps {
					msgs = append(msgs, p.Error())
				}
			}
			if len(msgs) == 0 {
				return nil
			}
			return errors.New(strings.Join(msgs, "\n"))
		},
		"manifest.Embedded": func(b []byte) error {
			var t map[string]any
			if err := json.Unmarshal(b, &t); err != nil {
				return nil // not a JSON object: the JSON readers' concern
			}
			if sym, ok := t["symposium"].(map[string]any); ok {
				t = sym
			}
			_, errs := manifest.Embedded("x", manifest.Layer{Source: "package.json \"symposium\"", Table: t})
			return errors.Join(errs...)
		},
		"manifest.ParseSkill": func(b []byte) error { return ignore(skill.Parse(b, true)) },
		"config.Parse":        func(b []byte) error { return ignore(config.Parse("config.toml", b, "/")) },
		"depcache.Decode":     func(b []byte) error { return ignore(depcache.Decode(b)) },
		"depcache.ParseDeps":  func(b []byte) error { return ignore(depcache.ParseDeps(b, "cargo")) },
		"cargotoml.Parse":     func(b []byte) error { return ignore(cargotoml.Parse("Cargo.toml", b)) },
		"cargolock.Parse":     func(b []byte) error { return ignore(cargolock.Parse("Cargo.lock", b)) },
		"registry.Index":      func(b []byte) error { return ignore(registry.ParseIndexFile("index", b)) },
		"packagejson.Parse":   func(b []byte) error { return ignore(packagejson.ParseFile("package.json", b)) },
		"packagelock.Parse":   func(b []byte) error { return ignore(packagelock.ParseFile("package-lock.json", b)) },
		"pnpmlock.Parse":      func(b []byte) error { return ignore(pnpmlock.Parse(b)) },
		"yarnlock.Parse":      func(b []byte) error { return ignore(yarnlock.Parse(b)) },
		"pyproject.Parse":     func(b []byte) error { return ignore(pyproject.Parse(b)) },
		"pipfile.Parse":       func(b []byte) error { return ignore(pipfile.Parse(b)) },
		"pipfilelock.Parse":   func(b []byte) error { return ignore(pipfilelock.Parse(b)) },
		"poetrylock.Parse":    func(b []byte) error { return ignore(poetrylock.Parse(b)) },
		"pylock.Parse":        func(b []byte) error { return ignore(pylock.Parse(b)) },
		"uvlock.Parse":        func(b []byte) error { return ignore(uvlock.Parse(b)) },
	}
}

// TestMessagesInUsersTerms runs every parser over every fixture under a
// testdata directory of the repository (files, the files of each txtar
// archive, and the seeds of every fuzz corpus), and fails on any error
// message that speaks Go rather than the file's language.
func TestMessagesInUsersTerms(t *testing.T) {
	inputs := collectInputs(t, "..")
	if len(inputs) < 200 {
		t.Fatalf("found only %d inputs: is the repository layout what this test expects?", len(inputs))
	}
	ps := parsers()
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	seen := map[string]bool{}
	errorsSeen := 0
	for _, in := range inputs {
		for _, name := range names {
			msg, panicked := run(ps[name], in.data)
			if msg == "" {
				continue
			}
			errorsSeen++
			if panicked {
				t.Errorf("%s panicked on %s: %s", name, in.name, msg)
				continue
			}
			for _, w := range goWords {
				if strings.Contains(msg, w) && !seen[name+msg] {
					seen[name+msg] = true
					t.Errorf("%s on %s: %q speaks Go (%q)", name, in.name, msg, w)
				}
			}
		}
	}
	t.Logf("%d inputs, %d parsers, %d errors checked", len(inputs), len(names), errorsSeen)
}

func run(parse func([]byte) error, data []byte) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprint(r), true
		}
	}()
	if err := parse(data); err != nil {
		return err.Error(), false
	}
	return "", false
}

type input struct {
	name string
	data []byte
}

// maxInput bounds the fixtures read: the large ones are benchmarks' data.
const maxInput = 256 << 10

// collectInputs gathers the fixtures under every testdata directory below
// root.
func collectInputs(t *testing.T, root string) []input {
	var out []input
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", ".venv", "target":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxInput {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(filepath.ToSlash(path), "/testdata/fuzz/"):
			for i, seed := range fuzzSeeds(data) {
				out = append(out, input{fmt.Sprintf("%s#%d", path, i), seed})
			}
		case strings.HasSuffix(path, ".txtar"):
			for _, f := range txtar.Parse(data).Files {
				out = append(out, input{path + ":" + f.Name, f.Data})
			}
		default:
			out = append(out, input{path, data})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fuzzSeeds returns the []byte and string values of a file in Go's fuzz
// corpus encoding ("go test fuzz v1", then one Go literal per line).
func fuzzSeeds(data []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxInput)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for _, prefix := range []string{"[]byte(", "string("} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(rest, ")")); err == nil {
					out = append(out, []byte(s))
				}
			}
		}
	}
	return out
}
