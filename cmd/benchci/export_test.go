package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// export writes OpenMetrics to stdout and pushes to a gateway; with no
// destination it is a usage error.
func TestExport(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, context.Background(), "export", "--openmetrics", "-", "testdata/candidate.json")
	if code != 0 || !strings.HasSuffix(stdout, "# EOF\n") || !strings.Contains(stdout, `benchci_ttft_seconds{suite="`) {
		t.Fatalf("exit %d\n%.500s\n%s", code, stdout, stderr)
	}
	var pushed string
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		pushed = r.Method + " " + r.URL.Path + "\n" + string(b)
	}))
	defer gw.Close()
	if code, _, stderr := runCLI(t, context.Background(), "export", "--pushgateway", gw.URL, "--job", "pr", "testdata/candidate.json"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(pushed, "PUT /metrics/job/pr/suite/") || !strings.Contains(pushed, "benchci_output_throughput{") {
		t.Errorf("pushed %.300s", pushed)
	}
	if code, _, stderr := runCLI(t, context.Background(), "export", "testdata/candidate.json"); code != exitUsage || !strings.Contains(stderr, "--openmetrics") {
		t.Errorf("no destination: exit %d: %s", code, stderr)
	}
}
