package redirect_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/redirect"
)

// TestCheck: a registry's token follows a redirect within its origin and
// is dropped on a redirect to another scheme, host or port, which plain
// net/http would not do for the two servers here (both 127.0.0.1).
func TestCheck(t *testing.T) {
	var got []string // Authorization as received by final
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Cookie"))
	}))
	defer final.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/here":
			got = append(got, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Cookie"))
		case "/downgrade":
			http.Redirect(w, r, final.URL+"/plain", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	defer tls.Close()
	client := tls.Client()
	client.CheckRedirect = redirect.Check
	get := func(path string) error {
		req, _ := http.NewRequest("GET", tls.URL+path, nil)
		req.Header.Set("Authorization", "Bearer SECRET")
		req.Header.Set("Cookie", "session=SECRET")
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, path := range []string{"/same", "/downgrade"} {
		if err := get(path); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/here Bearer SECRET session=SECRET", "/plain  "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("received %q, want %q", got, want)
	}
	if err := get("/loop"); err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Errorf("a redirect loop: %v", err)
	}
}

// TestCheckOrigin: what counts as the same origin.
func TestCheckOrigin(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		kept     bool
	}{
		{"https://r.example/a", "https://r.example/b", true},
		{"https://r.example/a", "https://R.EXAMPLE:443/b", true},
		{"http://r.example:80/a", "http://r.example/b", true},
		{"https://r.example/a", "http://r.example/b", false},
		{"https://r.example/a", "https://r.example:8443/b", false},
		{"https://r.example/a", "https://cdn.r.example/b", false},
		{"https://r.example/a", "https://other.example/b", false},
	} {
		from, _ := http.NewRequest("GET", tt.from, nil)
		to, _ := http.NewRequest("GET", tt.to, nil)
		to.Header.Set("Authorization", "x")
		if err := redirect.Check(to, []*http.Request{from}); err != nil {
			t.Fatal(err)
		}
		if kept := to.Header.Get("Authorization") != ""; kept != tt.kept {
			t.Errorf("%s -> %s: Authorization kept = %v, want %v", tt.from, tt.to, kept, tt.kept)
		}
	}
}

// ExampleCheck shows a registry client built with the policy.
func ExampleCheck() {
	client := &http.Client{CheckRedirect: redirect.Check}
	_ = client
	// Output:
}
