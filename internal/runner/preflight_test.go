package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/client"
)

// A server that streams forever fails the preflight at its deadline, not
// after three request timeouts (15 minutes by default).
func TestPreflightIsBounded(t *testing.T) {
	old := PreflightTimeout
	PreflightTimeout = 300 * time.Millisecond
	t.Cleanup(func() { PreflightTimeout = old })
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}`+"\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	defer close(stop)
	cl, err := client.New(client.Options{BaseURL: srv.URL, API: "chat", Model: "m", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.CloseIdle()
	err = preflight(context.Background(), cl)
	if err == nil || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("preflight = %v, want a failure at its deadline", err)
	}
}
