package simpleapi

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
)

// gzipSdist returns a small .tar.gz sdist.
func gzipSdist(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	body := []byte("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
	if err := tw.WriteHeader(&tar.Header{Name: "demo-1.0/PKG-INFO", Mode: 0o644, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDownloadContentEncodingGzip: an index, or the CDN or bucket behind
// it, often serves a .tar.gz with "Content-Encoding: gzip". The sha256 the
// index publishes is that of the file's bytes, which is why pip asks with
// "Accept-Encoding: identity" and reads the stream undecoded. Download must
// do the same: ask for identity, and write and hash what came, not the
// .tar inside (which fails the hash check, and expands on disk).
func TestDownloadContentEncodingGzip(t *testing.T) {
	sdist := gzipSdist(t)
	sum := sha256.Sum256(sdist)
	want := hex.EncodeToString(sum[:])
	acceptEncoding := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/demo/":
			w.Header().Set("Content-Type", jsonType)
			w.Write([]byte(`{"meta":{"api-version":"1.0"},"files":[{"filename":"demo-1.0.tar.gz","url":"/files/demo-1.0.tar.gz","hashes":{"sha256":"` + want + `"}}]}`))
		case "/files/demo-1.0.tar.gz":
			select {
			case acceptEncoding <- r.Header.Get("Accept-Encoding"):
			default:
			}
			// Served as such a server does, whatever was asked.
			w.Header().Set("Content-Type", "application/x-tar")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(sdist)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := NewClient(Config{Index: srv.URL + "/simple/"}, noenv, "test")
	p, err := c.Project(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	got, err := c.Download(context.Background(), p.Files[0], &out, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if ae := <-acceptEncoding; ae != "identity" {
		t.Errorf("the download asked with Accept-Encoding %q, want identity (as pip)", ae)
	}
	if got != p.Files[0].SHA256 || !bytes.Equal(out.Bytes(), sdist) {
		t.Errorf("a file served with Content-Encoding: gzip: sha256 %s, the index says %s; wrote %d bytes, the file has %d",
			got, p.Files[0].SHA256, out.Len(), len(sdist))
	}
}
