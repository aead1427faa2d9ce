// Package compare judges a candidate result against a baseline: for each
// load point and metric, pass, regression, improvement or noise, with the
// statistics that decided it.
package compare

import (
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metrics"
	"github.com/benchci/benchci/framework/result"
)

// Better says which direction of change is good.
type Better string

// Directions.
const (
	Lower  Better = "lower"
	Higher Better = "higher"
)

// Metric is one compared figure.
type Metric struct {
	// Key names the figure, as tolerance keys do: "ttft.p99",
	// "output_throughput", "error_rate", "cost".
	Key    string
	Better Better
	Unit   string
	// hist and quantile locate a latency percentile's histogram, for the
	// single-trial significance test.
	hist     string
	quantile float64
	value    func(p *result.Point) (float64, bool)
}

func latency(name, stat string, q float64) Metric {
	return Metric{
		Key: name + "." + stat, Better: Lower, Unit: "ms", hist: name, quantile: q,
		value: func(p *result.Point) (float64, bool) {
			s, ok := p.Latency[name]
			if !ok || s.Count == 0 {
				return 0, false
			}
			return s.Stat(stat)
		},
	}
}

// Metrics are the compared figures, in report order. Throughput is never
// judged without the latency it cost, so both kinds are always present.
var Metrics = []Metric{
	latency(metrics.TTFT, "p50", 50), latency(metrics.TTFT, "p90", 90), latency(metrics.TTFT, "p99", 99),
	latency(metrics.TPOT, "p50", 50), latency(metrics.TPOT, "p99", 99),
	latency(metrics.ITL, "p50", 50), latency(metrics.ITL, "p99", 99),
	latency(metrics.E2E, "p50", 50), latency(metrics.E2E, "p99", 99),
	{Key: "request_throughput", Better: Higher, Unit: "req/s", value: func(p *result.Point) (float64, bool) {
		return p.Throughput.Requests, p.Requests.Sent > 0
	}},
	{Key: "output_throughput", Better: Higher, Unit: "tok/s", value: func(p *result.Point) (float64, bool) {
		return p.Throughput.OutputTokens, p.Requests.Sent > 0
	}},
	{Key: "error_rate", Better: Lower, Unit: "fraction", value: func(p *result.Point) (float64, bool) {
		return p.Requests.ErrorRate, p.Requests.Sent > 0
	}},
	{Key: "cost", Better: Lower, Unit: "$/1M out", value: func(p *result.Point) (float64, bool) {
		if p.Cost == nil || p.Cost.PerMOutput == 0 {
			return 0, false
		}
		return p.Cost.PerMOutput, true
	}},
}

// base returns the metric name before the statistic: "ttft" of "ttft.p99".
func (m Metric) base() string {
	b, _, _ := strings.Cut(m.Key, ".")
	return b
}

// ciZ is the normal quantile of the percentile confidence intervals: 99%.
// Two 99% intervals that do not overlap mean p < 0.001 or so; a stricter
// level than the usual 95% because a PR compares dozens of figures at
// once, and a gate that cries wolf gets disabled.
const ciZ = 2.576

// quantileCI returns a distribution-free 99% confidence interval for the
// q-th percentile of the distribution h was sampled from. The ranks of the
// bounds come from the binomial distribution of the number of samples below
// the true quantile (normal approximation): n·p ± z·sqrt(n·p·(1-p)).
// No assumption about the shape of latency distributions is needed, and it
// works from the stored histograms, so a single trial of hundreds of
// requests can already show that a percentile moved.
func quantileCI(h *hdrhistogram.Histogram, q float64) (lo, hi float64) {
	n := float64(h.TotalCount())
	p := q / 100
	half := ciZ * math.Sqrt(n*p*(1-p))
	loRank := math.Max(0, math.Floor(n*p-half))
	hiRank := math.Min(n, math.Ceil(n*p+half)+1)
	lo = float64(h.ValueAtQuantile(100*loRank/n)) / 1000
	hi = float64(h.ValueAtQuantile(100*hiRank/n)) / 1000
	if loRank == 0 {
		lo = float64(h.Min()) / 1000
	}
	return lo, hi
}
