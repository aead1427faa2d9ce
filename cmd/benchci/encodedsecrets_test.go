package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchci/benchci/internal/redact/redacttest"
)

// Issue 40: a server echoes the API key it was sent encoded in its 500
// bodies (base64 at each offset inside a longer encoding, URL-safe
// base64, hex, upper hex, spaced out), and a Pushgateway echoes the
// Authorization header its URL's user:password became. No encoding of
// either reaches stdout, stderr, the results file or the HTML report.
func TestHostileEncodedEchoes(t *testing.T) {
	const key = "sk-canary-SECRET-0123456789~?>" // its base64 holds '+' and '/'
	const user, password = "u", "canary-SECRET-123"
	t.Setenv("BENCHCI_TEST_ENCODED_KEY", key)
	b64 := func(enc *base64.Encoding) func(string) string {
		return func(s string) string { return enc.EncodeToString([]byte(s)) }
	}
	spaced := func(sep string) func(string) string {
		return func(s string) string { return strings.Join(strings.Split(s, ""), sep) }
	}
	encodings := []func(string) string{
		b64(base64.StdEncoding),
		func(s string) string { return b64(base64.StdEncoding)("x" + s) },
		func(s string) string { return b64(base64.StdEncoding)("xy" + s + "z") },
		b64(base64.RawURLEncoding),
		func(s string) string { return b64(base64.RawURLEncoding)("x" + s) },
		func(s string) string { return hex.EncodeToString([]byte(s)) },
		func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
		spaced(" "),
		spaced("."),
	}
	// Each run's server echoes the key in one encoding: its preflight
	// request's 500 body ends the run, and is quoted in every output.
	var encoding atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := encodings[encoding.Load()](strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":"invalid api key %s"}`, echo)
	}))
	defer srv.Close()
	outputs := map[string]string{}
	for i := range encodings {
		encoding.Store(int64(i))
		dir := t.TempDir()
		path := writeSuite(t, dir, "encoded", fmt.Sprintf(`
  target: b.target.url('%s', model='m', api_key_env='BENCHCI_TEST_ENCODED_KEY'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([1], duration='1s'),`, srv.URL))
		code, stdout, stderr := runCLI(t, context.Background(), "run", "--results", dir, "--progress=false", path)
		if code != 2 {
			t.Errorf("encoding %d: run: exit %d", i, code)
		}
		at := fmt.Sprintf("encoding %d: ", i)
		outputs[at+"run stdout"], outputs[at+"run stderr"] = stdout, stderr
		results := filepath.Join(dir, "encoded.json")
		b, err := os.ReadFile(results)
		if err != nil {
			t.Fatal(err)
		}
		outputs[at+"encoded.json"] = string(b)
		page := filepath.Join(dir, "report.html")
		_, stdout, stderr = runCLI(t, context.Background(), "report", "--html", page, "--baselines", t.TempDir(), results)
		outputs[at+"report stdout"], outputs[at+"report stderr"] = stdout, stderr
		if b, err = os.ReadFile(page); err != nil {
			t.Fatalf("no HTML report: %v\n%s", err, stderr)
		}
		outputs[at+"report.html"] = string(b)
		// The server's words reached each output, masked.
		for _, where := range []string{"run stderr", "encoded.json", "report.html"} {
			if !strings.Contains(outputs[at+where], "invalid api key [REDACTED]") {
				t.Errorf("%s%s shows no masked key:\n%.3000s", at, where, outputs[at+where])
			}
		}
	}

	// The Pushgateway quotes the Authorization header it got.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
	}))
	defer gw.Close()
	gateway := strings.Replace(gw.URL, "http://", "http://"+user+":"+password+"@", 1)
	code, stdout, stderr := runCLI(t, context.Background(), "export", "--pushgateway", gateway, "--job", "pr", "testdata/candidate.json")
	if code != exitUsage || !strings.Contains(stderr, "auth=Basic [REDACTED]") {
		t.Errorf("export to an echoing gateway: exit %d\n%s", code, stderr)
	}
	outputs["export stdout"], outputs["export stderr"] = stdout, stderr

	for where, text := range outputs {
		for _, secret := range []string{key, password, user + ":" + password} {
			if how := redacttest.Leak(text, secret, true); how != "" {
				t.Errorf("%s holds %q (%s):\n%.3000s", where, secret, how, text)
			}
		}
	}
}

// export --pushgateway refuses a gateway that redirects to another host
// (another port of the same address): an error saying so, not a push
// done, and nothing sent there.
func TestExportRefusesARedirectToAnotherHost(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer gw.Close()
	code, stdout, stderr := runCLI(t, context.Background(), "export", "--pushgateway", gw.URL, "--job", "pr", "testdata/candidate.json")
	if code != exitUsage || !strings.Contains(stderr, "the server redirected to another host ("+strings.TrimPrefix(other.URL, "http://")) || strings.Contains(stderr, "pushed to") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if reached.Load() != 0 {
		t.Errorf("the other host got %d requests", reached.Load())
	}
}
