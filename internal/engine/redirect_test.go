package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// An engine redirecting /metrics, its version probes or a cache reset to
// another host (another port of the same address) gets nothing from it
// read as its own: Fetch and the reset's POST fail saying so, and Detect
// finds neither an engine nor metrics.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.URL.Path == "/metrics" {
			io.WriteString(w, "vllm:num_requests_running 1\n")
			return
		}
		io.WriteString(w, `{"version":"0.9.9"}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	refused := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "the server redirected to another host ("+strings.TrimPrefix(other.URL, "http://")) && strings.Contains(err.Error(), "refused")
	}
	read := false
	if err := Fetch(context.Background(), srv.URL+"/metrics", func(io.Reader) error { read = true; return nil }); !refused(err) || read {
		t.Errorf("Fetch = %v (body read: %v); want the redirect refused", err, read)
	}
	if _, _, err := post(context.Background(), srv.URL+"/reset_prefix_cache"); !refused(err) {
		t.Errorf("post = %v; want the redirect refused", err)
	}
	if info := Detect(context.Background(), srv.URL); info.Name != "unknown" || info.Version != "" || info.Metrics {
		t.Errorf("Detect = %+v; want nothing found", info)
	}
	if reached.Load() != 0 {
		t.Errorf("the other host got %d requests", reached.Load())
	}
}
