package suite

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/didyoumean"
)

// Ops are the comparisons an SLO may make.
var Ops = []string{"<", "<=", ">", ">="}

// validateSLOs checks each SLO, and what its metric needs of the rest of
// the suite. It runs after validateSweep, which derives sweep.kind.
func validateSLOs(s *Suite) []*FieldError {
	var p fieldErrors
	for i, slo := range s.SLOs {
		p = append(p, validateSLO(fmt.Sprintf("slos[%d]", i), slo, &s.Sweep)...)
		if (slo.Metric == metric.TTFTUser || slo.Metric == metric.E2EUser || slo.Metric == metric.RetryAmplification) && s.Request.Retry == nil {
			p.add(fmt.Sprintf("slos[%d].metric", i), "%s is measured when requests are retried: request: { retry: b.retry(...) }", slo.Metric)
		}
		if slo.Metric == metric.Goodput && len(s.Goodput) == 0 {
			p.add(fmt.Sprintf("slos[%d].metric", i), "goodput needs per-request SLOs: goodput: { ttft: '500ms', tpot: '50ms' }")
		}
	}
	if s.Sweep.Kind == SweepCapacity && len(s.SLOs) == 0 {
		p.add("slos", "a capacity search needs SLOs: capacity is the highest rate at which all of them hold")
	}
	return p
}

func validateSLO(path string, slo SLO, sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath(path, field), Msg: fmt.Sprintf(format, args...)})
	}
	asserted := metric.Names(func(d metric.Def) bool { return d.SLO })
	if !slices.Contains(asserted, slo.Metric) {
		bad("metric", "unknown metric %q%s", slo.Metric, didyoumean.Hint(slo.Metric, asserted))
	} else if err := metric.K(slo.Metric, slo.Stat).Check(); err != nil {
		bad("stat", "%v", err)
	} else if _, err := ParseThreshold(slo); err != nil {
		bad("threshold", "%v", err)
	}
	if !slices.Contains(Ops, slo.Op) {
		bad("op", "unknown operator %q (known: %s)", slo.Op, strings.Join(Ops, " "))
	}
	if slo.AtRate != 0 && sw.Kind == SweepThroughput {
		bad("at_rate", "a throughput sweep sends everything at once (rate=inf): drop at_rate, its one point is judged")
	} else if slo.AtRate != 0 && (sw.Kind == SweepCapacity || sw.Kind == SweepAuto) {
		bad("at_rate", "a %s sweep chooses its own rates; drop at_rate", sw.Kind)
	} else if slo.AtRate != 0 && !slices.Contains(sw.Rates, slo.AtRate) {
		bad("at_rate", "%v is not one of the sweep's rates %v", slo.AtRate, sw.Rates)
	}
	if slo.AtConcurrency != 0 && !slices.Contains(sw.Concurrencies, slo.AtConcurrency) {
		bad("at_concurrency", "%d is not one of the sweep's concurrencies %v", slo.AtConcurrency, sw.Concurrencies)
	}
	return errs
}

// validateGoodput checks the per-request SLOs goodput counts by.
func validateGoodput(s *Suite) []*FieldError {
	var p fieldErrors
	perRequest := metric.Names(func(d metric.Def) bool { return d.Goodput })
	for k, d := range s.Goodput {
		if !slices.Contains(perRequest, k) {
			p.add(JoinPath("goodput", k), "unknown per-request metric%s", didyoumean.Hint(k, perRequest))
		} else if d <= 0 {
			p.add(JoinPath("goodput", k), "must be positive")
		}
	}
	return p
}

// validateTolerance checks each tolerance: a metric key and a band.
func validateTolerance(s *Suite) []*FieldError {
	var p fieldErrors
	for k, v := range s.Tolerance {
		if _, err := metric.ParseTolerance(k); err != nil {
			p.add(JoinPath("tolerance", k), "%v", err)
		} else if b, err := ParseBand(v); err != nil {
			p.add(JoinPath("tolerance", k), "%v", err)
		} else if b.Off && k == "default" {
			p.add(JoinPath("tolerance", k), "'off' as the default would gate nothing: turn off the figures you cannot gate by their own keys ('ttft.p99': 'off')")
		}
	}
	return p
}

// ParseThreshold returns an SLO's threshold in the unit its metric is
// measured in: milliseconds for latencies, the plain number otherwise.
func ParseThreshold(slo SLO) (float64, error) {
	v, err := parseThreshold(slo)
	// Results files bound every figure so: past it the run would write a
	// verdict no reader takes.
	if err == nil && (math.IsNaN(v) || math.Abs(v) > metric.MaxValue) {
		return 0, fmt.Errorf("%v is beyond any figure a run records (at most %g, in ms for a latency)", slo.Threshold, float64(metric.MaxValue))
	}
	return v, err
}

func parseThreshold(slo SLO) (float64, error) {
	if d, ok := metric.Lookup(slo.Metric); ok && d.Kind == metric.Latency {
		s, ok := slo.Threshold.(string)
		if !ok {
			return 0, fmt.Errorf("want a duration string such as \"500ms\", got %v", slo.Threshold)
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("want a positive duration such as \"500ms\", got %q", s)
		}
		return float64(d) / float64(time.Millisecond), nil
	}
	switch v := slo.Threshold.(type) {
	case float64:
		return v, nil
	case string:
		if strings.HasSuffix(v, "%") && slo.Metric == metric.ErrorRate {
			f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err == nil {
				return f / 100, nil
			}
		}
	}
	return 0, fmt.Errorf("want a number, got %v", slo.Threshold)
}
