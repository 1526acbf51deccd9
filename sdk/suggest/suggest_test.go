package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"plugins", "plugins", 0},
		{"plugin", "plugins", 1},   // insertion
		{"pluginss", "plugins", 1}, // deletion
		{"plugims", "plugins", 1},  // substitution
		{"plguins", "plugins", 1},  // adjacent swap
		{"ca", "abc", 3},           // OSA: no substring edited twice
		{"kitten", "sitting", 3},
		{"Cargo", "cargo", 1}, // case-sensitive
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"package", "dependencies", "dev-dependencies", "registry", "plugins", "auto-enable", "use"}
	for _, tc := range []struct {
		s    string
		want string
	}{
		{"dependncies", "dependencies"}, // one deletion
		{"dev-dependncies", "dev-dependencies"},
		{"registy", "registry"},
		{"plugin", "plugins"},
		{"PLUGINS", "plugins"},         // case is ignored
		{"auto-enabel", "auto-enable"}, // a swap
		{"us", "use"},                  // short: distance 1 allowed
		{"zzz", ""},                    // nothing near
		{"x", ""},                      // nothing within 1 edit
		{"", ""},
	} {
		if got := Closest(tc.s, keys); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	if got := Closest("a", nil); got != "" {
		t.Errorf("no candidates: %q", got)
	}
	// The nearest candidate is also suggested when one of the two is a
	// prefix of the other, however far apart.
	if got := Closest("depend", []string{"dependencies", "package"}); got != "dependencies" {
		t.Errorf("prefix: %q", got)
	}
	if got := Closest("dependencies-of-mine", []string{"dependencies", "package"}); got != "dependencies" {
		t.Errorf("prefix: %q", got)
	}
	if got := Closest("de", []string{"dependencies"}); got != "" {
		t.Errorf("a prefix under 3 bytes: %q", got)
	}
	// Ties go to the first candidate given.
	if got := Closest("cat", []string{"bat", "cab"}); got != "bat" {
		t.Errorf("tie: %q", got)
	}
}

// FuzzDistance checks the metric's properties on any pair: symmetric,
// zero exactly for equal strings, bounded by the longer length and at
// least the difference of the lengths; and Closest returns a candidate or
// "".
func FuzzDistance(f *testing.F) {
	f.Add("dependncies", "dependencies")
	f.Add("ab", "ba")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		d := Distance(a, b)
		if d != Distance(b, a) {
			t.Fatalf("not symmetric: %d, %d", d, Distance(b, a))
		}
		if (d == 0) != (a == b) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
		if d > max(len(a), len(b)) || d < max(len(a)-len(b), len(b)-len(a)) {
			t.Fatalf("Distance(%q, %q) = %d out of bounds", a, b, d)
		}
		if c := Closest(a, []string{b}); c != "" && c != b {
			t.Fatalf("Closest gave %q, not a candidate", c)
		}
	})
}
