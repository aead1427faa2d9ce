// Package slo checks a suite's SLO assertions against measured points.
// SLOs are gated on their own, independently of any baseline: a release
// must meet them whatever it is compared with.
package slo

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// Evaluate returns one verdict per SLO and matching point.
func Evaluate(slos []suite.SLO, points []result.Point) []result.SLO {
	var out []result.SLO
	for _, s := range slos {
		limit, err := suite.ParseThreshold(s)
		if err != nil { // validated when the suite loaded; keep the verdict honest anyway
			out = append(out, result.SLO{Name: Name(s), Note: err.Error()})
			continue
		}
		matched := false
		for _, p := range points {
			if (s.AtRate != 0 && (p.Mode != "rate" || p.Rate != s.AtRate)) ||
				(s.AtConcurrency != 0 && (p.Mode != "concurrency" || p.Concurrency != s.AtConcurrency)) {
				continue
			}
			matched = true
			v := result.SLO{Name: Name(s), Point: p.Label, Limit: limit, Unit: unit(s.Metric)}
			measured, note := value(s, p)
			v.Measured, v.Note = measured, note
			v.Pass = note == "" && Holds(measured, s.Op, limit)
			out = append(out, v)
		}
		if !matched {
			out = append(out, result.SLO{Name: Name(s), Limit: limit, Unit: unit(s.Metric), Note: "no measured point matches"})
		}
	}
	return out
}

// Holds reports whether "measured op limit" is true.
func Holds(measured float64, op string, limit float64) bool {
	switch op {
	case "<":
		return measured < limit
	case "<=":
		return measured <= limit
	case ">":
		return measured > limit
	case ">=":
		return measured >= limit
	}
	return false
}

func value(s suite.SLO, p result.Point) (float64, string) {
	if slices.Contains(suite.LatencyMetrics, s.Metric) {
		sum := p.Latency[s.Metric]
		if sum.Count == 0 {
			return 0, "no successful requests to measure"
		}
		v, _ := sum.Stat(s.Stat)
		return v, ""
	}
	if p.Requests.Sent == 0 {
		return 0, "no requests measured"
	}
	switch s.Metric {
	case "error_rate":
		return p.Requests.ErrorRate, ""
	case "request_throughput":
		return p.Throughput.Requests, ""
	case "output_throughput":
		return p.Throughput.OutputTokens, ""
	case "total_throughput":
		return p.Throughput.TotalTokens, ""
	case "goodput":
		if p.Throughput.Goodput == nil {
			return 0, "the suite sets no per-request SLOs (goodput)"
		}
		return *p.Throughput.Goodput, ""
	}
	return 0, "unknown metric " + s.Metric
}

func unit(metric string) string {
	switch {
	case slices.Contains(suite.LatencyMetrics, metric):
		return "ms"
	case metric == "error_rate":
		return "fraction"
	case metric == "request_throughput", metric == "goodput":
		return "req/s"
	}
	return "tok/s"
}

// Name renders an SLO the way a person would write it.
func Name(s suite.SLO) string {
	n := s.Metric
	if s.Stat != "" {
		n += " " + s.Stat
	}
	n += " " + s.Op + " " + fmt.Sprint(s.Threshold)
	switch {
	case s.AtRate != 0:
		n += " @ rate=" + strconv.FormatFloat(s.AtRate, 'g', -1, 64)
	case s.AtConcurrency != 0:
		n += " @ concurrency=" + strconv.Itoa(s.AtConcurrency)
	}
	return n
}
