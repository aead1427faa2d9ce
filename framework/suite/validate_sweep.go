package suite

import (
	"fmt"
	"math"
	"time"
)

// Bounds on a point's plan: one machine sends at most MaxRate requests/s
// (benchci's client holds about 8,000 on 2 cores), a point lasts at most
// MaxPointDuration, and plans at most MaxPlannedRequests (its timeline is
// 8 bytes a request).
const (
	MaxRate            = 100_000
	MaxPointDuration   = Duration(24 * time.Hour)
	MaxPlannedRequests = 10_000_000
)

// validateSweep checks the sweep's plan, deriving its kind from rates or
// concurrencies when not given, then its bounds and ramp.
func validateSweep(sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("sweep", field), Msg: fmt.Sprintf(format, args...)})
	}
	if sw.Kind == "" {
		switch {
		case len(sw.Rates) > 0 && len(sw.Concurrencies) > 0:
			bad("", "give rates or concurrencies, not both")
		case len(sw.Rates) > 0:
			sw.Kind = SweepRate
		case len(sw.Concurrencies) > 0:
			sw.Kind = SweepConcurrency
		}
	}
	switch sw.Kind {
	case SweepRate:
		if len(sw.Rates) == 0 {
			bad("rates", "required: at least one request rate")
		}
		for i, r := range sw.Rates {
			if !(r > 0) || math.IsInf(r, 0) {
				bad(fmt.Sprintf("rates[%d]", i), "a rate must be a positive number of requests/s, got %v", r)
			}
		}
	case SweepConcurrency:
		if len(sw.Concurrencies) == 0 {
			bad("concurrencies", "required: at least one concurrency level")
		}
		for i, c := range sw.Concurrencies {
			if c < 1 {
				bad(fmt.Sprintf("concurrencies[%d]", i), "must be at least 1, got %d", c)
			} else if c > MaxConcurrency {
				bad(fmt.Sprintf("concurrencies[%d]", i), "%d requests in flight is beyond what one client machine holds (at most %d; use shards)", c, MaxConcurrency)
			}
		}
	case SweepCapacity:
		if !(sw.Min > 0) || math.IsInf(sw.Min, 0) {
			bad("min", "must be a positive rate, got %v", sw.Min)
		}
		if !(sw.Max > sw.Min) || math.IsInf(sw.Max, 0) {
			bad("max", "must be above min (%v), got %v", sw.Min, sw.Max)
		}
		if !(sw.Precision > 0 && sw.Precision < 1) {
			bad("precision", "must be a fraction between 0 and 1 (0.05 for 5%%), got %v", sw.Precision)
		}
	case SweepThroughput:
		if sw.Requests <= 0 {
			bad("requests", "required: a throughput sweep sends this many requests at once")
		} else if sw.Requests > MaxPlannedRequests {
			bad("requests", "%d is more than a point may plan (%v)", sw.Requests, MaxPlannedRequests)
		}
		if sw.Duration != 0 || sw.Warmup != 0 {
			bad("duration", "a throughput sweep runs until its requests end: drop duration and warmup")
		}
	case SweepAuto:
		if sw.Points == 0 {
			sw.Points = 8
		}
		if sw.Points < 2 {
			bad("points", "must be at least 2, got %d", sw.Points)
		} else if sw.Points > MaxPoints {
			bad("points", "%d is more than the %d points a sweep may have", sw.Points, MaxPoints)
		}
	case "":
		if len(errs) == 0 {
			errs = append(errs, &FieldError{Path: "sweep", Msg: "required: b.sweep.rates([...]), b.sweep.concurrency([...]), b.sweep.capacity(min, max), b.sweep.auto() or b.sweep.throughput(requests)"})
		}
	default:
		bad("kind", "unknown sweep kind %q (known: rate, concurrency, capacity, auto, throughput)", sw.Kind)
	}
	errs = append(errs, validateSweepBounds(sw)...)
	errs = append(errs, validateRamp(sw)...)
	if st := sw.StopSaturated; st != nil && *st && (sw.Kind == SweepConcurrency || sw.Kind == SweepThroughput) {
		bad("stop_saturated", "applies to open-loop rates: a %s sweep's queue is bounded by its own concurrency", sw.Kind)
	}
	return errs
}

// validateSweepBounds checks the plan against what one client machine
// sends and holds, and the durations and counts of a point.
func validateSweepBounds(sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("sweep", field), Msg: fmt.Sprintf(format, args...)})
	}
	if n := len(sw.Rates) + len(sw.Concurrencies); n > MaxPoints {
		field := "rates"
		if len(sw.Concurrencies) > len(sw.Rates) {
			field = "concurrencies"
		}
		bad(field, "%d points, more than the %d a sweep may have", n, MaxPoints)
	}
	if sw.Duration < 0 {
		bad("duration", "must not be negative")
	}
	// A plan no machine can send is refused before its timeline is drawn
	// (a rate of 1e9, or a duration of centuries, held gigabytes).
	if sw.Duration > MaxPointDuration {
		bad("duration", "%v is longer than a point may be (%v)", sw.Duration.D(), time.Duration(MaxPointDuration))
	}
	for i, r := range sw.Rates {
		if r > MaxRate {
			bad(fmt.Sprintf("rates[%d]", i), "%v req/s is beyond what one client machine sends (at most %v; use shards)", r, MaxRate)
		} else if n := r * (sw.Duration + sw.Warmup).D().Seconds(); n > MaxPlannedRequests {
			bad(fmt.Sprintf("rates[%d]", i), "%v req/s for %v plans %.3g requests in one point, more than %v", r, (sw.Duration + sw.Warmup).D(), n, MaxPlannedRequests)
		}
	}
	if sw.Max > MaxRate {
		bad("max", "%v req/s is beyond what one client machine sends (at most %v)", sw.Max, MaxRate)
	}
	if sw.Duration == 0 && sw.Requests == 0 {
		bad("duration", "a point needs a duration or a request count")
	}
	if sw.Warmup < 0 {
		bad("warmup", "must not be negative")
	}
	if sw.Requests < 0 {
		bad("requests", "must not be negative, got %d", sw.Requests)
	}
	if sw.MaxConcurrency < 0 {
		bad("max_concurrency", "must not be negative, got %d", sw.MaxConcurrency)
	} else if sw.MaxConcurrency > MaxConcurrency {
		bad("max_concurrency", "%d requests in flight is beyond what one client machine holds (at most %d)", sw.MaxConcurrency, MaxConcurrency)
	}
	return errs
}

// validateRamp checks a rate sweep's ramp.
func validateRamp(sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("sweep", field), Msg: fmt.Sprintf(format, args...)})
	}
	if r := sw.Ramp; r != nil {
		switch {
		case sw.Kind != SweepRate:
			bad("ramp", "only a rate sweep ramps its points, not a %s sweep", sw.Kind)
		case r.Kind != RampLinear && r.Kind != RampExponential:
			bad("ramp.kind", "unknown ramp %q (known: linear, exponential)", r.Kind)
		case !(r.From >= 0) || math.IsInf(r.From, 0):
			bad("ramp.from", "must be a rate of 0 or more, got %v", r.From)
		case r.Kind == RampExponential && r.From == 0:
			bad("ramp.from", "an exponential ramp cannot start from 0; give a small rate such as 0.5")
		case r.Over <= 0:
			bad("ramp.over", "must be a positive duration")
		case sw.Duration > 0 && r.Over > sw.Warmup+sw.Duration:
			bad("ramp.over", "%v is longer than the point (%v of warm-up and duration)", r.Over.D(), (sw.Warmup + sw.Duration).D())
		}
	}
	return errs
}
