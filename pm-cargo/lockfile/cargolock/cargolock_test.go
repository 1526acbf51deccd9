package cargolock

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseVersions(t *testing.T) {
	tests := []struct {
		file    string
		version int
		// app's dependencies resolved to "name version source"
		deps []string
		sums map[string]string
	}{
		{"v1.lock", 1, []string{"serde 1.0.100 registry+https://github.com/rust-lang/crates.io-index", "local 0.2.0 "},
			map[string]string{"serde": "f4473e8112a6e82a8e5d5c8ae3e8e7c1b0a5fe9c1d0bd6a7c7a0e0a0e0a0e0a0"}},
		{"v1root.lock", 1, []string{"libc 0.2.0 registry+https://github.com/rust-lang/crates.io-index"}, nil},
		{"v2.lock", 2, []string{"rand 0.7.3 registry+https://github.com/rust-lang/crates.io-index", "rand 0.8.5 registry+https://github.com/rust-lang/crates.io-index", "serde 1.0.200 registry+https://github.com/rust-lang/crates.io-index"},
			map[string]string{"serde": "cccc"}},
		{"v3.lock", 3, []string{"dup 1.0.0 registry+https://github.com/rust-lang/crates.io-index", "dup 1.0.0 git+https://example.com/dup?branch=master#0123456789abcdef"}, nil},
		{"v1git.lock", 1, []string{"clamav-rs 0.5.5 git+https://example.com/urbanlogiq/clamav-rs?branch=bindgen-0.65#63ee5df0123456789abcdef0123456789abcdef0", "serde 1.0.100 registry+https://github.com/rust-lang/crates.io-index"}, map[string]string{"serde": "ffff"}},
		{"v4git.lock", 4, []string{"fa 1.0.0 git+file:///tmp/cgit/fa?branch=master#f39bd084081e7df0956c0413a8bfd66c13b1118f", "fa 1.0.0 git+file:///tmp/cgit/fa#f39bd084081e7df0956c0413a8bfd66c13b1118f"}, nil},
		{"v4.lock", 4, []string{"either 1.9.0 sparse+https://my.registry.example/index/"}, map[string]string{"either": "eeee"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lf, err := ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if lf.Version != tt.version {
				t.Errorf("version = %d, want %d", lf.Version, tt.version)
			}
			app := lf.Find("app", "0.1.0", "")
			if app == nil {
				t.Fatal("no app package")
			}
			var got []string
			for _, r := range app.Dependencies {
				p, err := lf.Resolve(r)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, p.Name+" "+p.Version+" "+p.Source)
			}
			if strings.Join(got, "\n") != strings.Join(tt.deps, "\n") {
				t.Errorf("deps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.deps, "\n"))
			}
			for name, sum := range tt.sums {
				if ps := lf.ByName(name); len(ps) == 0 || ps[0].Checksum != sum {
					t.Errorf("checksum of %s = %v, want %s", name, ps, sum)
				}
			}
		})
	}
}

func TestSourceMatches(t *testing.T) {
	tests := []struct {
		ref, pkg string
		want     bool
	}{
		{"registry+https://r/index", "registry+https://r/index", true},
		{"git+https://h/r?branch=b", "git+https://h/r?branch=b#0123abc", true},
		{"git+https://h/r", "git+https://h/r?branch=b#0123abc", false},
		{"git+https://h/r#0123abc", "git+https://h/r#0123abc", true},
		{"git+https://h/r#0123abc", "git+https://h/r#4567def", false},
		{"git+https://h/r", "git+https://h/r", true},
		{"git+https://h/r", "git+https://h/r2#0123abc", false},
	}
	for _, tt := range tests {
		if got := SourceMatches(tt.ref, tt.pkg); got != tt.want {
			t.Errorf("SourceMatches(%q, %q) = %v, want %v", tt.ref, tt.pkg, got, tt.want)
		}
	}
}

