// Package wheel reads and unpacks distribution archives safely: wheels (zip,
// PEP 427) and sdists (.tar.gz, read without building). The archive rules
// and caps are the SDK's (sdk/archive: no absolute paths, "..", links or
// devices, no colliding names, caps on entries, total size and compression
// ratio, counted as the bytes are written); this package adds what is
// Python's: one *.dist-info/METADATA (or one top directory with PKG-INFO),
// METADATA naming the distribution, and every file RECORD lists with a
// sha256 matching it. Files are written through os.Root into a fresh
// temporary directory renamed into place only when everything succeeded,
// so a failure leaves nothing behind. Bad content is an *archive.Error;
// any other error is the machine's (a full disk, a vanished directory).
package wheel

import (
	"archive/zip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-pypi/distinfo"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pydist"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// Info describes an unpacked distribution.
type Info struct {
	// Metadata is the wheel's METADATA (or the sdist's PKG-INFO).
	Metadata distinfo.Metadata
	// EntryPoints are the wheel's entry points (nil for sdists).
	EntryPoints map[string][]pydist.EntryPoint
	// DistInfo is the dist-info directory name ("" for sdists).
	DistInfo string
	// Base is the directory, relative to the unpacked root, that holds the
	// distribution's files: "." for wheels, "<name>-<version>" for sdists.
	Base string
}

// bad is the refusal of the archive called name for reason.
func bad(name, format string, args ...any) error {
	return &archive.Error{Archive: name, Reason: fmt.Sprintf(format, args...)}
}

// ExtractWheel checks the wheel at src and unpacks it into dest, which must
// not exist; its parent must. The wheel must hold exactly one top-level
// *.dist-info/METADATA, and every file RECORD lists with a hash must match it.
func ExtractWheel(ctx context.Context, src, dest string, lim archive.Limits) (*Info, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ExtractWheelFile(ctx, f, filepath.Base(src), dest, lim)
}

// ExtractWheelFile is ExtractWheel from an open file (which may have been
// unlinked since), called name in errors.
func ExtractWheelFile(ctx context.Context, f *os.File, name, dest string, lim archive.Limits) (*Info, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// What is not a zip at all is refused before any directory is made.
	if _, err := zip.NewReader(f, st.Size()); err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, &archive.Error{Archive: name, Reason: "is not a readable zip archive: " + err.Error(), Err: err}
	}
	var info *Info
	err = intoTree(dest, func(root *os.Root) error {
		sums := map[string][32]byte{}
		opts := archive.Options{Name: name, Limits: lim, OnFile: func(n string, sum [32]byte) error {
			sums[n] = sum
			return nil
		}}
		if err := archive.ExtractZip(ctx, f, st.Size(), root, opts); err != nil {
			return err
		}
		info, err = wheelInfo(root, name, sums)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// wheelInfo reads the unpacked wheel's dist-info and checks it.
func wheelInfo(root *os.Root, name string, sums map[string][32]byte) (*Info, error) {
	distInfos := map[string]bool{}
	for n := range sums {
		if top, rest, ok := strings.Cut(n, "/"); ok && rest == "METADATA" && strings.HasSuffix(top, ".dist-info") {
			distInfos[top] = true
		}
	}
	if len(distInfos) != 1 {
		return nil, bad(name, "must hold exactly one *.dist-info/METADATA, found %d", len(distInfos))
	}
	var di string
	for k := range distInfos {
		di = k
	}
	info := &Info{DistInfo: di, Base: "."}
	meta, err := readHeaders(root, di+"/METADATA")
	if err != nil {
		return nil, bad(name, "reading METADATA: %v", err)
	}
	if info.Metadata, err = distinfo.ParseMetadata(meta); err != nil {
		return nil, bad(name, "%v", err)
	}
	if want := pyname.WheelEscape(info.Metadata.Name); !strings.EqualFold(strings.SplitN(di, "-", 2)[0], want) &&
		pyname.Normalize(strings.SplitN(di, "-", 2)[0]) != info.Metadata.Normalized() {
		return nil, bad(name, "dist-info directory %q does not match METADATA name %q", di, info.Metadata.Name)
	}
	if eps, err := pkgfile.ReadRoot(root, di+"/entry_points.txt", pkgfile.MaxManifest); err == nil {
		if info.EntryPoints, err = pydist.ParseEntryPoints(eps); err != nil {
			return nil, bad(name, "%v", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, bad(name, "reading entry_points.txt: %v", err)
	}
	rec, err := pkgfile.ReadRoot(root, di+"/"+pydist.RecordFile, pydist.MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return nil, bad(name, "reading RECORD: %v", err)
	}
	entries, err := pydist.ParseRecord(rec)
	if err != nil {
		return nil, bad(name, "%v", err)
	}
	for _, e := range entries {
		algo, digest, ok := strings.Cut(e.Hash, "=")
		if !ok || algo != "sha256" {
			continue
		}
		p := path.Clean(e.Path)
		sum, ok := sums[p]
		if !ok {
			continue
		}
		if got := base64.RawURLEncoding.EncodeToString(sum[:]); got != strings.TrimRight(digest, "=") {
			return nil, bad(name, "%s: RECORD says sha256=%s, file has sha256=%s", p, digest, got)
		}
	}
	return info, nil
}

// ExtractSdist checks the .tar.gz source distribution at src and unpacks
// it into dest without building anything. It must hold one top directory,
// <name>-<version>/, with PKG-INFO.
func ExtractSdist(ctx context.Context, src, dest string, lim archive.Limits) (*Info, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ExtractSdistFile(ctx, f, filepath.Base(src), dest, lim)
}

// ExtractSdistFile is ExtractSdist from an open file (which may have been
// unlinked since), called name in errors.
func ExtractSdistFile(ctx context.Context, f *os.File, name, dest string, lim archive.Limits) (*Info, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	var info *Info
	err = intoTree(dest, func(root *os.Root) error {
		if err := archive.ExtractTarGz(ctx, f, st.Size(), root, archive.Options{Name: name, Limits: lim}); err != nil {
			return err
		}
		dir, err := root.Open(".")
		if err != nil {
			return err
		}
		tops, err := dir.Readdirnames(-1)
		dir.Close()
		if err != nil {
			return err
		}
		if len(tops) != 1 {
			return bad(name, "sdist must hold one top directory with PKG-INFO, found %d top-level entries", len(tops))
		}
		pkgInfo, err := readHeaders(root, tops[0]+"/PKG-INFO")
		if err != nil {
			return bad(name, "sdist must hold one top directory with PKG-INFO: %v", err)
		}
		info = &Info{Base: tops[0]}
		if info.Metadata, err = distinfo.ParseMetadata(pkgInfo); err != nil {
			return bad(name, "%v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// readHeaders reads the start of a METADATA or PKG-INFO file, where its
// headers are: at most pkgfile.MaxManifest bytes (the body after them, the
// long description, can be longer and is not needed).
func readHeaders(root *os.Root, name string) ([]byte, error) {
	f, err := pkgfile.OpenRoot(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, pkgfile.MaxManifest))
}

// intoTree runs fill on a fresh temporary directory beside dest and renames
// it to dest when fill succeeds; on failure nothing is left.
func intoTree(dest string, fill func(root *os.Root) error) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".tmp-"+filepath.Base(dest)+"-")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	err = fill(root)
	root.Close()
	if err == nil {
		err = finishTree(tmp, dest)
	}
	if err != nil {
		os.RemoveAll(tmp)
	}
	return err
}

// finishTree renames the finished temporary tree into place. When another
// process won the race, its (identical) tree is kept.
func finishTree(tmp, dest string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	_, err := atomicfile.PublishDir(tmp, dest)
	return err
}

// ParseFilename splits a wheel file name into its distribution name,
// version and compatibility tags (PEP 427), or reports false.
func ParseFilename(name string) (dist, version string, tags []string, ok bool) {
	stem, found := strings.CutSuffix(name, ".whl")
	if !found {
		return "", "", nil, false
	}
	parts := strings.Split(stem, "-")
	switch len(parts) {
	case 5:
		return parts[0], parts[1], parts[2:], true
	case 6: // with a build tag
		return parts[0], parts[1], parts[3:], true
	}
	return "", "", nil, false
}

// ParseSdistFilename splits "<name>-<version>.tar.gz" (PEP 625).
func ParseSdistFilename(name string) (dist, version string, ok bool) {
	stem, found := strings.CutSuffix(name, ".tar.gz")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(stem, "-")
	if i <= 0 || i == len(stem)-1 {
		return "", "", false
	}
	return stem[:i], stem[i+1:], true
}

// Rank reports whether a wheel's tags say it is pure Python for Python 3
// (a none ABI and the any platform), and how preferable it is: 0 for
// py3-none-any, 1 for other pure wheels, 2 for everything else.
func Rank(tags []string) int {
	if len(tags) != 3 {
		return 2
	}
	py, abi, plat := tags[0], tags[1], tags[2]
	if abi != "none" || plat != "any" {
		return 2
	}
	for _, p := range strings.Split(py, ".") {
		if p == "py3" {
			return 0
		}
	}
	return 1
}
