package cli

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestReportsOf: a PM's diagnostics become discover-shaped warnings, info
// ones notes, and each has one human line "KIND: PM: FILE:LINE: message".
func TestReportsOf(t *testing.T) {
	pkg := &protocol.PackageID{PM: "npm", Name: "brk", Version: "1.0.0"}
	r := reportsOf("npm", protocol.MethodLoadPlugin, []protocol.Diagnostic{
		{Message: "hooks ignored", File: "/w/package.json", Line: 3, Package: pkg},
		{Message: "no place at all"},
		{Message: "file only", File: "/w/a.toml"},
		{Level: protocol.LevelInfo, Message: "editable\nsecond line"},
	})
	wantLines := []string{
		"warning: npm: /w/package.json:3: npm:brk@1.0.0: hooks ignored",
		"warning: npm: no place at all",
		"warning: npm: /w/a.toml: file only",
		"note: npm: editable\n    second line",
	}
	if len(r.lines) != len(wantLines) {
		t.Fatalf("lines = %q", r.lines)
	}
	for i, w := range wantLines {
		if r.lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, r.lines[i], w)
		}
	}
	if len(r.warnings) != 3 || len(r.notes) != 1 {
		t.Fatalf("warnings %v, notes %v: want 3 and 1", r.warnings, r.notes)
	}
	w := r.warnings[0]
	if w.PM != "npm" || w.File != "/w/package.json" || w.Line != 3 ||
		w.Message != "pm npm: npm:brk@1.0.0: hooks ignored (/w/package.json:3)" {
		t.Errorf("warning = %+v", w)
	}
	if empty := reportsOf("x", "list_deps", nil); empty.warnings == nil || empty.notes == nil || len(empty.lines) != 0 {
		t.Errorf("no diagnostics: %+v, want empty non-nil lists and no line", empty)
	}
}
