package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// An exporter redirecting its scrape to another host (another port of
// the same address) is a failed scrape saying so: the other host's
// figures are never read as the exporter's.
func TestScrapeRefusesARedirectToAnotherHost(t *testing.T) {
	var calls, reached atomic.Int64
	other := httptest.NewServer(func() http.HandlerFunc {
		h := dcgm(&calls, true)
		return func(w http.ResponseWriter, r *http.Request) { reached.Add(1); h(w, r) }
	}())
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/metrics", http.StatusFound)
	}))
	defer srv.Close()
	got, err := fetch(context.Background(), srv.URL+"/metrics", map[string]bool{"DCGM_FI_DEV_POWER_USAGE": true})
	if err == nil || !strings.Contains(err.Error(), "the server redirected to another host ("+strings.TrimPrefix(other.URL, "http://")) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("fetch = %v, %v; want the redirect refused", got, err)
	}
	if reached.Load() != 0 {
		t.Errorf("the other host was scraped %d times", reached.Load())
	}
}
