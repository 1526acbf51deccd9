package fakeregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"time"
)

// Hostile is one malicious tarball of the corpus.
type Hostile struct {
	// Name names the attack; it is also a valid npm package name.
	Name string
	// Tgz is the tarball.
	Tgz []byte
	// Detail is a phrase the refusal's detail must contain.
	Detail string
}

// bombMiB is how much zero data the bombs of the corpus really carry,
// decompressed: far over the extractor's ratio cap for a tarball of under
// a megabyte (100 × its size + 8 MiB).
const bombMiB = 600

// HostileTarballs returns a corpus of malicious npm tarballs, each of which
// an npm PM must refuse as invalid content without writing anything: path
// traversal, absolute paths, links out of the package, devices, entries
// colliding on one path (duplicates, a file and a directory, names
// differing only in case), over-long names, and gzip bombs that really
// decompress to hundreds of megabytes (built from concatenated gzip
// members, so each costs under a megabyte).
func HostileTarballs() []Hostile {
	pj := Entry{Name: "package/package.json", Body: `{"name":"x","version":"1.0.0"}`}
	return []Hostile{
		{"dotdot", Tarball(pj, Entry{Name: "package/../../evil", Body: "x"}), "escapes"},
		{"dotdot-nested", Tarball(pj, Entry{Name: "package/a/../../../evil", Body: "x"}), "escapes"},
		{"dotdot-backslash", Tarball(pj, Entry{Name: `package\..\..\evil`, Body: "x"}), "escapes"},
		{"dotdot-pax", Tarball(pj, Entry{Name: "package/../../évil-" + strings.Repeat("p", 120), Body: "x"}), "escapes"},
		{"absolute", Tarball(pj, Entry{Name: "/tmp/evil", Body: "x"}), "absolute"},
		{"absolute-drive", Tarball(pj, Entry{Name: "C:/evil", Body: "x"}), "absolute"},
		{"symlink-out", Tarball(pj,
			Entry{Name: "package/link", Type: tar.TypeSymlink, Linkname: "../../../../outside"},
			Entry{Name: "package/link/pwned", Body: "x"}), "link"},
		{"symlink-absolute", Tarball(pj, Entry{Name: "package/passwd", Type: tar.TypeSymlink, Linkname: "/etc/passwd"}), "link"},
		{"hardlink-out", Tarball(pj, Entry{Name: "package/h", Type: tar.TypeLink, Linkname: "../../../../outside/secret"}), "link"},
		{"hardlink-absolute", Tarball(pj, Entry{Name: "package/h", Type: tar.TypeLink, Linkname: "/etc/passwd"}), "link"},
		{"chardev", Tarball(pj, Entry{Name: "package/null", Type: tar.TypeChar}), "special"},
		{"blockdev", Tarball(pj, Entry{Name: "package/sda", Type: tar.TypeBlock}), "special"},
		{"fifo", Tarball(pj, Entry{Name: "package/fifo", Type: tar.TypeFifo}), "special"},
		{"duplicate", Tarball(pj, Entry{Name: "package/index.js", Body: "good"}, Entry{Name: "package/index.js", Body: "evil"}), "more than once"},
		{"duplicate-top", Tarball(pj, Entry{Name: "other/package.json", Body: `{"name":"evil"}`}), "more than once"},
		{"duplicate-dot", Tarball(pj, Entry{Name: "package/./package.json", Body: `{"name":"evil"}`}), "more than once"},
		{"case-files", Tarball(pj, Entry{Name: "package/README.md", Body: "a"}, Entry{Name: "package/readme.md", Body: "b"}), "case"},
		{"case-dirs", Tarball(pj, Entry{Name: "package/Skills/a/SKILL.md", Body: "a"}, Entry{Name: "package/skills/b/SKILL.md", Body: "b"}), "case"},
		{"file-then-dir", Tarball(pj, Entry{Name: "package/lib", Body: "x"}, Entry{Name: "package/lib/index.js", Body: "y"}), "directory"},
		{"dir-then-file", Tarball(pj, Entry{Name: "package/lib/", Type: tar.TypeDir}, Entry{Name: "package/lib", Body: "x"}), "directory"},
		{"file-then-dir-entry", Tarball(pj, Entry{Name: "package/lib", Body: "x"}, Entry{Name: "package/lib/", Type: tar.TypeDir}), "directory"},
		{"long-name", Tarball(pj, Entry{Name: "package/" + strings.Repeat("n", 300), Body: "x"}), "bytes"},
		{"bomb-file", bomb("package/big", bombMiB, false), "cap"},
		{"bomb-dropped-file", bomb("big", bombMiB, false), "cap"},
		{"bomb-trailing", bomb("package/package.json", bombMiB, true), "after the end"},
	}
}

// bomb builds a gzip'd tar whose decompressed size is about mib MiB of
// zeros: one entry called name holding them, or (trailing) a small valid
// entry called name followed by the zeros after the archive's end.
func bomb(name string, mib int, trailing bool) []byte {
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: time.Unix(499162500, 0)}
	if trailing {
		body := `{"name":"x","version":"1.0.0"}`
		h.Size = int64(len(body))
		_ = tw.WriteHeader(h)
		_, _ = tw.Write([]byte(body))
		_ = tw.Close()
	} else {
		h.Size = int64(mib) << 20
		_ = tw.WriteHeader(h) // the body follows as zero members below
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(head.Bytes())
	_ = zw.Close()
	var zeros bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&zeros, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	for i := 0; i < mib; i++ {
		out.Write(zeros.Bytes()) // gzip readers read concatenated members as one stream
	}
	return out.Bytes()
}
