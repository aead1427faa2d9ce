package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/stats"
)

// run builds a result with one point per label and trial, whose requests
// have TTFTs drawn around ttft (lognormal, sigma 0.3) times scale, and ten
// chunks 20 ms apart.
type spec struct {
	labels []string
	trials int
	n      int     // requests per point
	ttft   float64 // ms
	scale  float64
	seed   uint64
	errs   int // failed requests per point
}

func build(t *testing.T, s spec) *result.File {
	t.Helper()
	r := rand.New(rand.NewPCG(s.seed, 1))
	f := &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"}}
	for trial := 1; trial <= s.trials; trial++ {
		for _, label := range s.labels {
			t0 := time.Unix(1000, 0)
			rec := recorder.NewRecorder(t0, t0.Add(10*time.Second))
			for i := range s.n {
				ttft := time.Duration(s.ttft * s.scale * math.Exp(0.3*r.NormFloat64()) * float64(time.Millisecond))
				res := &client.Result{Sent: t0.Add(time.Duration(i) * 10 * time.Second / time.Duration(s.n)), FirstToken: ttft, FirstAnswer: ttft, TokenSource: client.TokensFromUsage}
				for c := range 10 {
					res.ChunkAt = append(res.ChunkAt, ttft+time.Duration(c)*20*time.Millisecond)
					res.ChunkTokens = append(res.ChunkTokens, 1)
				}
				res.OutputTokens = 10
				res.End = res.ChunkAt[9]
				rec.Add(recorder.Sample{Result: res, Scheduled: res.Sent})
			}
			for range s.errs {
				rec.Add(recorder.Sample{Result: &client.Result{Sent: t0, Err: client.ErrTimeout}, Scheduled: t0})
			}
			p, err := rec.Point()
			if err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, result.Point{Label: label, Mode: "rate", Trial: trial, Measured: p})
		}
	}
	return f
}

func verdicts(r *Report, metric string) map[string]Verdict {
	out := map[string]Verdict{}
	for _, row := range r.Rows {
		if row.Metric == metric {
			out[row.Point] = row.Verdict
		}
	}
	return out
}

func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	one := []string{"rate=1"}
	tests := []struct {
		name       string
		base, cand spec
		tol        map[string]string
		metric     string
		want       Verdict
		failed     bool
	}{
		{"clear regression", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 1.5, 2, 0}, nil, "ttft.p50", Regression, true},
		{"clear improvement", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 0.6, 2, 0}, nil, "ttft.p90", Improvement, false},
		// 500 samples cannot bound a p99 at 99% confidence (that takes
		// about 530): even a large move stays noise with a single trial.
		{"p99 needs more samples", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 0.6, 2, 0}, nil, "ttft.p99", Noise, false},
		{"p99 with enough samples", spec{one, 1, 2000, 100, 1, 1, 0}, spec{one, 1, 2000, 100, 1.3, 2, 0}, nil, "ttft.p99", Regression, true},
		{"identical", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 1, 1, 0}, nil, "ttft.p99", Pass, false},
		// Too few requests for the p99 to move significantly, though it is
		// outside a tight band: noise, not a regression.
		{"noise outside a tight band", spec{one, 1, 40, 100, 1, 1, 0}, spec{one, 1, 40, 100, 1.15, 2, 0}, map[string]string{"ttft": "1%"}, "ttft.p99", Noise, false},
		{"inside a wide band", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 1.3, 2, 0}, map[string]string{"default": "50%"}, "ttft.p50", Pass, false},
		{"absolute band", spec{one, 1, 500, 100, 1, 1, 0}, spec{one, 1, 500, 100, 1.3, 2, 0}, map[string]string{"default": "1%|40ms"}, "ttft.p50", Pass, true}, // p90 moves 46 ms
		{"trials: U test finds the regression", spec{one, 5, 100, 100, 1, 1, 0}, spec{one, 5, 100, 100, 1.3, 2, 0}, nil, "ttft.p50", Regression, true},
		{"error rate within 1 pp", spec{one, 1, 990, 100, 1, 1, 5}, spec{one, 1, 990, 100, 1, 1, 10}, nil, "error_rate", Pass, false},
		{"error rate beyond 1 pp", spec{one, 1, 980, 100, 1, 1, 0}, spec{one, 1, 980, 100, 1, 1, 20}, nil, "error_rate", Regression, true},
		// A figure turned off is not judged at all (no row), by key or by
		// metric: a 2x slower p99 fails nothing, while the figures left on
		// still gate.
		{"off by key", spec{one, 1, 2000, 100, 1, 1, 0}, spec{one, 1, 2000, 100, 2, 2, 0}, map[string]string{"ttft.p99": "off"}, "ttft.p99", "", true},
		{"off by metric", spec{one, 1, 2000, 100, 1, 1, 0}, spec{one, 1, 2000, 100, 2, 2, 0}, map[string]string{"ttft": "off"}, "ttft.p50", "", true}, // e2e moved with it, and gates
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Compare(build(t, tt.base), build(t, tt.cand), tt.tol)
			if err != nil {
				t.Fatal(err)
			}
			if got := verdicts(r, tt.metric)["rate=1"]; got != tt.want {
				for _, row := range r.Rows {
					t.Logf("%+v", row)
				}
				t.Fatalf("%s verdict %q, want %q", tt.metric, got, tt.want)
			}
			for _, row := range r.Rows {
				if row.Verdict == Regression {
					t.Logf("regression: %+v", row)
				}
			}
			if r.Failed() != tt.failed {
				t.Errorf("gate failed = %v, want %v", r.Failed(), tt.failed)
			}
		})
	}
}

