package compare

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// withServerWait records, on every trial of f, a launched server that
// waited waitPerReq ms for a CPU per request it served, and ran on one
// cpuPerReq ms.
func withServerWait(f *result.File, waitPerReq, cpuPerReq float64) *result.File {
	for i := range f.Points {
		p := &f.Points[i]
		served := float64(p.Requests.Sent + p.Requests.Warmup)
		p.Validity = &result.Validity{Server: &result.ServerProcess{PID: 1, Processes: 1, CPUMs: cpuPerReq * served, WaitMs: waitPerReq * served}}
	}
	return f
}

// A TTFT that moved past its band by no more than the server's extra wait
// for a CPU is inconclusive, not a regression; a move the wait cannot
// cover, or a side that recorded no wait, is still judged.
func TestServerCPUWaitExplainsASmallMove(t *testing.T) {
	t.Parallel()
	key := metric.K(metric.TTFT, "p50").String()
	tol := map[string]string{"default": "5%"}
	one := []string{"rate=1"}
	tests := []struct {
		name               string
		scale              float64 // the candidate's TTFT over the baseline's
		baseWait, candWait float64 // ms per request; <0: not recorded
		candCPU            float64 // the candidate's CPU per request over the baseline's (0: the same)
		want               Verdict
		why                string
	}{
		{"covered by the extra wait", 1.08, 2, 14, 0, Inconclusive, "waited for a CPU 14 ms per request here against 2 ms in the baseline"},
		{"covered, its server a little busier", 1.08, 2, 14, 1.4, Inconclusive, "waited for a CPU"},
		{"a server hungrier for CPU waits by its own doing", 1.08, 2, 14, 2, Regression, ""},
		{"wait too small to cover it", 1.08, 2, 3, 0, Regression, ""},
		{"past what the wait covers", 1.30, 2, 14, 0, Regression, ""},
		{"the candidate waited less", 1.08, 14, 2, 0, Regression, ""},
		{"no wait recorded in the baseline", 1.08, -1, 14, 0, Regression, ""},
		{"no wait recorded in the candidate", 1.08, 2, -1, 0, Regression, ""},
		{"an improvement stays one", 0.80, 2, 14, 0, Improvement, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := build(t, spec{labels: one, trials: 4, n: 400, ttft: 100, scale: 1, seed: 1})
			cand := build(t, spec{labels: one, trials: 4, n: 400, ttft: 100, scale: tt.scale, seed: 2})
			if tt.baseWait >= 0 {
				withServerWait(base, tt.baseWait, 1)
			}
			if tt.candWait >= 0 {
				withServerWait(cand, tt.candWait, max(1, tt.candCPU))
			}
			r, err := Compare(base, cand, tol)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range r.Rows {
				if row.Metric != key {
					continue
				}
				if row.Verdict != tt.want {
					t.Fatalf("%s %v (%s), want %v", key, row.Verdict, row.Test, tt.want)
				}
				if tt.why != "" && !strings.Contains(row.Test, tt.why) {
					t.Errorf("evidence %q lacks %q", row.Test, tt.why)
				}
				return
			}
			t.Fatalf("no %s row", key)
		})
	}
}

// A token's gap is held against the wait per output token, not per
// request: a 10% slower TPOT beside a server that waited 10 ms more per
// request of 100 tokens (0.1 ms a token) is a regression.
func TestServerCPUWaitPerTokenForTPOT(t *testing.T) {
	t.Parallel()
	tpot := metricOf(metric.K(metric.TPOT, "p50"))
	ttft := metricOf(metric.K(metric.TTFT, "p50"))
	bands := map[string]metric.Band{"default": {Rel: 0.05}}
	w := &cpuWait{base: 2, cand: 12, tokens: 100}
	if why := w.explains(tpot, Row{Base: 20, Cand: 22, Verdict: Regression}, bands); why != "" {
		t.Errorf("TPOT 20 -> 22 ms explained by 0.1 ms a token: %s", why)
	}
	if why := w.explains(tpot, Row{Base: 20, Cand: 21.08, Verdict: Regression}, bands); !strings.Contains(why, "per output token") {
		t.Errorf("TPOT 20 -> 21.08 ms, 0.08 ms past a 5%% band, not explained by 0.1 ms a token: %q", why)
	}
	if why := w.explains(ttft, Row{Base: 60, Cand: 70, Verdict: Regression}, bands); !strings.Contains(why, "per request") {
		t.Errorf("TTFT 60 -> 70 ms not explained by 10 ms a request: %q", why)
	}
	if why := w.explains(ttft, Row{Base: 60, Cand: 70, Verdict: Noise}, bands); why != "" {
		t.Errorf("a verdict that is not a regression was explained: %s", why)
	}
	lag := metricOf(metric.K(metric.Lag, "p50"))
	if why := w.explains(lag, Row{Base: 1, Cand: 2, Verdict: Regression}, bands); why != "" {
		t.Errorf("the client's own lag was put on the server's wait: %s", why)
	}
}
