package target

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A target redirecting /v1/models to another host (another port of the
// same address) is refused: the key is not sent there, and the other
// host's model is not taken for the target's.
func TestFirstModelRefusesARedirectToAnotherHost(t *testing.T) {
	var reached, keys atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			keys.Add(1)
		}
		io.WriteString(w, `{"data":[{"id":"elsewhere"}]}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	m, err := FirstModel(context.Background(), srv.URL, "sk-redirect-key-0123")
	if err == nil || !strings.Contains(err.Error(), "the server redirected to another host ("+strings.TrimPrefix(other.URL, "http://")) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("FirstModel = %q, %v; want the redirect refused", m, err)
	}
	if reached.Load() != 0 || keys.Load() != 0 {
		t.Errorf("the other host got %d requests, %d with the key", reached.Load(), keys.Load())
	}
}
