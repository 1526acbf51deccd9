package pmtest

import "testing"

func TestInexact(t *testing.T) {
	for v, want := range map[string]bool{
		"1.0.0": true, "1.0.0-x": true, "1.0.0-rc.1+build.5": true, "1!2.0.post1": true, "2.0.0+local.x": true,
		"60c93654bdf8d823ed79b0f7dfcbcc813b896e40": true, "0.4.2": true,
		"": false, "*": false, "^1.0": false, "~1.2": false, ">=1,<2": false, "1.x": false, "1.2.X": false,
		"1.0 - 2.0": false, "1 || 2": false, "==1.0": false, "!=1.0": false, "1.*": false, "latest tag": false,
	} {
		if got := inexact(v) == ""; got != want {
			t.Errorf("inexact(%q) = %q; exact %v, want %v", v, inexact(v), got, want)
		}
	}
}

func TestSameAnswer(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{`[1,2]`, `[2,1]`, true},
		{`[1,2]`, `[1,2,2]`, false},
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
	} {
		if got := sameAnswer(tt.a, tt.b); got != tt.want {
			t.Errorf("sameAnswer(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}
