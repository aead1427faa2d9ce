package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
)

// MinSamples is the fewest independent samples whose 99% interval of the
// q-th percentile has an upper bound: the largest of n samples must lie
// above the percentile with probability 1 - alpha/2, i.e.
// (q/100)^n <= alpha/2. Below it a rise of that percentile, however
// large, cannot be told from noise (8 for a P50, 528 for a P99).
func MinSamples(q float64) int {
	return int(math.Ceil(math.Log(ciAlpha/2) / math.Log(q/100)))
}

// Plan is what Power reads of a suite's fixed-rate sweep: the requests
// each point will send, and which latencies they will measure. The
// caller builds it from its suite; only a rate sweep's request counts
// are known ahead (closed loop, auto and capacity sweeps are not judged).
type Plan struct {
	// Rates are the sweep's points, in requests per second.
	Rates []float64
	// Duration is each point's measured window; Requests, when above 0,
	// caps the requests a point sends.
	Duration time.Duration
	Requests int
	Trials   int
	// Retry is set when the suite retries, so that the latencies from a
	// request's first attempt (ttft_user, e2e_user) are measured.
	Retry bool
	// Embeddings is set for an embeddings suite: an answer has no first
	// token and no stream, so only end-to-end latencies are measured.
	Embeddings bool
	// Tolerance is the suite's: figures it turns off ('off') are not
	// gated, so their power is not judged.
	Tolerance map[string]string
}

// off says whether a tolerance leaves k out of the gate: its own key,
// else its metric's, is 'off'.
func off(tol map[string]string, k metric.Key) bool {
	for _, key := range []string{k.String(), k.Metric} {
		if v, ok := tol[key]; ok {
			b, err := metric.ParseBand(v)
			return err == nil && b.Off
		}
	}
	return false
}

// Power says, before a run, which gated percentiles a plan's points will
// measure from too few requests to ever fail the gate, and what would fix
// it. Plans with enough trials for the test across trials are not judged.
func Power(s Plan) []string {
	if s.Trials >= MinTrialsForUTest {
		return nil
	}
	// Gated percentiles by quantile: one line says all that one count
	// cannot bound.
	var quantiles []float64
	keys := map[float64][]string{}
	for _, k := range metric.Gated {
		d := k.Def()
		if d.Kind != metric.Latency {
			continue
		}
		if d.Only == metric.OnlyRetries && !s.Retry {
			continue // measured only when the suite retries
		}
		if s.Embeddings && !d.APIs.Has("embeddings") {
			continue // an embeddings answer has no first token and no stream
		}
		q, ok := metric.Quantile(k.Stat)
		if !ok || off(s.Tolerance, k) {
			continue
		}
		if _, seen := keys[q]; !seen {
			quantiles = append(quantiles, q)
		}
		keys[q] = append(keys[q], k.String())
	}
	trials := max(s.Trials, 1)
	secs := s.Duration.Seconds()
	planned := make([]int, len(s.Rates))
	for i, rate := range s.Rates {
		n := rate * secs
		if s.Requests > 0 && (secs == 0 || float64(s.Requests) < n) {
			n = float64(s.Requests)
		}
		planned[i] = int(n) * trials // trials' histograms are merged
	}
	var out []string
	for _, q := range quantiles {
		need := MinSamples(q)
		var rates, counts []string
		slowest := 0.0
		for i, rate := range s.Rates {
			if planned[i] >= need {
				continue
			}
			rates = append(rates, strconv.FormatFloat(rate, 'g', -1, 64))
			counts = append(counts, strconv.Itoa(planned[i]))
			if slowest == 0 || rate < slowest {
				slowest = rate
			}
		}
		if len(rates) == 0 {
			continue
		}
		fix := fmt.Sprintf("trials: %d", MinTrialsForUTest)
		if s.Requests > 0 {
			fix += fmt.Sprintf(" or requests >= %d", (need+trials-1)/trials)
		} else if slowest > 0 {
			fix += fmt.Sprintf(" or duration >= %ds", int(math.Ceil(float64(need)/(slowest*float64(trials)))))
		}
		out = append(out, fmt.Sprintf("%s at rate=%s: about %s requests planned; a 99%% interval of a P%s needs at least %d, so there they cannot fail the gate: use %s",
			strings.Join(keys[q], ", "), strings.Join(rates, ", "), strings.Join(counts, ", "), strconv.FormatFloat(q, 'g', -1, 64), need, fix))
	}
	return out
}

// SearchPower says which of a capacity search's percentile SLOs its probes
// read from too few requests to be bounded. The search's verdict at each
// probe is whether every SLO held there, and the probes that decide the
// answer lie inside [minRate, maxRate], not at its ends; one at the middle
// sends about (minRate+maxRate)/2 × probe requests, and a percentile of
// fewer than MinSamples(q) of them is decided by its slowest few, so
// whether the SLO held flips with noise, and the capacity with it. slos
// are the search's SLOs as figure keys ("ttft.p99"); others are skipped.
func SearchPower(minRate, maxRate float64, probe time.Duration, slos []metric.Key) []string {
	mid := (minRate + maxRate) / 2
	n := int(mid * probe.Seconds())
	var out []string
	for _, k := range slos {
		if _, ok := metric.Lookup(k.Metric); !ok {
			continue
		}
		q, ok := metric.Quantile(k.Stat)
		if !ok || k.Def().Kind != metric.Latency || mid <= 0 {
			continue
		}
		need := MinSamples(q)
		if n >= need {
			continue
		}
		out = append(out, fmt.Sprintf("SLO %s in the capacity search: a probe mid-range (%s req/s for %s) sends about %d requests; a 99%% interval of a P%s needs at least %d, so whether it holds near the capacity is noise: use duration >= %ds or a lower percentile",
			k, strconv.FormatFloat(mid, 'g', -1, 64), probe, n, strconv.FormatFloat(q, 'g', -1, 64), need, int(math.Ceil(float64(need)/mid))))
	}
	return out
}
