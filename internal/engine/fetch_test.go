package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A /metrics body past the bound is an error, never read in part: a cut
// line can read as another number.
func TestFetchRefusesAnOversizedBody(t *testing.T) {
	line := "vllm:num_requests_running 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat(line, maxMetricsBytes/len(line)+2))
	}))
	defer srv.Close()
	err := Fetch(context.Background(), srv.URL, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "more than 16 MiB") {
		t.Fatalf("Fetch = %v, want a refusal", err)
	}
	small := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, line) }))
	defer small.Close()
	var got []byte
	if err := Fetch(context.Background(), small.URL, func(r io.Reader) (err error) { got, err = io.ReadAll(r); return }); err != nil || string(got) != line {
		t.Fatalf("a small body: %q, %v", got, err)
	}
}
