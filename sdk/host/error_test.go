package host

import (
	"errors"
	"testing"
)

// TestErrorNamesTheMethodOnce: a PM built on the SDK puts the method in its
// own invalid-params message; the host does not say it a second time.
func TestErrorNamesTheMethodOnce(t *testing.T) {
	for _, tc := range []struct {
		cause, want string
	}{
		{"active_plugins: invalid params: deps: expected an array", "pm cargo: active_plugins: invalid params: deps: expected an array"},
		{"lockfile unreadable", "pm cargo: active_plugins: lockfile unreadable"},
		{"active_pluginsx: odd", "pm cargo: active_plugins: active_pluginsx: odd"},
	} {
		e := &Error{PM: "cargo", Method: "active_plugins", Err: errors.New(tc.cause)}
		if got := e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
