package pmserver_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestLargeAnswerGrowsPipe: before a large answer (streamed or held) is
// written to a pipe, the pipe is grown to hold up to 1 MiB of it, so the
// PM and the host do not take turns every 64 KiB; a small answer leaves
// the pipe as it was.
func TestLargeAnswerGrowsPipe(t *testing.T) {
	big := bigAnswer(30000)
	for _, tc := range []struct {
		name string
		pm   func(t *testing.T) pmserver.PM
		want int
	}{
		{"streamed", func(t *testing.T) pmserver.PM {
			pm := &streamPM{rawPM: newRawPM()}
			pm.keep(t, big)
			return pm
		}, 1 << 20},
		{"held", func(t *testing.T) pmserver.PM {
			return &vettedPM{rawPM: newRawPM(), vetted: pmserver.Vetted(big)}
		}, 1 << 20},
		{"small", func(t *testing.T) pmserver.PM {
			return &vettedPM{rawPM: newRawPM(), vetted: pmserver.Vetted(`[]`)}
		}, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			before, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
			if err != nil || before != 64<<10 {
				t.Skipf("pipe capacity %d (%v), want the default 64 KiB", before, err)
			}
			read := make(chan int)
			go func() {
				n, _ := io.Copy(io.Discard, r)
				read <- int(n)
			}()
			in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
			serr := pmserver.Serve(context.Background(), tc.pm(t), strings.NewReader(in), w)
			after, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
			w.Close()
			n := <-read
			if serr != nil || err != nil {
				t.Fatalf("Serve: %v; F_GETPIPE_SZ: %v", serr, err)
			}
			if after != tc.want {
				t.Errorf("pipe capacity %d after an answer of %d bytes, want %d", after, n, tc.want)
			}
		})
	}
}

// serveToPipe serves in to pm with the output on a pipe, the way a host
// spawns a PM, and returns the first keep bytes that came out (all of
// them when keep < 0) and Serve's error; the reading end is closed once
// keep bytes are read.
func serveToPipe(t *testing.T, pm pmserver.PM, in string, keep int) ([]byte, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() {
		var b []byte
		if keep < 0 {
			b, _ = io.ReadAll(r)
		} else {
			b = make([]byte, keep)
			n, _ := io.ReadFull(r, b)
			b = b[:n]
		}
		r.Close()
		read <- b
	}()
	serr := pmserver.Serve(context.Background(), pm, strings.NewReader(in), w)
	w.Close()
	return <-read, serr
}

// TestStreamedToPipe: on a pipe, where the harness hands the kept answer
// to the host with splice(2), the host reads exactly what the harness
// writes anywhere else, the answer byte for byte on one line.
func TestStreamedToPipe(t *testing.T) {
	big := bigAnswer(60000)
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
	pm := &streamPM{rawPM: newRawPM()}
	pm.keep(t, big)
	got, err := serveToPipe(t, pm, in, -1)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := pmserver.Serve(context.Background(), pm, strings.NewReader(in), &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || !bytes.Contains(got, append(append([]byte(`"result":`), big...), "}\n"...)) {
		t.Errorf("the pipe got %d bytes, a buffer %d; equal %v; the answer whole on its line %v",
			len(got), want.Len(), bytes.Equal(got, want.Bytes()), bytes.Contains(got, big))
	}
	if pm.calls != 2 || pm.computed != 0 || pm.closes.Load() != 2 {
		t.Errorf("streamed %d times, computed %d, closed %d; want 2, 0, 2", pm.calls, pm.computed, pm.closes.Load())
	}
}

// TestStreamedToPipeHostGone: a host that closes the pipe in the middle of
// a spliced answer ends serving as any failed write does (no error at the
// end of input, no cut line reported), and the source is closed.
func TestStreamedToPipeHostGone(t *testing.T) {
	pm := &streamPM{rawPM: newRawPM()}
	pm.keep(t, bigAnswer(200000)) // several MiB: more than the grown pipe holds
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
	got, err := serveToPipe(t, pm, in, 100<<10)
	if err != nil || len(got) != 100<<10 {
		t.Errorf("Serve: %v after the host read %d bytes; want no error", err, len(got))
	}
	if pm.closes.Load() != 1 {
		t.Errorf("Close called %d times, want 1", pm.closes.Load())
	}
}
