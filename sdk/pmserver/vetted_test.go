package pmserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// vettedPM is rawPM whose kept active_plugins answers are also served as
// vetted (pmserver.VettedActivePlugins), or this fixed result when set.
type vettedPM struct {
	*rawPM
	vetted      pmserver.Vetted // served as vetted when set
	vetDeclines bool            // ActivePluginsVetted declines
	vetCalls    int
}

func (p *vettedPM) ActivePluginsVetted(ctx context.Context, params json.RawMessage) (pmserver.Vetted, bool, error) {
	p.vetCalls++
	if p.vetDeclines {
		return nil, false, nil
	}
	if p.vetted != nil {
		return p.vetted, true, nil
	}
	res, ok, err := p.ActivePluginsRaw(ctx, params)
	return pmserver.Vetted(res), ok, err
}

// TestVettedServedFirst: a vetted answer is tried before the raw path and
// the usual one and sent byte for byte as the usual path sends it; when it
// declines, the raw path answers.
func TestVettedServedFirst(t *testing.T) {
	pm := &vettedPM{rawPM: newRawPM()}
	first, _ := answers(t, hook(t, pm))
	second, codes := answers(t, hook(t, pm))
	if pm.computed != 1 || pm.vetCalls != 2 {
		t.Fatalf("ActivePlugins ran %d times and ActivePluginsVetted %d, want 1 and 2", pm.computed, pm.vetCalls)
	}
	if codes["2"] != 0 || second["2"] != first["2"] {
		t.Errorf("vetted answer %s (code %d), usual answer %s", second["2"], codes["2"], first["2"])
	}
	pm.vetDeclines = true
	third, _ := answers(t, hook(t, pm))
	if pm.computed != 1 || third["2"] != first["2"] {
		t.Errorf("declined vetted path: ActivePlugins ran %d times in all, answer %s", pm.computed, third["2"])
	}
}

// TestVettedFraming: the harness still refuses a vetted answer that would
// break the stream or is not an array (an internal error, the stream
// intact), but does not scan it again for UTF-8 or JSON validity: that is
// what the PM vouched for when it stored it.
func TestVettedFraming(t *testing.T) {
	for _, tc := range []struct {
		name, vetted string
		code         int
	}{
		{"two lines", "[1,\n2]", int(protocol.CodeInternalError)},
		{"object", `{"a":1}`, int(protocol.CodeInternalError)},
		{"unclosed", `[{"id":1}`, int(protocol.CodeInternalError)},
		{"empty array", `[]`, 0},
		{"not rescanned", `[1,,2]`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pm := &vettedPM{rawPM: newRawPM(), vetted: pmserver.Vetted(tc.vetted)}
			var in string = initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n"
			lines := rawServe(t, pm, in)
			if len(lines) != 2 {
				t.Fatalf("want 2 response lines, got %d:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			if tc.code != 0 {
				if r := decodeRsp(t, lines[1]); r.code() != tc.code {
					t.Errorf("code %d, want %d", r.code(), tc.code)
				}
				return
			}
			if want := `{"jsonrpc":"2.0","id":2,"result":` + tc.vetted + `}`; lines[1] != want {
				t.Errorf("sent %s, want %s", lines[1], want)
			}
		})
	}
}

// TestLargeRawAnswerWritten: a pre-encoded answer larger than what the
// channel copies into one line is written as it is, between the response's
// head and end: the line is byte for byte the response, then the next
// response follows on its own line.
func TestLargeRawAnswerWritten(t *testing.T) {
	var big bytes.Buffer
	big.WriteString("[")
	for i := range 20000 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"n":%d}`, i)
	}
	big.WriteString("]")
	pm := &vettedPM{rawPM: newRawPM(), vetted: pmserver.Vetted(big.Bytes())}
	in := initReq + "\n" + req(2, protocol.MethodActivePlugins, rawParams) + "\n" + req(3, protocol.MethodListDeps, "") + "\n"
	lines := rawServe(t, pm, in)
	if len(lines) != 3 {
		t.Fatalf("want 3 response lines, got %d", len(lines))
	}
	want := `{"jsonrpc":"2.0","id":2,"result":` + big.String() + `}`
	found := 0
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, `{"jsonrpc":"2.0","id":2,`):
			found++
			if l != want {
				t.Errorf("the large answer was not sent as it is (%d bytes, want %d)", len(l), len(want))
			}
		case decodeRsp(t, l).code() == 0 && string(decodeRsp(t, l).ID) == "3":
			found++
		default:
			t.Errorf("unexpected response %.200s", l)
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 responses", found)
	}
}
