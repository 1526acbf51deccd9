package npmpm

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// countingDisk counts the directory listings and file reads of
// active_plugins.
type countingDisk struct {
	osDisk
	lists, reads int
}

func (c *countingDisk) ReadDir(dir string) ([]fs.DirEntry, error) {
	c.lists++
	return c.osDisk.ReadDir(dir)
}

func (c *countingDisk) ReadFile(file string) ([]byte, error) {
	c.reads++
	return c.osDisk.ReadFile(file)
}

// genMonorepo writes a workspace of members members (each declaring every
// dependency) and deps dependencies installed at the root, one in ten with
// skills; a scoped one and one installed in the first member's own
// node_modules (at another version) are among them. It returns the
// dependencies as list_deps would report them.
func genMonorepo(tb testing.TB, ws string, members, deps int) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{}
	var ids []protocol.PackageID
	var decl []string
	for i := 0; i < deps; i++ {
		name := fmt.Sprintf("dep-%03d", i)
		if i == 1 {
			name = "@scope/dep-001"
		}
		dir := "node_modules/" + name + "/"
		files[dir+"package.json"] = fmt.Sprintf(`{"name":%q,"version":"1.0.%d"}`, name, i)
		if i%10 == 0 {
			files[dir+"skills/s/SKILL.md"] = "---\nname: s\ndescription: d\n---\n"
		}
		ids = append(ids, protocol.PackageID{PM: Name, Name: name, Version: fmt.Sprintf("1.0.%d", i)})
		decl = append(decl, fmt.Sprintf("%q:\"^1\"", name))
	}
	// The first member has its own copy of dep-000 at 2.0.0.
	files["packages/m0000/node_modules/dep-000/package.json"] = `{"name":"dep-000","version":"2.0.0"}`
	files["packages/m0000/node_modules/dep-000/skills/s/SKILL.md"] = "---\nname: s\ndescription: d\n---\n"
	ids = append(ids, protocol.PackageID{PM: Name, Name: "dep-000", Version: "2.0.0"})
	for m := 0; m < members; m++ {
		files[fmt.Sprintf("packages/m%04d/package.json", m)] = fmt.Sprintf(`{"name":"m%04d","version":"1.0.0","dependencies":{%s}}`, m, strings.Join(decl, ","))
	}
	files["package.json"] = `{"name":"root","private":true,"workspaces":["packages/*"]}`
	writeFiles(tb, ws, files)
	return ids
}

// TestActivePluginsLinear: active_plugins lists each node_modules once and
// reads one package.json per installed copy it considers, so its reads
// grow with dependencies plus members, not with their product (the old
// search probed every member and parent for every dependency).
func TestActivePluginsLinear(t *testing.T) {
	for _, size := range []struct{ members, deps int }{{5, 10}, {60, 40}} {
		ws := t.TempDir()
		ids := genMonorepo(t, ws, size.members, size.deps)
		p, _ := newPM(t, ws, nil)
		disk := &countingDisk{}
		p.diskReader = disk
		offers, err := p.ActivePlugins(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, o := range offers {
			got[o.ID.Name+"@"+o.ID.Version] = true
		}
		// dep-000 1.0.0 (root), dep-000 2.0.0 (member's own), and every tenth.
		if len(offers) != size.deps/10+1 || !got["dep-000@2.0.0"] || !got["dep-000@1.0.0"] {
			t.Errorf("%d members × %d deps: offers %v", size.members, size.deps, got)
		}
		ancestors := len(strings.Split(filepath.Clean(ws), string(filepath.Separator)))
		// One listing per member, packages/ (between the members and the
		// workspace), the workspace and each parent, plus the scope; one
		// package.json per wanted installed copy (dep-000 twice).
		limit := (size.members + 1 + ancestors + 1) + (size.deps + 2)
		if disk.reads < len(offers) {
			t.Errorf("%d package.json reads for %d offers: node_modules not read through the counted reader", disk.reads, len(offers))
		}
		if n := disk.lists + disk.reads; n > limit {
			t.Errorf("%d members × %d deps: %d listings + %d reads > %d", size.members, size.deps, disk.lists, disk.reads, limit)
		}
	}
}

// BenchmarkActivePluginsMonorepo measures active_plugins in process on a
// workspace of 1,000 members and 300 dependencies installed at the root
// (one in ten with a plugin), without the persisted cache.
func BenchmarkActivePluginsMonorepo(b *testing.B) {
	ws := b.TempDir()
	ids := genMonorepo(b, ws, 1000, 300)
	p, _ := newPM(b, ws, nil)
	p.cacheRoot = ""
	disk := &countingDisk{}
	p.diskReader = disk
	for b.Loop() {
		offers, err := p.ActivePlugins(context.Background(), ids)
		if err != nil || len(offers) != 31 {
			b.Fatalf("%d offers, %v", len(offers), err)
		}
	}
	b.ReportMetric(float64(disk.lists+disk.reads)/float64(b.N), "node_modules-reads/op")
}

// TestActivePluginsRealRoots: an offer's root is the real directory, for
// a plain entry of a node_modules reached through a linked workspace and
// for a linked entry (pnpm's layout).
func TestActivePluginsRealRoots(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	writeFiles(t, real, map[string]string{
		"package.json":                    `{"name":"app","dependencies":{"plain":"^1","linked":"^1"}}`,
		"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{}}`,
		"node_modules/.pnpm/linked@1.0.0/node_modules/linked/package.json": `{"name":"linked","version":"1.0.0","symposium":{}}`,
	})
	if err := os.Symlink(filepath.Join(".pnpm", "linked@1.0.0", "node_modules", "linked"), filepath.Join(real, "node_modules", "linked")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Symlink(real, ws); err != nil {
		t.Fatal(err)
	}
	realBase, _ := filepath.EvalSymlinks(real)
	p, _ := newPM(t, ws, nil)
	offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("plain", "1.0.0"), npmID("linked", "1.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plain":  filepath.Join(realBase, "node_modules", "plain"),
		"linked": filepath.Join(realBase, "node_modules", ".pnpm", "linked@1.0.0", "node_modules", "linked"),
	}
	if len(offers) != 2 {
		t.Fatalf("offers %+v", offers)
	}
	for _, o := range offers {
		if o.Root != want[o.ID.Name] {
			t.Errorf("%s: root %s, want %s", o.ID.Name, o.Root, want[o.ID.Name])
		}
	}
}