// TestNoFalseAlarms compares many pairs of runs drawn from the same
// distribution: none may be called a regression. With single trials the
// confidence-interval test is conservative by design.
func TestNoFalseAlarms(t *testing.T) {
	t.Parallel()
	labels := []string{"rate=1", "rate=2", "rate=4"}
	alarms, compared := 0, 0
	for i := range 30 {
		base := build(t, spec{labels, 1, 300, 100, 1, uint64(2 * i), 0})
		cand := build(t, spec{labels, 1, 300, 100, 1, uint64(2*i + 1), 0})
		r, err := Compare(base, cand, map[string]string{"default": "5%"})
		if err != nil {
			t.Fatal(err)
		}
		compared += len(r.Rows)
		for _, row := range r.Rows {
			if row.Verdict == Regression || row.Verdict == Improvement {
				alarms++
				t.Logf("false alarm: %+v", row)
			}
		}
	}
	if alarms > 0 {
		t.Errorf("%d of %d figures flagged between runs of the same distribution", alarms, compared)
	}
}

func TestCompareRefusesOtherWorkload(t *testing.T) {
	t.Parallel()
	base := build(t, spec{[]string{"rate=1"}, 1, 10, 100, 1, 1, 0})
	cand := build(t, spec{[]string{"rate=1"}, 1, 10, 100, 1, 1, 0})
	cand.Suite.WorkloadHash = "other"
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Comparable || r.Refusal == "" || len(r.Rows) != 0 || !r.Failed() {
		t.Errorf("report %+v", r)
	}
}

// Two results that sent the same requests compare whatever their suites
// are named (the same workload on Ollama and on llama.cpp), each side
// labelled; named apart and sent other requests, they do not.
func TestCompareAcrossSuiteNames(t *testing.T) {
	t.Parallel()
	base := build(t, spec{[]string{"rate=1"}, 1, 50, 100, 1, 1, 0})
	cand := build(t, spec{[]string{"rate=1"}, 1, 50, 100, 1, 2, 0})
	base.Suite.Name, cand.Suite.Name = "on-ollama", "on-llamacpp"
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Comparable || len(r.Rows) == 0 || r.Baseline.Suite != "on-ollama" || r.Candidate.Suite != "on-llamacpp" {
		t.Errorf("report %+v", r)
	}
	cand.Suite.WorkloadHash = "other"
	if r, _ := Compare(base, cand, nil); r.Comparable || !strings.Contains(r.Refusal, `"on-ollama"`) {
		t.Errorf("other requests compared: %+v", r)
	}
}

