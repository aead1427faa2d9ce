package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/redact"
)

// A server's error text that quotes the API key past the point where the
// text is cut must not leak the key's beginning (F1: 274 bytes of padding,
// then the key, cut at 300 before masking, leaked 16 of its 17 bytes).
func TestErrorTextNeverCarriesTheKey(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	redact.Add(key)
	for _, tc := range []struct {
		name string
		body string
		kind string
	}{
		{"HTTP 500 with the key at byte 274", strings.Repeat("A", 274) + key, "http"},
		{"HTTP 500 with the key at the read limit", strings.Repeat("B", 512-10) + key, "http"},
		{"a stream error quoting the key", "", "stream"},
		{"HTTP 500 with the key JSON-escaped", `{"error":{"message":"invalid key sk\u002dlive\u002d0123456789abcd\u0065f"}}`, "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.kind == "http" {
					w.WriteHeader(500)
					io.WriteString(w, tc.body)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, `data: {"error": {"message": "`+strings.Repeat("C", 280)+key+`"}}`+"\n\n")
			}))
			defer srv.Close()
			c, err := New(Options{BaseURL: srv.URL, API: "chat", Model: "m", APIKey: key, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdle()
			var res Result
			c.Do(context.Background(), []byte(`{}`), "r", &res)
			if res.OK() {
				t.Fatal("the request succeeded")
			}
			for k := 4; k <= len(key); k++ {
				if strings.Contains(res.Detail, key[:k]) {
					t.Fatalf("the error text holds the key's first %d bytes: %q", k, res.Detail)
				}
			}
			if !strings.Contains(res.Detail, redact.Mask) && tc.kind == "http" && len(tc.body) < 512 {
				t.Errorf("the key was not masked: %q", res.Detail)
			}
		})
	}
}

// Characters that reorder text on a terminal or a page are made visible.
func TestErrorTextShowsBidiControls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, "ok \u202Egnp.exe\u202C \x1b[2J\x1b]0;pwned\x07")
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: "chat", Model: "m", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	var res Result
	c.Do(context.Background(), []byte(`{}`), "r", &res)
	if strings.ContainsAny(res.Detail, "\u202E\u202C\x1b\x07") || !strings.Contains(res.Detail, "\uFFFD") {
		t.Errorf("detail %q keeps the override", res.Detail)
	}
}
