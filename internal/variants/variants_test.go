package variants

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/stats"
	"github.com/benchci/benchci/internal/sweep"
)

// queueServer is a statistical stand-in for a serving engine under
// Poisson load: at rate r below its capacity c, TTFT is lognormal with a
// median that grows as 1/(1 - r/c), as a queue's wait does; at or above
// c the queue grows for the whole window. Each probe draws its own
// requests from rng, as a real run does.
type queueServer struct {
	capacity float64
	rng      *rand.Rand
}

const (
	window    = 30.0 // seconds per probe, the suite's default
	baseTTFT  = 80.0 // ms, alone
	sloTTFTMs = 400.0
)

// point measures one probe: Poisson(r x window) requests.
func (q queueServer) point(t *testing.T, rate float64) result.Point {
	lambda := rate * window
	n := int(math.Max(1, math.Round(lambda+math.Sqrt(lambda)*q.rng.NormFloat64())))
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	load := rate / q.capacity
	for range n {
		med := baseTTFT / math.Max(1-load, 0.02)
		if load >= 1 {
			med *= 1 + 20*(load-1+0.05) // the queue never drains
		}
		us := med * 1000 * math.Exp(0.5*q.rng.NormFloat64())
		h.RecordValue(int64(us))
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	label := "rate=" + strconv.FormatFloat(rate, 'g', -1, 64)
	return result.Point{
		Label: label, Mode: "rate", Rate: rate, Trial: 1,
		Measured: result.Measured{
			Requests:   result.Requests{Sent: n, Completed: n},
			Window:     result.Window{Seconds: window},
			Throughput: result.Throughput{Requests: float64(n) / window, OutputTokens: 100 * float64(n) / window},
			Latency:    map[string]result.Summary{metric.TTFT: result.Summarize(h, 1000)},
			Histograms: map[string]string{metric.TTFT: enc},
		},
		Cost: &result.Cost{USDPerHour: 10, PerMOutput: 10 / (100 * float64(n) / window * 3600) * 1e6},
	}
}

// searched runs the capacity search a suite would against q, and returns
// the results file it would write.
func searched(t *testing.T, name string, q queueServer) *result.File {
	t.Helper()
	l, err := suitefile.LoadSource("s.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 's', target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(100) },
  sweep: b.sweep.capacity(min=2, max=40, precision=0.05),
  slos: [b.slo.p90('ttft', '<', '%gms')],
}`, sloTTFTMs), suitefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s/" + name, Variant: name, WorkloadHash: l.WorkloadHash, Definition: l.JSON}}
	c, err := sweep.Search(context.Background(), 2, 40, 0.05, func(_ context.Context, rate float64) (bool, error) {
		p := q.point(t, rate)
		f.Points = append(f.Points, p)
		return p.Latency[metric.TTFT].P90 < sloTTFTMs, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Capacity = c
	return f
}

// TestIdenticalVariantsTie: two variants of one configuration, measured
// with their own random draws, must not produce a winner. The search
// stops where a noisy P90 crosses its threshold, so the two capacities
// often differ by a bracket; the verdict must still be a tie in at least
// 19 of 20 seeds, on both questions.
func TestIdenticalVariantsTie(t *testing.T) {
	ties, costTies := 0, 0
	for seed := range uint64(20) {
		a := searched(t, "a", queueServer{20, rand.New(rand.NewPCG(seed, 1))})
		b := searched(t, "b", queueServer{20, rand.New(rand.NewPCG(seed, 2))})
		r, err := Compare([]Entry{{Name: "a", File: a}, {Name: "b", File: b}})
		if err != nil {
			t.Fatal(err)
		}
		capV, costV := r.Verdicts[0], r.Verdicts[1]
		if capV.Question != "capacity" || costV.Question != "cost" {
			t.Fatalf("verdicts %+v", r.Verdicts)
		}
		if capV.Best == "" {
			ties++
		} else {
			t.Logf("seed %d: capacity winner %s: %s (%s)", seed, capV.Best, capV.Answer, capV.Standings[1].Test)
		}
		if costV.Best == "" {
			costTies++
		}
	}
	t.Logf("identical variants: %d/20 capacity ties, %d/20 cost ties", ties, costTies)
	if ties < 19 || costTies < 19 {
		t.Errorf("identical variants tied %d/20 (capacity), %d/20 (cost); want at least 19", ties, costTies)
	}
}

// TestSlowerVariantRanksBelow: a variant 30% slower (capacity / 1.3)
// ranks below, beyond noise, with a capacity ratio within 10% of 1/1.3,
// in at least 19 of 20 seeds.
func TestSlowerVariantRanksBelow(t *testing.T) {
	const truth = 1 / 1.3
	good := 0
	for seed := range uint64(20) {
		fast := searched(t, "fast", queueServer{20, rand.New(rand.NewPCG(seed, 3))})
		slow := searched(t, "slow", queueServer{20 / 1.3, rand.New(rand.NewPCG(seed, 4))})
		r, err := Compare([]Entry{{Name: "slow", File: slow}, {Name: "fast", File: fast}})
		if err != nil {
			t.Fatal(err)
		}
		v := r.Verdicts[0]
		ratio := slow.Capacity.Rate / fast.Capacity.Rate
		ok := v.Best == "fast" && v.Standings[1].Variant == "slow" && v.Standings[1].Real && math.Abs(ratio/truth-1) <= 0.10
		if ok {
			good++
		} else {
			t.Logf("seed %d: best %q, ratio %.3f (true %.3f): %s", seed, v.Best, ratio, truth, v.Answer)
		}
	}
	t.Logf("30%% slower variant ranked below, ratio within 10%%: %d/20", good)
	if good < 19 {
		t.Errorf("%d/20 seeds ranked the slower variant below within 10%% of the true ratio; want at least 19", good)
	}
}

// TestHeadlinePercentages: the headline measures the leader against the
// runner-up, so the runner-up is the reference. The three cases
// read -146%, +32% and -31% when the leader's figure was the divisor.
func TestHeadlinePercentages(t *testing.T) {
	cost := func(x float64) string { return fmt.Sprintf("$%.3g per 1M output tokens", x) }
	rate := func(x float64) string { return fmt.Sprintf("%.3g req/s", x) }
	for _, tc := range []struct {
		lead, next float64
		format     func(float64) string
		verb, sup  string
		want       string
	}{
		{0.776, 1.91, cost, "costs", "the lowest cost", "a has the lowest cost: it costs $0.776 per 1M output tokens, -59% against b ($1.91 per 1M output tokens), beyond noise"},
		{33.4, 22.8, rate, "holds every SLO up to", "the highest capacity", "a has the highest capacity: it holds every SLO up to 33.4 req/s, +46% against b (22.8 req/s), beyond noise"},
		{0.763, 1.00, cost, "costs", "the lowest cost", "a has the lowest cost: it costs $0.763 per 1M output tokens, -24% against b ($1 per 1M output tokens), beyond noise"},
	} {
		vs, _ := stats.RelDelta(tc.next, tc.lead) // as the verdicts store it: the leader the reference
		v := Verdict{Standings: []Standing{{Variant: "a", Value: tc.lead}, {Variant: "b", Value: tc.next, VsLeader: vs, Real: true}}}
		decide(&v, tc.format, tc.verb, tc.sup)
		if v.Answer != tc.want {
			t.Errorf("headline\n got %s\nwant %s", v.Answer, tc.want)
		}
		// The percentage printed rebuilds the leader's figure from the
		// runner-up's, within the rounding of a whole percent.
		var pct float64
		if _, err := fmt.Sscanf(v.Answer[strings.Index(v.Answer, ", ")+2:], "%f%%", &pct); err != nil {
			t.Fatalf("no percentage in %q: %v", v.Answer, err)
		}
		if got := tc.next * (1 + pct/100); math.Abs(got-tc.lead) > 0.005*tc.next {
			t.Errorf("%q: %s x (1%+.0f%%) = %.4g, not the leader's %g", v.Answer, tc.format(tc.next), pct, got, tc.lead)
		}
	}
}

// A saturated probe is never on the frontier, even with the highest
// throughput: it was stopped, not sustained.
func TestFrontierSkipsSaturated(t *testing.T) {
	vs := []Variant{{Name: "a", Complete: true, Curve: []Figures{
		{Point: "rate=4", OutputTokPS: 400, TTFTP99Ms: 100},
		{Point: "rate=8", OutputTokPS: 800, TTFTP99Ms: 200},
		{Point: "rate=16", OutputTokPS: 900, TTFTP99Ms: 4000, Saturated: true},
	}}}
	f := frontier(vs, "ttft.p99", func(f Figures) float64 { return f.TTFTP99Ms })
	if len(f.Points) != 2 || f.Points[1].Point != "rate=8" {
		t.Errorf("frontier %+v; want rate=4 and rate=8 only", f.Points)
	}
}

// A saturated probe is not a variant's peak, even where what it finished
// before its stop outnumbers every sustained point.
func TestPeakSkipsSaturated(t *testing.T) {
	f := searched(t, "a", queueServer{20, rand.New(rand.NewPCG(7, 1))})
	top := 0
	for i, p := range f.Points {
		if p.Throughput.OutputTokens > f.Points[top].Throughput.OutputTokens {
			top = i
		}
	}
	f.Points[top].Schedule.Saturation = "the queue grew without bound"
	g := searched(t, "b", queueServer{20, rand.New(rand.NewPCG(7, 2))})
	r, err := Compare([]Entry{{Name: "a", File: f}, {Name: "b", File: g}})
	if err != nil {
		t.Fatal(err)
	}
	if pk := r.Variants[0].Peak; pk == nil || pk.Point == f.Points[top].Label || pk.Saturated {
		t.Errorf("peak %+v: the saturated probe %s", pk, f.Points[top].Label)
	}
}

// A variant is labelled with what was measured: engine and version, the
// address and the model, so that two runs of one engine at one address
// with other versions or models are told apart (once, "ollama at URL").
func TestVariantLabelsNameVersionAndModel(t *testing.T) {
	t.Parallel()
	a := searched(t, "a", queueServer{20, rand.New(rand.NewPCG(1, 1))})
	b := searched(t, "b", queueServer{20, rand.New(rand.NewPCG(1, 2))})
	a.Target = result.Target{Kind: "url", URL: "http://127.0.0.1:11434", Model: "llama3:8b"}
	a.Engine = &result.Engine{Name: "ollama", Version: "0.6.5"}
	b.Target = result.Target{Kind: "url", URL: "http://127.0.0.1:11434", Model: "llama3:8b-q4"}
	b.Engine = &result.Engine{Name: "ollama"}
	r, err := Compare([]Entry{{Name: "a", File: a}, {Name: "b", File: b}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ollama 0.6.5 at http://127.0.0.1:11434, model llama3:8b", "ollama (version unknown) at http://127.0.0.1:11434, model llama3:8b-q4"}
	for i, v := range r.Variants {
		if v.Target != want[i] {
			t.Errorf("variant %s labelled %q, want %q", v.Name, v.Target, want[i])
		}
	}
}