func TestParseRef(t *testing.T) {
	good := map[string]Ref{
		"serde":                        {Name: "serde"},
		"serde 1.0.0":                  {Name: "serde", Version: "1.0.0"},
		"serde 1.0.0 (registry+x://y)": {Name: "serde", Version: "1.0.0", Source: "registry+x://y"},
	}
	for s, want := range good {
		got, err := ParseRef(s)
		if err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if got.String() != s {
			t.Errorf("String() = %q, want %q", got.String(), s)
		}
	}
	for _, s := range []string{"", "a b c", "a 1.0 (x", "a (x)", "a 1.0 ()", " 1.0"} {
		if _, err := ParseRef(s); err == nil {
			t.Errorf("ParseRef(%q) succeeded", s)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax", "version = 3\n\n[[package]]\nname = \"x\"\nversion = \n", "Cargo.lock:5: invalid TOML"},
		{"future", "version = 9\n", "Cargo.lock:1: unsupported lockfile version 9"},
		{"noname", "version = 3\n[[package]]\nversion = \"1.0.0\"\n", "Cargo.lock:2: [[package]] #1: missing name"},
		{"noversion", "version = 3\n[[package]]\nname = \"a\"\n", "missing version"},
		{"badref", "version = 3\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\ndependencies = [\"b 1 2\"]\n", "Cargo.lock:5: package a 1.0.0: dependency \"b 1 2\""},
		{"wrongtype", "version = 3\n[[package]]\nname = 7\n", "Cargo.lock:3: package[0].name: expected a string, found an integer"},
		// Positions come from the parser, not from the first text that
		// looks like the key: a comment, an earlier package.
		{"versionInComment", "# the version key\n\nversion = 9\n", "Cargo.lock:3: unsupported lockfile version 9"},
		{"refInComment", "version = 3\n# dependencies = [\"b 1 2\"]\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\ndependencies = [\n \"c\",\n \"b 1 2\",\n]\n", "Cargo.lock:8: package a 1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("Cargo.lock", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestResolveAmbiguousAndMissing(t *testing.T) {
	lf, err := ReadFile(filepath.Join("testdata", "v2.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Resolve(Ref{Name: "rand"}); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("bare rand: %v", err)
	}
	if _, err := lf.Resolve(Ref{Name: "nope"}); err == nil {
		t.Error("missing package resolved")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.lock"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("version = 4\n[[package]]\nname = \"a\"\nversion = \"1\"\ndependencies = [\"b (\"]\n"))
	f.Add([]byte("version = 3\n[[package]]\nname = \"a\"\nversion = \"1\"\nsource = \"git+https://h/r#c\"\ndependencies = [\"a 1 (git+https://h/r)\", \"b 2 ((x)\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := Parse("fuzz.lock", data)
		sameAsRead(t, data, lf, err)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.lock") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if lf.Version < 1 || lf.Version > MaxVersion {
			t.Fatalf("accepted lockfile version %d", lf.Version)
		}
		for i := range lf.Packages {
			p := &lf.Packages[i]
			if p.Name == "" || p.Version == "" {
				t.Fatalf("accepted a package without name or version: %+v", p)
			}
			// Every package is found by its name, and by its name, version
			// and source.
			if !slices.Contains(lf.ByName(p.Name), p) {
				t.Fatalf("ByName(%q) misses package #%d", p.Name, i+1)
			}
			if lf.Find(p.Name, p.Version, p.Source) == nil {
				t.Fatalf("Find(%q, %q, %q) found nothing", p.Name, p.Version, p.Source)
			}
			for _, r := range p.Dependencies {
				// A reference reads back from cargo's encoding of it.
				if again, err := ParseRef(r.String()); err != nil || again != r {
					t.Fatalf("reference %+v encodes as %q, which reads %+v, %v", r, r.String(), again, err)
				}
				got, err := lf.Resolve(r)
				if err != nil {
					if !strings.Contains(err.Error(), strconv.Quote(r.String())) {
						t.Fatalf("Resolve error does not name the reference %q: %v", r, err)
					}
					continue
				}
				if got.Name != r.Name || r.Version != "" && got.Version != r.Version || r.Source != "" && !SourceMatches(r.Source, got.Source) {
					t.Fatalf("Resolve(%+v) = a package it does not name: %+v", r, got)
				}
			}
		}
	})
}

// sameAsRead fails t unless Read, reading data a table at a time, gives
// what Parse gave: the same lockfile, or an error with the same text.
func sameAsRead(t *testing.T, data []byte, want *Lockfile, wantErr error) {
	t.Helper()
	got, err := Read("fuzz.lock", bytes.NewReader(data))
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("Read: error %v, Parse: %v", err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read gave\n%+v\nParse gave\n%+v", got, want)
	}
}

// TestReadIsParse holds Read to Parse on every lockfile in testdata (every
// version cargo has written) and on the files of TestErrors.
func TestReadIsParse(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.lock"))
	if len(files) == 0 {
		t.Fatal("no lockfiles in testdata")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			lf, err := Parse("fuzz.lock", data)
			if err != nil {
				t.Fatal(err)
			}
			sameAsRead(t, data, lf, nil)
		})
	}
	for _, data := range []string{
		"version = 3\n\n[[package]]\nname = \"x\"\nversion = \n",
		"version = 9\n",
		"version = 3\n[[package]]\nversion = \"1.0.0\"\n",
		"version = 3\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\ndependencies = [\"b 1 2\"]\n",
		"version = 3\n[[package]]\nname = 7\n",
		"[[package]]\nname = \"a\"\nversion = \"1.0.0\"\ndependencies = [\"b 1 2\"]\n\nversion = 4\n",
	} {
		lf, err := Parse("fuzz.lock", []byte(data))
		sameAsRead(t, []byte(data), lf, err)
	}
}

// readCounter is an io.ReadSeeker over a document that counts the bytes
// read and the largest single read.
type readCounter struct {
	*bytes.Reader
	total, largest int
}

func (r *readCounter) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	r.total += n
	r.largest = max(r.largest, n)
	return n, err
}

// TestReadStreams checks that Read takes a lockfile as cargo writes it
// once, a buffer at a time, never whole: the document is read through
// once, in reads of at most 64 KiB, and gives Parse's result.
func TestReadStreams(t *testing.T) {
	var b strings.Builder
	b.WriteString("# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "\n[[package]]\nname = \"crate-%04d\"\nversion = \"1.0.%d\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"%064x\"\n", i, i%7, i)
		if i > 0 {
			fmt.Fprintf(&b, "dependencies = [\n \"crate-%04d\",\n]\n", i-1)
		}
	}
	data := []byte(b.String())
	r := &readCounter{Reader: bytes.NewReader(data)}
	lf, err := Read("Cargo.lock", r)
	if err != nil || len(lf.Packages) != 3000 {
		t.Fatalf("Read: %d packages, %v", len(lf.Packages), err)
	}
	if r.total != len(data) || r.largest > 64<<10 {
		t.Errorf("Read read %d bytes of a %d-byte document, at most %d at once; want it read once, at most 64 KiB at once", r.total, len(data), r.largest)
	}
	want, err := Parse("Cargo.lock", data)
	if err != nil || !reflect.DeepEqual(lf, want) {
		t.Errorf("Read and Parse differ (Parse: %v)", err)
	}
}
