package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/slo"
)

// misbehaving serves the preflight and calibration requests properly and
// then misbehaves as bad does, from the n-th benchmark request on.
func misbehaving(t *testing.T, after int64, bad func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r) // engine probes and /metrics
			return
		}
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "Say hello.") || n.Add(1) <= after {
			io.WriteString(w, `data: {"choices":[{"delta":{"content":" ok"}}]}`+"\n\n")
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, `data: {"choices":[{"delta":{"content":" ok"}}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		bad(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runAgainst(t *testing.T, url, timeout string) (*result.File, time.Duration) {
	t.Helper()
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'failing',
  target: b.target.url('%s', model='m'),
  request: { timeout: '%s' },
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(2), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([20], duration='1500ms', warmup='0s'),
}`, url, timeout)
	l, err := suitefile.LoadSource("failing.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// The failures are the server's: what is timed is how soon they end
	// the run, without reruns of a trial the busy machine made invalid.
	f, err := Run(context.Background(), inputOf(l), Options{Reruns: -1})
	if err != nil {
		t.Fatalf("run failed instead of recording the failures: %v", err)
	}
	return f, time.Since(start)
}

// TestFailingTargets: a target that disappears, hangs or answers garbage
// mid-run yields a finished result with its failures counted by kind, not
// a crash or a hang.
func TestFailingTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout string
		bad     func(w http.ResponseWriter, r *http.Request)
		kinds   []string
	}{
		{"hangs", "300ms", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // never a byte more
		}, []string{"timeout"}},
		{"garbage", "5s", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html><body>502 Bad Gateway</body></html>\n")
		}, []string{"stream_cut"}},
		{"bad JSON", "5s", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: {\"choices\": [\n\n")
		}, []string{"malformed"}},
		{"5xx", "5s", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"overloaded"}`, http.StatusServiceUnavailable)
		}, []string{"http_503"}},
		{"dies mid-stream", "5s", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `data: {"choices":[{"delta":{"content":" x"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut
		}, []string{"stream_cut"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := misbehaving(t, 5, tt.bad)
			f, took := runAgainst(t, srv.URL, tt.timeout)
			p := f.Points[0]
			if p.Requests.Sent < 25 || p.Requests.Completed != 5 || p.Requests.Failed != p.Requests.Sent-5 {
				t.Errorf("requests %+v", p.Requests)
			}
			for _, k := range tt.kinds {
				if p.Requests.Errors[k] != p.Requests.Failed {
					t.Errorf("errors %v, want all %d failures as %s", p.Requests.Errors, p.Requests.Failed, k)
				}
			}
			if took > 10*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestTargetDisappears closes the server part-way through a point: the
// rest fail as connection errors and the run still ends with a result.
func TestTargetDisappears(t *testing.T) {
	t.Parallel()
	srv := misbehaving(t, 1<<30, nil)
	time.AfterFunc(700*time.Millisecond, func() {
		srv.CloseClientConnections()
		srv.Listener.Close()
	})
	f, took := runAgainst(t, srv.URL, "2s")
	p := f.Points[0]
	if p.Requests.Completed == 0 || p.Requests.Errors["connect"] == 0 || p.Requests.Failed+p.Requests.Completed != p.Requests.Sent {
		t.Errorf("requests %+v", p.Requests)
	}
	if took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestSimFaults runs against a simulator that fails on purpose: each kind
// of failure is counted as its own error kind, the run keeps going, and an
// error-rate SLO catches it.
func TestSimFaults(t *testing.T) {
	t.Parallel()
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'faulty',
  target: b.target.sim('tiny', max_num_seqs=64, faults={
    error_rate: 0.1, reset_rate: 0.1, stall_rate: 0.1, stall: '2s', malformed_rate: 0.1, wrong_usage_rate: 0.1,
  }),
  request: { timeout: '500ms' },
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.concurrency([16], requests=400, warmup='0s', duration='0s'),
  slos: [b.slo.rate('error_rate', '<', 0.05)],
}`
	f := runSource(t, "faulty.jsonnet", src)
	p := f.Points[0]
	e := p.Requests.Errors
	// 400 requests, 10% each: 40 expected, binomial sd ~6.
	for kind, n := range map[string]int{"http_503": e["http_503"], "stream_cut": e["stream_cut"], "timeout": e["timeout"], "malformed": e["malformed"], "wrong usage": p.Tokens.OutputMismatch} {
		if n < 20 || n > 60 {
			t.Errorf("%s: %d of 400, want about 40 (errors %v)", kind, n, e)
		}
	}
	if p.Requests.Sent != 400 || p.Requests.Failed != e["http_503"]+e["stream_cut"]+e["timeout"]+e["malformed"] {
		t.Errorf("requests %+v", p.Requests)
	}
	if len(f.SLOs) != 1 || f.SLOs[0].Pass {
		t.Errorf("the error-rate SLO passed at %v", p.Requests.ErrorRate)
	}
}

// A run where every request failed does not pass silently, SLOs or not:
// the sanity gate fails it, unless the suite turns the gate off.
func TestSanityGate(t *testing.T) {
	t.Parallel()
	srv := misbehaving(t, 0, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	f, _ := runAgainst(t, srv.URL, "2s")
	var failed []string
	for _, s := range f.SLOs {
		if !s.Pass {
			failed = append(failed, s.Name+": "+s.Note)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "sanity: some request completes") || !strings.Contains(failed[0], "none of") {
		t.Errorf("failed SLOs %q, want the sanity gate's", failed)
	}

	half := result.Point{Label: "rate=1", Measured: result.Measured{Requests: result.Requests{Sent: 10, Completed: 4, Failed: 6, ErrorRate: 0.6}}}
	ok := result.Point{Label: "rate=2", Measured: result.Measured{Requests: result.Requests{Sent: 10, Completed: 9, Failed: 1, ErrorRate: 0.1}}}
	s, _ := suite.Decode([]byte(`{"name":"x","target":{"kind":"sim","profile":"tiny"},"workload":{"input_tokens":{"kind":"fixed","value":8},"output_tokens":{"kind":"fixed","value":2}},"sweep":{"rates":[1,2],"duration":"1s"}}`))
	if v := slo.Sanity(s, []result.Point{half, ok}); len(v) != 1 || v[0].Point != "rate=1" || v[0].Limit != 0.5 {
		t.Errorf("default gate: %+v", v)
	}
	s.Sanity = &suite.Sanity{MaxErrorRate: 0.7}
	if v := slo.Sanity(s, []result.Point{half, ok}); len(v) != 0 {
		t.Errorf("max_error_rate 0.7: %+v", v)
	}
	s.Sanity = &suite.Sanity{Off: true}
	if v := slo.Sanity(s, []result.Point{{Label: "x", Measured: result.Measured{Requests: result.Requests{Sent: 5, Failed: 5, ErrorRate: 1}}}}); len(v) != 0 {
		t.Errorf("gate off: %+v", v)
	}
}
