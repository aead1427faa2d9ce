package target

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/suite"
)

func TestOpenURLAsksForModel(t *testing.T) {
	t.Setenv("BENCHCI_TEST_KEY", "sk-1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-1" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"data":[{"id":"served-model"},{"id":"other"}]}`)
	}))
	defer srv.Close()
	tg, err := Open(context.Background(), suite.Target{Kind: "url", URL: srv.URL + "/", APIKeyEnv: "BENCHCI_TEST_KEY"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Info.Model != "served-model" || tg.Info.URL != srv.URL || tg.APIKey != "sk-1" {
		t.Errorf("info %+v key %q", tg.Info, tg.APIKey)
	}
}

func TestOpenErrors(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[]}`)
	}))
	defer bad.Close()
	t.Setenv("BENCHCI_EMPTY", "")
	tests := []struct {
		name string
		t    suite.Target
		want string
	}{
		{"no models", suite.Target{Kind: "url", URL: bad.URL}, "lists no model"},
		{"empty key", suite.Target{Kind: "url", URL: bad.URL, APIKeyEnv: "BENCHCI_EMPTY"}, "BENCHCI_EMPTY"},
		{"unknown profile", suite.Target{Kind: "sim", Profile: "nope"}, "unknown simulator profile"},
	}
	for _, tt := range tests {
		_, err := Open(context.Background(), tt.t, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestOpenSim(t *testing.T) {
	tg, err := Open(context.Background(), suite.Target{Kind: "sim", Profile: "tiny"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !strings.HasPrefix(tg.Info.URL, "http://127.0.0.1:") || tg.Info.Sim == nil {
		t.Fatalf("info %+v", tg.Info)
	}
	m, err := FirstModel(context.Background(), tg.Info.URL, "")
	if err != nil || m != tg.Info.Model {
		t.Errorf("sim serves model %q (%v), info says %q", m, err, tg.Info.Model)
	}
}

// A model id that could disguise itself in a report (a right-to-left
// override, an escape sequence) is refused, not sent on and printed.
func TestOpenRefusesAModelIDThatHides(t *testing.T) {
	for _, id := range []string{"m\u202eevil", "m\x1b[2J"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := json.Marshal(map[string]any{"data": []any{map[string]any{"id": id}}})
			w.Write(b)
		}))
		_, err := Open(context.Background(), suite.Target{Kind: "url", URL: srv.URL}, Options{})
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "control or bidirectional") || strings.ContainsAny(err.Error(), "\u202e\x1b") {
			t.Errorf("model id %q: %v", id, err)
		}
	}
}
