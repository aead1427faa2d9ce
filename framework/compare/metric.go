// Package compare judges a candidate result against a baseline: for each
// load point and metric, pass, regression, improvement or noise, with the
// statistics that decided it.
package compare

import (
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// Metric is one compared figure, as the metric catalogue defines it.
type Metric struct {
	// Key names the figure, as tolerance keys do: "ttft.p99",
	// "output_throughput", "error_rate", "cost".
	Key    string
	Better metric.Better
	Unit   string
	// hist and quantile locate a latency percentile's histogram, for the
	// single-trial significance test.
	hist     string
	quantile float64
	// perRequest: the histogram holds many samples per request, and the
	// interval's sample size is the requests (metric.PerGap).
	perRequest bool
	key        metric.Key
	def        metric.Def
}

func (m Metric) value(p *result.Point) (float64, bool) {
	v, missing := p.Value(m.key)
	return v, missing == ""
}

func metricOf(k metric.Key) Metric {
	d := k.Def()
	m := Metric{Key: k.String(), Better: d.Better, Unit: d.Unit, key: k, def: d}
	if d.Test == metric.QuantileInterval {
		m.hist = k.Metric
		m.quantile, _ = metric.Quantile(k.Stat)
		m.perRequest = d.Scope == metric.PerGap
	}
	return m
}

// Metrics are the compared figures, in report order: the catalogue's gated ones.
var Metrics = func() []Metric {
	out := make([]Metric, len(metric.Gated))
	for i, k := range metric.Gated {
		out[i] = metricOf(k)
	}
	return out
}()

// base returns the metric name before the statistic: "ttft" of "ttft.p99".
func (m Metric) base() string {
	b, _, _ := strings.Cut(m.Key, ".")
	return b
}

// ciAlpha is 1 - the confidence of the percentile intervals: 99%. Two 99%
// intervals that do not overlap mean p < 0.001 or so; stricter than the
// usual 95% because a PR compares dozens of figures at once, and a gate
// that cries wolf gets disabled.
const ciAlpha = 0.01

// quantileCI returns a distribution-free 99% confidence interval for the
// q-th percentile of the distribution h was sampled from, taking n as the
// number of independent samples. Among n samples, the number B below the
// true percentile is Binomial(n, q/100), so [X(l), X(u)] covers it with
// probability P(l <= B < u); l and u are the ranks whose binomial tails
// hold at most ciAlpha/2 each, computed exactly, and read from h at the
// quantiles l/n and u/n. When n is too small for a tail (the p99 of 11
// samples), that side is unbounded: lo 0 or hi +Inf, and no difference
// can be claimed there. No assumption about the shape of latency
// distributions is needed, and it works from the stored histograms, so a
// single trial of hundreds of requests can already show that a percentile
// moved.
//
// n is h's count, except where samples come in correlated clusters: the
// chunk gaps of one request share its batch and its server. Taking the
// requests as n is the conservative bound (the design effect of perfectly
// correlated clusters), so 2 requests of 1000 gaps each bound a p99 no
// better than 2 samples would.
func quantileCI(h *hdrhistogram.Histogram, q float64, n int64) (lo, hi float64) {
	b := distuv.Binomial{N: float64(n), P: q / 100}
	lo, hi = 0, math.Inf(1)
	// l: the largest rank with P(B < l) = CDF(l-1) <= alpha/2.
	if l := binarySearch(0, n, func(k int64) bool { return b.CDF(float64(k-1)) > ciAlpha/2 }) - 1; l >= 1 {
		lo = rankValue(h, l, n)
	}
	// u: the smallest rank with P(B >= u) = 1 - CDF(u-1) <= alpha/2.
	if u := binarySearch(1, n+1, func(k int64) bool { return 1-b.CDF(float64(k-1)) <= ciAlpha/2 }); u <= n {
		hi = rankValue(h, u, n)
	}
	return lo, hi
}

// binarySearch returns the smallest k in [lo, hi] with f(k) true, f being
// monotone; hi when none below it is.
func binarySearch(lo, hi int64, f func(int64) bool) int64 {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// rankValue is the value at rank k of n (the k-th smallest when n is h's
// count), in milliseconds.
func rankValue(h *hdrhistogram.Histogram, k, n int64) float64 {
	return float64(h.ValueAtQuantile(100*float64(k)/float64(n))) / 1000
}
