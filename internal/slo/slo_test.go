package slo

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

func TestHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		op   string
		lim  float64
		want bool
	}{
		{1, "<", 2, true}, {2, "<", 2, false},
		{2, "<=", 2, true}, {3, "<=", 2, false},
		{3, ">", 2, true}, {2, ">", 2, false},
		{2, ">=", 2, true}, {1, ">=", 2, false},
		{1, "==", 1, false},
	}
	for _, tt := range tests {
		if got := Holds(tt.v, tt.op, tt.lim); got != tt.want {
			t.Errorf("%v %s %v = %v", tt.v, tt.op, tt.lim, got)
		}
	}
}

func point(label string, rate float64, ttftP99 float64, errRate float64) result.Point {
	p := result.Point{Label: label, Mode: "rate", Rate: rate}
	p.Latency = map[string]result.Summary{metric.TTFT: {Count: 10, P99: ttftP99}}
	p.Requests = result.Requests{Sent: 10, Completed: 10 - int(10*errRate), ErrorRate: errRate}
	p.Throughput = result.Throughput{Requests: rate, OutputTokens: 100 * rate}
	return p
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	points := []result.Point{point("rate=1", 1, 200, 0), point("rate=8", 8, 700, 0.02)}
	slos := []suite.SLO{
		{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "500ms", AtRate: 8},
		{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "500ms"},
		{Metric: "error_rate", Op: "<=", Threshold: 0.01},
		{Metric: "output_throughput", Op: ">=", Threshold: 500.0, AtRate: 8},
		{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "1s", AtRate: 4},
	}
	got := Evaluate(slos, points)
	want := []struct {
		name, point string
		pass        bool
	}{
		{"ttft p99 < 500ms @ rate=8", "rate=8", false},
		{"ttft p99 < 500ms", "rate=1", true},
		{"ttft p99 < 500ms", "rate=8", false},
		{"error_rate <= 0.01", "rate=1", true},
		{"error_rate <= 0.01", "rate=8", false},
		{"output_throughput >= 500 @ rate=8", "rate=8", true},
		{"ttft p99 < 1s @ rate=4", "", false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d verdicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Point != w.point || g.Pass != w.pass {
			t.Errorf("verdict %d = %+v, want %+v", i, g, w)
		}
	}
	if got[0].Measured != 700 || got[0].Limit != 500 || got[0].Unit != "ms" {
		t.Errorf("measured %v limit %v %s", got[0].Measured, got[0].Limit, got[0].Unit)
	}
	if got[6].Note == "" {
		t.Error("an SLO matching no point passed silently")
	}
	// A point without successful requests cannot meet a latency SLO.
	empty := result.Point{Label: "rate=8", Mode: "rate", Rate: 8, Measured: result.Measured{Latency: map[string]result.Summary{}}}
	v := Evaluate(slos[:1], []result.Point{empty})
	if v[0].Pass || v[0].Note == "" {
		t.Errorf("empty point verdict %+v", v[0])
	}
}

// A trial that did not measure the server neither passes nor fails an
// SLO, however its figures compare with the limit.
func TestEvaluateInvalidTrial(t *testing.T) {
	t.Parallel()
	slos := []suite.SLO{{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "500ms"}}
	for _, ttft := range []float64{100, 900} {
		p := point("rate=6", 6, ttft, 0)
		p.Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s in 3 pauses"}}
		v := Evaluate(slos, []result.Point{p})
		if len(v) != 1 || v[0].Pass || !v[0].Inconclusive || v[0].Note != "inconclusive: the trial did not measure the server: the machine stalled 1.20 s in 3 pauses" {
			t.Errorf("TTFT p99 %v ms: %+v", ttft, v)
		}
	}
}

// A point that sent no measured request measured nothing: the sanity gate
// fails it, even where the suite allows points where nothing completes.
func TestSanityNothingSent(t *testing.T) {
	t.Parallel()
	empty := result.Point{Label: "rate=2", Mode: "rate", Rate: 2}
	for _, s := range []*suite.Suite{{}, {Sanity: &suite.Sanity{Off: true}}} {
		got := Sanity(s, []result.Point{empty, point("rate=4", 4, 100, 0)})
		if len(got) != 1 || got[0].Point != "rate=2" || got[0].Pass || got[0].Name != "sanity: some request is sent" {
			t.Errorf("sanity %+v: %+v", s.Sanity, got)
		}
	}
	stopped := empty
	stopped.Incomplete = true // Ctrl-C before the first send: the run says so
	if got := Sanity(&suite.Suite{}, []result.Point{stopped}); len(got) != 0 {
		t.Errorf("a stopped point: %+v", got)
	}
	// A trial that measured nothing for a reason it states (its warm-up
	// outlasted the window) is inconclusive, never a sanity failure.
	held := empty
	held.Validity = &result.Validity{Invalid: []string{"2 of 2 workers' warm-up requests were still running when the window closed"}}
	if got := Sanity(&suite.Suite{}, []result.Point{held}); len(got) != 0 {
		t.Errorf("an invalid point that sent nothing: %+v", got)
	}
}

// A capacity search that stopped at a probe that did not measure the
// server has no capacity: its SLOs are inconclusive with the search's
// reason, not failed for want of a point at rate 0 (the run exited 1
// instead of 3 on a stalled machine).
func TestJudgeInconclusiveSearch(t *testing.T) {
	t.Parallel()
	s := suite.Default()
	s.SLOs = []suite.SLO{{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "500ms"}, {Metric: "error_rate", Op: "<=", Threshold: 0.01}}
	p := point("rate=12", 12, 900, 0)
	p.Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s"}}
	f := &result.File{Points: []result.Point{p}, Capacity: &result.Capacity{Bound: result.CapacityInconclusive, Probes: 1, Why: "the probe at 12 req/s did not measure the server: the machine stalled 1.20 s"}}
	Judge(s, f)
	if len(f.SLOs) != 2 {
		t.Fatalf("SLOs %+v", f.SLOs)
	}
	for _, v := range f.SLOs {
		if v.Pass || !v.Inconclusive || v.Note != "inconclusive: the capacity search stopped: the probe at 12 req/s did not measure the server: the machine stalled 1.20 s" {
			t.Errorf("%+v", v)
		}
	}
}

// A search stopped by an unmeasured probe still fails on a probe that
// measured a broken server: its sanity verdicts are kept.
func TestJudgeInconclusiveSearchKeepsSanity(t *testing.T) {
	t.Parallel()
	s := suite.Default()
	s.SLOs = []suite.SLO{{Metric: "ttft", Stat: "p99", Op: "<", Threshold: "500ms"}}
	broken := point("rate=4", 4, 100, 0)
	broken.Requests = result.Requests{Sent: 40, Failed: 40, ErrorRate: 1}
	stalled := point("rate=12", 12, 900, 0)
	stalled.Validity = &result.Validity{Invalid: []string{"the machine stalled"}}
	f := &result.File{Points: []result.Point{broken, stalled}, Capacity: &result.Capacity{Bound: result.CapacityInconclusive, Why: "the probe at 12 req/s did not measure the server"}}
	Judge(s, f)
	var sanity []result.SLO
	for _, v := range f.SLOs {
		if strings.HasPrefix(v.Name, "sanity:") {
			sanity = append(sanity, v)
		}
	}
	if len(sanity) != 1 || sanity[0].Point != "rate=4" || sanity[0].Pass {
		t.Errorf("sanity verdicts %+v", sanity)
	}
}

// The server's own errors are evidence whatever the client's state: an
// invalid trial whose requests all failed with HTTP 500 fails its
// error-rate SLO and sanity, while one whose requests timed out (a
// stalled client times out too) stays inconclusive.
func TestInvalidTrialFailsOnServerErrors(t *testing.T) {
	t.Parallel()
	slos := []suite.SLO{{Metric: "error_rate", Op: "<=", Threshold: 0.01}}
	for _, tc := range []struct {
		name         string
		errors       map[string]int
		inconclusive bool
		sanity       int
	}{
		{"13 of 13 HTTP 500", map[string]int{"http_500": 13}, false, 1},
		{"refused connections", map[string]int{"connect": 13}, false, 1},
		{"13 of 13 timed out", map[string]int{"timeout": 13}, true, 0},
		{"one HTTP 500 in 13, within sanity", map[string]int{"http_500": 1, "timeout": 12}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := point("rate=6", 6, 100, 0)
			n := 0
			for _, c := range tc.errors {
				n += c
			}
			p.Requests = result.Requests{Sent: 13, Failed: n, ErrorRate: float64(n) / 13, Errors: tc.errors}
			p.Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s in 3 pauses"}}
			v := Evaluate(slos, []result.Point{p})
			if len(v) != 1 || v[0].Pass || v[0].Inconclusive != tc.inconclusive {
				t.Fatalf("%+v: want inconclusive %v, never a pass", v, tc.inconclusive)
			}
			if !tc.inconclusive && !strings.Contains(v[0].Note, "which a stall of this machine cannot cause") {
				t.Errorf("note %q", v[0].Note)
			}
			if got := Sanity(&suite.Suite{}, []result.Point{p}); len(got) != tc.sanity {
				t.Errorf("sanity %+v, want %d failure(s)", got, tc.sanity)
			}
		})
	}
}
