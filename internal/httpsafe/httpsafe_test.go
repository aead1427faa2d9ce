package httpsafe

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Redirects is a server that redirects /away to other's URL, /here to its
// own /ok, and answers /ok; other counts the requests that reach it, and
// the Authorization headers among them.
func redirects(t *testing.T) (srv *httptest.Server, reached, creds *atomic.Int32) {
	t.Helper()
	reached, creds = new(atomic.Int32), new(atomic.Int32)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			creds.Add(1)
		}
	}))
	t.Cleanup(other.Close)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/metrics", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, reached, creds
}

// Another port of the same address is another host: the redirect is an
// error naming it, and nothing reaches it, credentials least of all. A
// redirect within the host is followed.
func TestSameHost(t *testing.T) {
	srv, reached, creds := redirects(t)
	for name, c := range map[string]*http.Client{"Client": Client(0), "Guard": Guard(&http.Client{})} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/away", nil)
		req.SetBasicAuth("u", "canary-SECRET-123")
		resp, err := c.Do(req)
		var re *RedirectError
		if err == nil {
			resp.Body.Close()
		}
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "the server redirected to another host (") || !strings.Contains(err.Error(), "); refused") {
			t.Errorf("%s: redirect to another port: %v", name, err)
		}
		resp, err = c.Get(srv.URL + "/here")
		if err != nil || resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ok" {
			t.Errorf("%s: redirect within the host: %v", name, err)
		} else {
			resp.Body.Close()
		}
	}
	if reached.Load() != 0 || creds.Load() != 0 {
		t.Errorf("the other host got %d requests, %d with credentials", reached.Load(), creds.Load())
	}
}
