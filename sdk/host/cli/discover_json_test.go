package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// encodedPlugin is what the encoder writes for p as an element of the
// plugin list: indented two levels, without its trailing newline.
func encodedPlugin(t testing.TB, p *pluginJSON) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return "    " + strings.TrimSuffix(buf.String(), "\n")
}

// FuzzPluginAppendIndented holds appendIndented to the encoder for any
// strings in any field: escapes (HTML, control characters, U+2028,
// invalid UTF-8), an empty reason left out, any skill count.
func FuzzPluginAppendIndented(f *testing.F) {
	f.Add("npm", "a<b>&c", "1.0.0", "x", "/w/node_modules/a", "dependency", "enabled", "", 2)
	f.Add("cargo", "d", "", "d\u2028", "/w/\x00\x1f", "workspace", "invalid", "line\nbreak \"quoted\" \\", -1)
	f.Add("pypi", "\xff\xfe", "é", "\t", "\u007f", "", "needs-consent", "\u2029 <", 1<<30)
	f.Fuzz(func(t *testing.T, pm, name, version, pname, root, source, state, reason string, skills int) {
		p := &pluginJSON{ID: protocol.PackageID{PM: pm, Name: name, Version: version}, Name: pname, Root: root,
			Source: discovery.Source(source), State: state, Reason: reason, Skills: skills}
		if got, want := string(p.appendIndented(nil)), encodedPlugin(t, p); got != want {
			t.Errorf("appendIndented wrote\n%s\nthe encoder\n%s", got, want)
		}
	})
}

// BenchmarkDiscoverWriteJSON measures discover --json's printing of a
// thousand plugins waiting for consent, what follows the last PM's answer:
// the consent hint, then the document.
func BenchmarkDiscoverWriteJSON(b *testing.B) {
	doc := discoverDoc{Version: JSONVersion}
	for i := range 1000 {
		n := fmt.Sprintf("pkg-%04d", i)
		doc.Plugins = append(doc.Plugins, pluginJSON{ID: protocol.PackageID{PM: "npm", Name: n, Version: "1.0.0"}, Name: n,
			Root: "/home/user/project/node_modules/" + n, Source: "dependency", State: "needs-consent",
			Reason: `embedded in a dependency; consent with auto-enable = [{pm = "npm", name = "` + n + `"}] in [plugins]`})
		doc.Consent = append(doc.Consent, consentChoice{"npm", n})
	}
	cfg := &config.Config{Dir: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		doc.Notes = consentHint(doc.Consent, cfg)
		if err := doc.writeJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
