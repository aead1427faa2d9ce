package bands

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// run makes a result whose figures are the truth times noise: the tail
// (p99) three times as noisy as the median, as tails are.
func run(r *rand.Rand, trials int) *result.File {
	f := &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w"}}
	for trial := 1; trial <= trials; trial++ {
		for _, rate := range []float64{2, 8} {
			n := func(sd float64) float64 { return 1 + sd*r.NormFloat64() }
			p := result.Point{Label: "rate=" + map[float64]string{2: "2", 8: "8"}[rate], Mode: "rate", Rate: rate, Trial: trial}
			p.Latency = map[string]result.Summary{}
			for _, m := range []string{metric.TTFT, metric.TPOT, metric.ITL, metric.E2E} {
				p.Latency[m] = result.Summary{Count: 100, P50: 50 * rate * n(0.01), P90: 80 * rate * n(0.02), P99: 120 * rate * n(0.03)}
			}
			p.Throughput = result.Throughput{Requests: rate * n(0.01), OutputTokens: 100 * rate * n(0.01), TotalTokens: 300 * rate * n(0.01)}
			p.Cost = &result.Cost{PerMOutput: 10 / rate * n(0.01)}
			f.Points = append(f.Points, p)
		}
	}
	return f
}

func TestProposedBandsPassEveryRunAgainstEveryOther(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 5))
		var runs []*result.File
		for range 5 {
			runs = append(runs, run(r, 1+int(seed%3)))
		}
		ps, err := Propose(runs, 0.001, 1)
		if err != nil {
			t.Fatal(err)
		}
		tol := map[string]string{}
		band := map[string]float64{}
		for _, p := range ps {
			tol[p.Key] = p.Tolerance()
			band[p.Key] = p.Band
		}
		// The gate, given these bands, passes any run against any other.
		for i, a := range runs {
			for j, b := range runs {
				if i == j {
					continue
				}
				rep, err := compare.Compare(a, b, tol)
				if err != nil {
					t.Fatal(err)
				}
				for _, row := range rep.Rows {
					if row.Verdict != compare.Pass {
						t.Fatalf("seed %d, runs %d vs %d: %s @ %s %s (%s); the bands were meant to hold every run", seed, i, j, row.Metric, row.Point, row.Verdict, row.Band)
					}
				}
			}
		}
		if band["ttft.p99"] <= band["ttft.p50"] {
			t.Errorf("seed %d: p99 band %v not wider than p50 band %v for a tail three times as noisy", seed, band["ttft.p99"], band["ttft.p50"])
		}
	}
}

func TestProposeFloorAndRefusals(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	a := run(r, 1)
	ps, err := Propose([]*result.File{a, a}, 0.02, 1.25)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Spread != 0 || p.Band != 0.02 {
			t.Errorf("%s: identical runs gave spread %v, band %v; want 0 and the floor", p.Key, p.Spread, p.Band)
		}
		if p.Key == metric.ErrorRate {
			t.Error("error rate proposed; it keeps its percentage-point band")
		}
	}
	if _, err := Propose([]*result.File{a}, 0.02, 1); err == nil {
		t.Error("one run accepted")
	}
	other := run(r, 1)
	other.Suite.WorkloadHash = "changed"
	if _, err := Propose([]*result.File{a, other}, 0.02, 1); err == nil {
		t.Error("runs of different workloads accepted")
	}
	var b strings.Builder
	if err := Jsonnet(&b, "s", 2, 0.02, 1.25, ps); err != nil || !strings.Contains(b.String(), "tolerance: {\n  'ttft.p50': '2%',") {
		t.Errorf("jsonnet %v:\n%s", err, b.String())
	}
}