// A trial that did not measure the server judges nothing: the point's
// other trials are judged alone, and a point with none left is
// inconclusive, with the evidence, on either side. Neither fails the gate.
func TestCompareInvalidTrials(t *testing.T) {
	t.Parallel()
	invalid := &result.Validity{Invalid: []string{"sent 3.4 of 6.0 req/s scheduled"}, Reruns: []string{"the machine stalled 1.20 s", "the machine stalled 0.90 s"}}
	base := build(t, spec{[]string{"rate=1", "rate=2"}, 4, 200, 100, 1, 1, 0})
	cand := build(t, spec{[]string{"rate=1", "rate=2"}, 4, 200, 100, 1, 2, 0})
	for i := range cand.Points {
		p := &cand.Points[i]
		switch {
		case p.Label == "rate=2":
			p.Validity = invalid // every trial
		case p.Trial == 1:
			// One stalled trial, three times slower: judged, it would be
			// a regression; left out, there is none.
			p.Validity = invalid
			p.Latency[metric.TTFT] = result.Summary{Count: 200, P50: 300, P90: 400, P95: 450, P99: 500}
		}
	}
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(r, "*")
	if v["rate=2"] != Inconclusive || r.Count(Inconclusive) != 1 || !r.Inconclusive() || r.Failed() {
		t.Fatalf("verdicts %v, inconclusive %d, failed %v", v, r.Count(Inconclusive), r.Failed())
	}
	for _, row := range r.Rows {
		if row.Verdict == Inconclusive && !strings.Contains(row.Test, "sent 3.4 of 6.0 req/s scheduled (trial 4, after 2 reruns)") {
			t.Errorf("evidence %q", row.Test)
		}
		if row.Verdict == Regression {
			t.Errorf("%s %s regressed from an invalid trial: %v -> %v", row.Point, row.Metric, row.Base, row.Cand)
		}
	}
	if v := verdicts(r, "ttft.p50"); v["rate=1"] != Pass {
		t.Errorf("ttft.p50 at rate=1: %v", v)
	}
	// An invalid baseline is no reference either.
	r, _ = Compare(cand, base, nil)
	if v := verdicts(r, "*"); v["rate=2"] != Inconclusive || !strings.Contains(r.Rows[len(r.Rows)-1].Test+r.Rows[0].Test, "baseline") {
		t.Errorf("invalid baseline: %v", r.Rows)
	}
	// Without a baseline, too.
	if r := WithoutBaseline(cand); verdicts(r, "*")["rate=2"] != Inconclusive {
		t.Errorf("without baseline: %v", r.Rows)
	}
}

// An SLO is inconclusive at a point only when every trial's verdict there
// is; an inconclusive verdict is no failure.
func TestSLOInconclusive(t *testing.T) {
	t.Parallel()
	r := &Report{Comparable: true, Candidate: Side{Complete: true}, SLOs: []result.SLO{
		{Name: "ttft p99 < 500ms", Point: "rate=6", Inconclusive: true},
		{Name: "ttft p99 < 500ms", Point: "rate=6", Pass: true},
		{Name: "tpot p95 < 60ms", Point: "rate=6", Inconclusive: true},
		{Name: "tpot p95 < 60ms", Point: "rate=6", Inconclusive: true},
	}}
	if r.SLOInconclusive() != 1 || r.SLOFailures() != 0 || r.Failed() || !r.Inconclusive() {
		t.Errorf("inconclusive %d, failures %d, failed %v", r.SLOInconclusive(), r.SLOFailures(), r.Failed())
	}
}

