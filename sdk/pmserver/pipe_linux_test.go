package pmserver_test

import (
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
