package pyname

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Django": "django", "zope.interface": "zope-interface", "Foo__Bar--baz": "foo-bar-baz",
		"a.-_b": "a-b", "ruamel.yaml.clib": "ruamel-yaml-clib", "x": "x", "": "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if WheelEscape("Zope.Interface") != "zope_interface" {
		t.Error("WheelEscape")
	}
}

func TestValid(t *testing.T) {
	for name, want := range map[string]bool{
		"requests": true, "a": true, "zope.interface": true, "_x": false, "x-": false,
		"": false, "a b": false, "naïve": false, "A1_b.c-d": true,
	} {
		if got := Valid(name); got != want {
			t.Errorf("Valid(%q) = %v", name, got)
		}
	}
}
