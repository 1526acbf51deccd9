//go:build unix

package discovery

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// checkInRoot is how an offer was checked before checkOffer: the root
// opened as an os.Root, and every source.path resolved inside it.
func checkInRoot(of protocol.Offer, src Source) (*manifest.Plugin, string) {
	root, err := os.OpenRoot(of.Root)
	if err != nil {
		return nil, fmt.Sprintf("root %s is not an existing directory", of.Root)
	}
	defer root.Close()
	return validateIn(root, of, src)
}

// checkOffer settles most offers with one lstat, without opening the root;
// its verdict and reason are those of resolving every path inside the
// opened root, whatever the root and the paths are.
func TestCheckOfferAgreesWithRoot(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	for _, p := range []string{"plain/skills/a", "multi/skills/a", "dot/skills", "file-skills", "both/skills", "both/more"} {
		if err := os.MkdirAll(filepath.Join(base, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"links/out":        outside,
		"links/in":         "real",
		"links/abs-in":     filepath.Join(base, "links", "real"),
		"links/dangling":   "nowhere",
		"links/rel-out":    "../../" + filepath.Base(outside),
		"root-link":        "plain",
		"root-file-link":   "a-file",
		"multi/skills/out": outside,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(base, name)), 0o755)
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(base, "links", "real"), 0o755)
	os.WriteFile(filepath.Join(base, "a-file"), nil, 0o644)
	os.WriteFile(filepath.Join(base, "file-skills", "skills"), nil, 0o644)

	manifests := map[string]string{
		"none":      `{"name":"p"}`,
		"skills":    `{"name":"p","skills":[{"source":{"path":"skills"}}]}`,
		"dot":       `{"name":"p","skills":[{"source":{"path":"."}}]}`,
		"multi":     `{"name":"p","skills":[{"source":{"path":"skills/a"}}]}`,
		"multi-out": `{"name":"p","skills":[{"source":{"path":"skills/out/x"}}]}`,
		"out":       `{"name":"p","skills":[{"source":{"path":"out"}}]}`,
		"in":        `{"name":"p","skills":[{"source":{"path":"in"}}]}`,
		"abs-in":    `{"name":"p","skills":[{"source":{"path":"abs-in"}}]}`,
		"dangling":  `{"name":"p","skills":[{"source":{"path":"dangling"}}]}`,
		"rel-out":   `{"name":"p","skills":[{"source":{"path":"rel-out"}}]}`,
		"escape":    `{"name":"p","skills":[{"source":{"path":"../x"}}]}`,
		"absolute":  `{"name":"p","skills":[{"source":{"path":"/etc"}}]}`,
		"missing":   `{"name":"p","skills":[{"source":{"path":"missing"}}]}`,
		"two":       `{"name":"p","skills":[{"source":{"path":"skills"}},{"source":{"path":"out"}}]}`,
		"two-ok":    `{"name":"p","skills":[{"source":{"path":"skills"}},{"source":{"path":"more"}}]}`,
		"bad":       `{"name":"p","skills":"nope"}`,
		"not-json":  `{"name":`,
		"empty":     ``,
	}
	roots := []string{"plain", "multi", "dot", "file-skills", "both", "links", "root-link", "root-file-link", "a-file", "absent", "absent/deeper"}
	valid := 0
	// Each offer is checked with its paths looked at whole (nil), and
	// through one pathStats for all, which soon looks at them relative to
	// base, opened.
	var ps pathStats
	defer ps.close()
	for _, r := range roots {
		for mname, m := range manifests {
			of := protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: "p", Version: "1"}, Root: filepath.Join(base, r), Manifest: json.RawMessage(m)}
			wantP, want := checkInRoot(of, SourceDependency)
			for _, ps := range []*pathStats{nil, &ps} {
				gotP, got := checkOffer(of, SourceDependency, "eco", os.OpenRoot, ps)
				if got != want || (gotP == nil) != (wantP == nil) {
					t.Errorf("root %s, manifest %s (pathStats %v): checkOffer = %v, %q; inside the opened root: %v, %q", r, mname, ps != nil, gotP != nil, got, wantP != nil, want)
				}
				if gotP != nil {
					valid++
				}
			}
		}
	}
	if valid == 0 {
		t.Error("no offer was valid: the table checks nothing")
	}
	for _, tc := range []struct {
		of   protocol.Offer
		want string
	}{
		{protocol.Offer{ID: protocol.PackageID{PM: "other", Name: "p"}, Root: base}, `offered by pm eco under another pm's name "other"`},
		{protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: "p"}, Root: "relative"}, `root "relative" is not an absolute path`},
		{protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: "p"}, Root: base + "/plain/../plain"},
			fmt.Sprintf("root %q is not a clean path (it should read %q)", base+"/plain/../plain", filepath.Join(base, "plain"))},
		{protocol.Offer{ID: protocol.PackageID{PM: "eco", Name: "p"}, Root: base + "/plain/"},
			fmt.Sprintf("root %q is not a clean path (it should read %q)", base+"/plain/", filepath.Join(base, "plain"))},
	} {
		if p, got := checkOffer(tc.of, SourceDependency, "eco", os.OpenRoot, nil); p != nil || got != tc.want {
			t.Errorf("checkOffer(%+v) = %v, %q; want %q", tc.of, p, got, tc.want)
		}
	}
}