func TestCompareMissingAndNewPoints(t *testing.T) {
	t.Parallel()
	base := build(t, spec{[]string{"rate=1", "rate=2"}, 1, 50, 100, 1, 1, 0})
	cand := build(t, spec{[]string{"rate=1", "rate=4"}, 1, 50, 100, 1, 1, 0})
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(r, "*")
	if v["rate=2"] != Missing || v["rate=4"] != New || !r.Failed() {
		t.Errorf("verdicts %v failed %v", v, r.Failed())
	}
}

func TestBadTolerance(t *testing.T) {
	t.Parallel()
	f := build(t, spec{[]string{"rate=1"}, 1, 10, 100, 1, 1, 0})
	if _, err := Compare(f, f, map[string]string{"ttft": "fast"}); err == nil {
		t.Error("bad tolerance accepted")
	}
	if _, err := Compare(f, f, map[string]string{"ttfb.p99": "5%"}); err == nil || !strings.Contains(err.Error(), `did you mean "ttft.p99"`) {
		t.Errorf("unknown tolerance key: %v", err)
	}
}

func TestQuantileCI(t *testing.T) {
	t.Parallel()
	f := build(t, spec{[]string{"rate=1"}, 1, 2000, 100, 1, 1, 0})
	h := merged(metric.TTFT, []*result.Point{&f.Points[0]})
	lo, hi := quantileCI(h, 50, h.TotalCount())
	p50 := f.Points[0].Latency[metric.TTFT].P50
	if !(lo < p50 && p50 < hi) || hi-lo > 0.1*p50 {
		t.Errorf("CI %.2f–%.2f around p50 %.2f", lo, hi, p50)
	}
	// Eleven samples say nothing about where the p99 lies above them.
	small := build(t, spec{[]string{"rate=1"}, 1, 11, 100, 1, 1, 0})
	hs := merged(metric.TTFT, []*result.Point{&small.Points[0]})
	lo, hi = quantileCI(hs, 99, hs.TotalCount())
	if !math.IsInf(hi, 1) || lo <= 0 {
		t.Errorf("p99 of 11 samples: CI %v–%v, want a finite lower and no upper bound", lo, hi)
	}
	// Coverage: over many samples of a known distribution, the 99% interval
	// of the p90 must contain the true p90 at least ~98% of the time.
	trueP90 := 100 * math.Exp(0.3*1.2815515655446004)
	misses := 0
	for seed := range 200 {
		f := build(t, spec{[]string{"rate=1"}, 1, 200, 100, 1, uint64(seed + 100), 0})
		h := merged(metric.TTFT, []*result.Point{&f.Points[0]})
		lo, hi := quantileCI(h, 90, h.TotalCount())
		if trueP90 < lo || trueP90 > hi*1.001 { // 0.1%: the histogram's resolution
			misses++
		}
	}
	if misses > 4 {
		t.Errorf("the 99%% interval missed the true p90 in %d of 200 samples", misses)
	}
}

