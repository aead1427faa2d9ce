package export

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

func committed(t *testing.T) *result.File {
	t.Helper()
	f, err := result.Read("../../framework/result/testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// decode reads an exposition back with the Prometheus libraries' parser.
func decode(t *testing.T, r io.Reader, format expfmt.Format) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(r, format)
	out := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		out[f.GetName()] = &f
	}
}

// value finds the series of a family whose labels include want.
func value(t *testing.T, f *dto.MetricFamily, want map[string]string) float64 {
	t.Helper()
	if f == nil {
		t.Fatal("family missing")
	}
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("%s: no series with %v", f.GetName(), want)
	return 0
}

// The OpenMetrics file parses with the Prometheus parser and holds each
// figure of the committed results file as the results file says it:
// latencies in seconds by statistic, per-point figures as they are read
// through the catalogue, and the SLO verdict.
func TestOpenMetricsHoldsTheFigures(t *testing.T) {
	f := committed(t)
	var b bytes.Buffer
	if err := WriteOpenMetrics(&b, []*result.File{f}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "# EOF\n") {
		t.Fatalf("no # EOF at the end:\n%s", b.String())
	}
	fams := decode(t, &b, expfmt.FmtOpenMetrics_1_0_0)
	p := f.Points[0]
	at := map[string]string{"suite": "quickstart", "point": p.Label, "trial": "1"}
	withStat := func(stat string) map[string]string {
		m := map[string]string{"stat": stat}
		for k, v := range at {
			m[k] = v
		}
		return m
	}
	ttft := fams["benchci_ttft_seconds"]
	if got := value(t, ttft, withStat("p99")); got != p.Latency[metric.TTFT].P99/1000 {
		t.Errorf("ttft p99 %v s, want %v ms / 1000", got, p.Latency[metric.TTFT].P99)
	}
	if ttft.GetUnit() != "seconds" || ttft.GetType() != dto.MetricType_GAUGE {
		t.Errorf("ttft family: unit %q type %v", ttft.GetUnit(), ttft.GetType())
	}
	if got := value(t, fams["benchci_output_throughput"], at); got != p.Throughput.OutputTokens {
		t.Errorf("output throughput %v, want %v", got, p.Throughput.OutputTokens)
	}
	if _, ok := fams["benchci_goodput"]; ok && p.Throughput.Goodput == nil {
		t.Error("goodput exported for a point that did not measure it")
	}
	s := f.SLOs[0]
	want := 0.0
	if s.Pass {
		want = 1
	}
	if got := value(t, fams["benchci_slo_pass"], map[string]string{"slo": s.Name}); got != want {
		t.Errorf("slo %q exported %v, want %v", s.Name, got, want)
	}
}

// A label value from a hostile file (quotes, newlines, a bidi control)
// cannot break the exposition.
func TestOpenMetricsEscapesLabels(t *testing.T) {
	f := committed(t)
	f.Suite.Name = "evil\"} 1\n# EOF\u202e"
	var b bytes.Buffer
	if err := WriteOpenMetrics(&b, []*result.File{f}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, l := range lines {
		if (l == "# EOF") != (i == len(lines)-1) {
			t.Fatalf("line %d %q: a label value broke a line or ended the exposition", i+1, l)
		}
	}
	fams := decode(t, &b, expfmt.FmtOpenMetrics_1_0_0)
	// The value reads back whole, its control characters neutralized.
	if value(t, fams["benchci_request_throughput"], map[string]string{"suite": "evil\"} 1 # EOF\ufffd"}) != f.Points[0].Throughput.Requests {
		t.Error("the series of the hostile suite name does not read back")
	}
}

// Push PUTs each suite's figures to the Pushgateway under its job and
// suite, in the text format, and a refusal is an error naming it.
func TestPushToGateway(t *testing.T) {
	var got struct {
		method, path, ctype string
		fams                map[string]*dto.MetricFamily
	}
	status := http.StatusOK
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.ctype = r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type")
		got.fams = decode(t, r.Body, expfmt.NewFormat(expfmt.TypeTextPlain))
		w.WriteHeader(status)
		io.WriteString(w, "pushed metrics are invalid or inconsistent\n")
	}))
	defer gw.Close()
	f := committed(t)
	if err := Push(context.Background(), gw.Client(), gw.URL, "ci", []*result.File{f}); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPut || got.path != "/metrics/job/ci/suite/quickstart" || !strings.HasPrefix(got.ctype, "text/plain") {
		t.Errorf("pushed %s %s (%s)", got.method, got.path, got.ctype)
	}
	if value(t, got.fams["benchci_request_throughput"], map[string]string{"suite": "quickstart"}) != f.Points[0].Throughput.Requests {
		t.Error("the pushed request throughput is not the file's")
	}
	f.Suite.Name = "chat/fp8"
	if err := Push(context.Background(), gw.Client(), gw.URL, "ci", []*result.File{f}); err != nil {
		t.Fatal(err)
	}
	if got.path != "/metrics/job/ci/suite@base64/Y2hhdC9mcDg" {
		t.Errorf("a variant's suite pushed to %s, want its name base64-encoded", got.path)
	}
	status = http.StatusBadRequest
	err := Push(context.Background(), gw.Client(), gw.URL, "ci", []*result.File{f})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "inconsistent") {
		t.Errorf("a refused push: %v", err)
	}
	if err := Push(context.Background(), gw.Client(), "ftp://x", "ci", nil); err == nil {
		t.Error("a non-http gateway was accepted")
	}
}

// A gateway redirecting the push to another host (another port of the
// same address) is refused: the push is an error saying so, and the
// other host gets neither the figures nor the URL's credentials. The
// client handed to Push need not refuse redirects itself.
func TestPushRefusesARedirectToAnotherHost(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer gw.Close()
	withCreds := strings.Replace(gw.URL, "http://", "http://u:canary-SECRET-123@", 1)
	err := Push(context.Background(), &http.Client{}, withCreds, "ci", []*result.File{committed(t)})
	if err == nil || !strings.Contains(err.Error(), "redirected to another host ("+strings.TrimPrefix(other.URL, "http://")) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a push redirected to another host: %v", err)
	}
	if reached.Load() != 0 {
		t.Errorf("the other host got %d requests", reached.Load())
	}
}