// ITL's samples are chunk gaps, many per request and correlated within
// it: two requests of 1000 gaps each are two samples for the interval, so
// an ITL P99 half again as high cannot be called a regression on them.
func TestITLIntervalCountsRequests(t *testing.T) {
	t.Parallel()
	point := func(gap time.Duration, seed uint64) result.Point {
		r := rand.New(rand.NewPCG(seed, 3))
		t0 := time.Unix(1000, 0)
		rec := recorder.NewRecorder(t0, t0.Add(100*time.Second))
		for i := range 2 {
			res := &client.Result{Sent: t0.Add(time.Duration(i) * time.Second), FirstToken: 50 * time.Millisecond, FirstAnswer: 50 * time.Millisecond, TokenSource: client.TokensFromUsage}
			at := res.FirstToken
			for range 1000 {
				res.ChunkAt = append(res.ChunkAt, at)
				res.ChunkTokens = append(res.ChunkTokens, 1)
				at += time.Duration(float64(gap) * math.Exp(0.3*r.NormFloat64()))
			}
			res.OutputTokens, res.End = 1000, at
			rec.Add(recorder.Sample{Result: res, Scheduled: res.Sent})
		}
		p, err := rec.Point()
		if err != nil {
			t.Fatal(err)
		}
		return result.Point{Label: "rate=1", Mode: "rate", Trial: 1, Measured: p}
	}
	file := func(p result.Point) *result.File {
		return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"}, Points: []result.Point{p}}
	}
	rep, err := Compare(file(point(20*time.Millisecond, 1)), file(point(30*time.Millisecond, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range rep.Rows {
		if row.Metric != "itl.p99" {
			continue
		}
		found = true
		if row.Verdict == Regression || !strings.Contains(row.Test, "n=2, 2 requests") {
			t.Errorf("itl.p99 over 2 requests of 1000 gaps: %s by %q; want noise, n counted in requests", row.Verdict, row.Test)
		}
	}
	if !found {
		t.Fatal("no itl.p99 row")
	}
	// The same gaps as 2000 requests' TTFTs would be far apart: the
	// interval is narrow because of n, not because of the data.
	h := merged(metric.ITL, []*result.Point{ptr(point(20*time.Millisecond, 1))})
	if lo, hi := quantileCI(h, 99, h.TotalCount()); math.IsInf(hi, 1) || hi-lo > 0.5*lo {
		t.Errorf("with gaps as the unit the interval would be narrow: %v–%v", lo, hi)
	}
}

func ptr[T any](v T) *T { return &v }

func TestPoissonRatesP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n1, n2   int64
		w1, w2   float64
		sig      bool
		describe string
	}{
		{16, 18, 8, 8, false, "2.0 vs 2.25 req/s over 8 s: noise"},
		{800, 1000, 100, 100, true, "8 vs 10 req/s over 100 s: real"},
		{100, 100, 10, 10, false, "equal"},
		{0, 0, 1, 1, false, "nothing"},
	}
	for _, tt := range tests {
		p := stats.PoissonRatesP(float64(tt.n1), tt.w1, float64(tt.n2), tt.w2)
		if (p < ciAlpha) != tt.sig || p < 0 || p > 1 {
			t.Errorf("%s: p = %v", tt.describe, p)
		}
	}
}

// Two engines are named as such, with versions and addresses, and requests
// that differed beyond the suite (ignore_eos dropped for one engine) are
// said.
func TestSidesNameEnginesAndRequests(t *testing.T) {
	t.Parallel()
	s := spec{labels: []string{"rate=1"}, trials: 1, n: 50, ttft: 100, scale: 1, seed: 1}
	base, cand := build(t, s), build(t, s)
	base.Target = result.Target{Kind: "url", URL: "http://127.0.0.1:8000", Model: "tiny"}
	base.Engine = &result.Engine{Name: "vllm", Version: "0.9.1"}
	base.Sent = &result.Sent{IgnoreEOS: true, ContinuousUsage: true}
	cand.Target = result.Target{Kind: "url", URL: "http://127.0.0.1:8080", Model: "tiny"}
	cand.Engine = &result.Engine{Name: "llama.cpp"}
	cand.Sent = &result.Sent{}
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Baseline.Target != "vllm 0.9.1 at http://127.0.0.1:8000, model tiny" ||
		r.Candidate.Target != "llama.cpp (version unknown) at http://127.0.0.1:8080, model tiny" {
		t.Errorf("sides %q and %q", r.Baseline.Target, r.Candidate.Target)
	}
	if !strings.Contains(r.RequestsDiffer, "ignore_eos was sent by the baseline only") ||
		!strings.Contains(r.RequestsDiffer, "usage on every chunk was asked by the baseline only") {
		t.Errorf("requests differ: %q", r.RequestsDiffer)
	}
	cand.Sent = &result.Sent{IgnoreEOS: true, ContinuousUsage: true}
	if r, _ := Compare(base, cand, nil); r.RequestsDiffer != "" {
		t.Errorf("identical requests said to differ: %q", r.RequestsDiffer)
	}
}

// A mix of models: an adapter that slowed by half is a regression on its
// own rows, while the base model's rows pass.
func TestCompareJudgesEachModel(t *testing.T) {
	t.Parallel()
	file := func(loraScale float64, seed uint64) *result.File {
		r := rand.New(rand.NewPCG(seed, 1))
		t0 := time.Unix(1000, 0)
		rec := recorder.NewRecorder(t0, t0.Add(10*time.Second))
		for i := range 1200 {
			model, scale := "base", 1.0
			if i%2 == 1 {
				model, scale = "lora", loraScale
			}
			ttft := time.Duration(100 * scale * math.Exp(0.3*r.NormFloat64()) * float64(time.Millisecond))
			res := &client.Result{Sent: t0.Add(time.Duration(i) * 10 * time.Second / 1200), FirstToken: ttft, FirstAnswer: ttft, TokenSource: client.TokensFromUsage,
				ChunkAt: []time.Duration{ttft, ttft + 20*time.Millisecond}, ChunkTokens: []int32{1, 1}, OutputTokens: 2, End: ttft + 20*time.Millisecond}
			rec.Add(recorder.Sample{Result: res, Scheduled: res.Sent, Model: model})
		}
		p, err := rec.Point()
		if err != nil {
			t.Fatal(err)
		}
		return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"},
			Points: []result.Point{{Label: "rate=1", Mode: "rate", Trial: 1, Measured: p}}}
	}
	r, err := Compare(file(1, 1), file(1.5, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(r, "ttft.p50")
	if v["rate=1 [lora]"] != Regression || v["rate=1 [base]"] == Regression {
		t.Errorf("verdicts %v: want the adapter's p50 regressed and the base's not", v)
	}
	if !r.Failed() {
		t.Error("an adapter's regression should fail the gate")
	}
}

// The share of structured answers that match their schema is gated with a
// test of two proportions: 97.5% -> 92.5% of 800 is a regression, 97.5%
// -> 96.0% is within the sampling noise of 800 answers, and 99.4% is
// better beyond it.
func TestCompareStructuredCorrectness(t *testing.T) {
	t.Parallel()
	file := func(correct int) *result.File {
		p := result.Point{Label: "rate=1", Mode: "rate", Trial: 1}
		p.Requests.Sent, p.Requests.Completed = 800, 800
		p.Structured = &result.Structured{Checked: 800, Correct: correct, Rate: float64(correct) / 800}
		return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"}, Points: []result.Point{p}}
	}
	for _, tc := range []struct {
		cand int
		want Verdict
	}{{740, Regression}, {768, Noise}, {780, Pass}, {795, Improvement}} {
		r, err := Compare(file(780), file(tc.cand), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdicts(r, "structured_correct_rate")["rate=1"]; got != tc.want {
			t.Errorf("780 -> %d correct of 800: %q, want %q", tc.cand, got, tc.want)
		}
	}
}

// Joules per output token, from measured power, is gated by its band:
// more energy for the same tokens is a regression, as a higher cost is.
func TestCompareEnergyPerToken(t *testing.T) {
	t.Parallel()
	file := func(jPerToken float64) *result.File {
		p := result.Point{Label: "rate=1", Mode: "rate", Trial: 1, EnergyPerOutputToken: jPerToken}
		p.Requests.Sent, p.Requests.Completed = 100, 100
		return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"}, Points: []result.Point{p}}
	}
	for _, tc := range []struct {
		cand float64
		want Verdict
	}{{0.36, Regression}, {0.31, Pass}, {0.24, Improvement}} {
		r, err := Compare(file(0.30), file(tc.cand), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdicts(r, "energy_per_output_token")["rate=1"]; got != tc.want {
			t.Errorf("0.30 -> %.2f J/token: %q, want %q", tc.cand, got, tc.want)
		}
	}
	// Without measured power on either side there is no row at all.
	r, err := Compare(file(0), file(0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := verdicts(r, "energy_per_output_token")["rate=1"]; ok {
		t.Error("a row for energy without measured power")
	}
}

// The figures a suite turns off are listed with the comparison, so their
// absence from the rows is not read as a pass.
func TestNotGatedIsListed(t *testing.T) {
	t.Parallel()
	one := []string{"rate=1"}
	r, err := Compare(build(t, spec{one, 1, 500, 100, 1, 1, 0}), build(t, spec{one, 1, 500, 100, 1, 2, 0}), map[string]string{"tpot.p99": "off", "ttft.p99": "off", "e2e": "20%"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tpot.p99", "ttft.p99"}; !slices.Equal(r.NotGated, want) {
		t.Errorf("not gated %q, want %q", r.NotGated, want)
	}
	for _, row := range r.Rows {
		if row.Metric == "ttft.p99" || row.Metric == "tpot.p99" {
			t.Errorf("a figure turned off was judged: %+v", row)
		}
	}
}

// Intervals print as people read them, never in exponent form.
func TestCIStringPlain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{1143.7, 1381.2, "1144–1381"},
		{22.84, 23.61, "22.8–23.6"},
		{660, math.Inf(1), "≥660"},
		{4030, 5002, "4030–5002"},
		{999.6, 1000.4, "1000–1000"},
		{0.0000123, 0.5, "0.0000123–0.5"},
	} {
		if got := ciString(tc.lo, tc.hi); got != tc.want {
			t.Errorf("ciString(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// A results file whose definition says tolerance default 'off' is not
// trusted to turn the gate off: validate refuses it in a suite, and the
// gate refuses it in a file.
func TestDefaultOffRefused(t *testing.T) {
	t.Parallel()
	one := []string{"rate=1"}
	if _, err := Compare(build(t, spec{one, 1, 100, 100, 1, 1, 0}), build(t, spec{one, 1, 100, 100, 3, 2, 0}), map[string]string{"default": "off"}); err == nil || !strings.Contains(err.Error(), "would gate nothing") {
		t.Errorf("err %v", err)
	}
}

// A baseline measured under earlier definitions of the figures is said to
// be, with what changed; one version on both sides says nothing.
func TestDefinitionsDiffer(t *testing.T) {
	t.Parallel()
	one := []string{"rate=1"}
	base, cand := build(t, spec{one, 1, 100, 100, 1, 1, 0}), build(t, spec{one, 1, 100, 100, 1, 2, 0})
	cand.Figures = result.Figures
	r, err := Compare(base, cand, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.DefinitionsDiffer, "the baseline was measured by a benchci that defined some figures otherwise (since then: ITL spreads") {
		t.Errorf("%q", r.DefinitionsDiffer)
	}
	base.Figures = 2
	if r, _ := Compare(base, cand, nil); !strings.Contains(r.DefinitionsDiffer, "TPOT leaves out an answer whose tokens all came in one read") || strings.Contains(r.DefinitionsDiffer, "ITL spreads") {
		t.Errorf("version 2: %q", r.DefinitionsDiffer)
	}
	base.Figures = result.Figures
	if r, _ := Compare(base, cand, nil); r.DefinitionsDiffer != "" {
		t.Errorf("same version: %q", r.DefinitionsDiffer)
	}
	base.Figures = math.MaxInt // hostile: must not loop to it
	if r, _ := Compare(base, cand, nil); !strings.Contains(r.DefinitionsDiffer, "newer than this benchci's") {
		t.Errorf("future version: %q", r.DefinitionsDiffer)
	}
}
