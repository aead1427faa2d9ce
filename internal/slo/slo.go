// Package slo checks a suite's SLO assertions against measured points.
// SLOs are gated on their own, independently of any baseline: a release
// must meet them whatever it is compared with.
package slo

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/benchci/benchci/framework/metric"
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
			if (s.AtRate != 0 && (p.Mode != result.ModeRate || p.Rate != s.AtRate)) ||
				(s.AtConcurrency != 0 && (p.Mode != result.ModeConcurrency || p.Concurrency != s.AtConcurrency)) {
				continue
			}
			matched = true
			v := result.SLO{Name: Name(s), Point: p.Label, Trial: p.Trial, Limit: limit, Unit: unit(s.Metric)}
			measured, note := p.Value(s.Key())
			if s.Model != "" {
				if m := p.Models[s.Model]; m != nil {
					mp := p
					mp.Measured = *m
					measured, note = mp.Value(s.Key())
				} else {
					measured, note = 0, "no requests of model "+s.Model+" at this point"
				}
			}
			v.Measured, v.Note = measured, note
			v.Pass = note == "" && Holds(measured, s.Op, limit)
			if p.Schedule.Saturation != "" {
				// Stopped early with its queue growing: the figures are of
				// the answers that came before the stop, and a longer run
				// would only have made them worse.
				v.Pass = false
				v.Note = "the point saturated and was stopped early: " + p.Schedule.Saturation
			}
			if !p.Valid() {
				// The trial measured this machine, not the server: its
				// figures neither pass nor fail anything, but the
				// server's own errors still fail it.
				v.Pass, v.Inconclusive = false, true
				v.Note = "inconclusive: the trial did not measure the server: " + strings.Join(p.Validity.Invalid, "; ")
				if fail, note := serverErrorsFail(s, p, limit); fail {
					v.Inconclusive, v.Note = false, note
				}
			}
			out = append(out, v)
		}
		if !matched {
			out = append(out, result.SLO{Name: Name(s), Limit: limit, Unit: unit(s.Metric), Note: "no measured point matches"})
		}
	}
	return out
}

// serverErrorsFail reports whether an invalid trial fails an error-rate
// SLO on the server's errors alone (result.ServerErrorKinds): those a
// stalled client cannot cause, so the machine's state excuses none.
func serverErrorsFail(s suite.SLO, p result.Point, limit float64) (bool, string) {
	if s.Metric != metric.ErrorRate || s.Model != "" || (s.Op != "<" && s.Op != "<=") {
		return false, ""
	}
	r := p.Requests.ServerErrorRate()
	if Holds(r, s.Op, limit) {
		return false, ""
	}
	return true, fmt.Sprintf("failed on the server's own errors: %d of %d requests (%s), which a stall of this machine cannot cause (the trial's other figures judge nothing: %s)",
		p.Requests.ServerFailed(), p.Requests.Sent, errorKinds(p.Requests), strings.Join(p.Validity.Invalid, "; "))
}

// errorKinds lists the server's errors by kind: "13 http".
func errorKinds(r result.Requests) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		if n := r.Errors[k]; n > 0 && result.IsServerError(k) {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
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

// unit is the metric's unit, from the catalogue.
func unit(name string) string {
	if d, ok := metric.Lookup(name); ok {
		return d.Unit
	}
	return ""
}

// Name renders an SLO the way a person would write it.
func Name(s suite.SLO) string {
	n := s.Metric
	if s.Stat != "" {
		n += " " + s.Stat
	}
	n += " " + s.Op + " " + fmt.Sprint(s.Threshold)
	if s.Model != "" {
		n += " for " + s.Model
	}
	return n + At(s)
}

// At is where an SLO holds, as Name writes it: " @ rate=8", or "" at
// every point.
func At(s suite.SLO) string {
	switch {
	case s.AtRate != 0:
		return " @ rate=" + strconv.FormatFloat(s.AtRate, 'g', -1, 64)
	case s.AtConcurrency != 0:
		return " @ concurrency=" + strconv.Itoa(s.AtConcurrency)
	}
	return ""
}

// Sanity is the gate every run passes whatever its SLOs: a point where no
// request completed, or where most failed, measured a broken target, not
// a configuration. Only its failures are listed.
func Sanity(s *suite.Suite, points []result.Point) []result.SLO {
	maxErr := suite.DefaultMaxErrorRate
	if sn := s.Sanity; sn != nil && sn.MaxErrorRate > 0 {
		maxErr = sn.MaxErrorRate
	}
	var out []result.SLO
	for _, p := range points {
		if p.Requests.Sent == 0 && !p.Incomplete && p.Valid() {
			// No measured request was sent (a trace whose arrivals all fell
			// outside the window, a rate too low for the duration): nothing
			// was measured, whatever the SLOs would say of no samples. Not
			// even sanity: { off: true } allows it. A trial that measured
			// nothing for a reason it states (invalid: its warm-up outlasted
			// the window, the machine stalled) is inconclusive instead: a
			// sanity check never turns that into a failure.
			out = append(out, result.SLO{Name: "sanity: some request is sent", Point: p.Label, Unit: "requests",
				Note: "the point sent no request: nothing was measured"})
			continue
		}
		if sn := s.Sanity; sn != nil && sn.Off {
			continue
		}
		if !p.Valid() {
			// A stalled machine times requests out too: of an invalid
			// trial's failures only the server's own judge it.
			if r := p.Requests.ServerErrorRate(); r > maxErr {
				out = append(out, result.SLO{Name: fmt.Sprintf("sanity: error_rate <= %g", maxErr), Point: p.Label,
					Measured: r, Limit: maxErr, Unit: "fraction",
					Note: fmt.Sprintf("the server's own errors (%s), which a stall of this machine cannot cause", errorKinds(p.Requests))})
			}
			continue
		}
		switch {
		case p.Requests.Sent > 0 && p.Requests.Completed == 0:
			out = append(out, result.SLO{Name: "sanity: some request completes", Point: p.Label, Unit: "requests",
				Note: fmt.Sprintf("none of %d requests completed (the suite's sanity: { off: true } allows it)", p.Requests.Sent)})
		case p.Requests.ErrorRate > maxErr:
			out = append(out, result.SLO{Name: fmt.Sprintf("sanity: error_rate <= %g", maxErr), Point: p.Label,
				Measured: p.Requests.ErrorRate, Limit: maxErr, Unit: "fraction"})
		}
	}
	return out
}

// Judge sets f's SLO verdicts: the suite's SLOs and the sanity gate, on
// the points that gate the run. A run, a merge of shards (shard.Merge) and
// a re-judged result (ci --measured) all call it, so they judge alike.
func Judge(s *suite.Suite, f *result.File) {
	if c := f.Capacity; c != nil && c.Bound == result.CapacityInconclusive {
		// The search stopped at a probe that measured this machine: no
		// capacity, so no point the SLOs hold at. Each is inconclusive,
		// with the search's reason, never a failure of a point at rate 0.
		f.SLOs = nil
		for _, slo := range s.SLOs {
			limit, _ := suite.ParseThreshold(slo)
			f.SLOs = append(f.SLOs, result.SLO{Name: Name(slo), Limit: limit, Unit: unit(slo.Metric), Inconclusive: true,
				Note: "inconclusive: the capacity search stopped: " + c.Why})
		}
		// A probe that did measure the server and found it broken (nothing
		// completed, most requests failed) still fails the run: the search
		// stopping elsewhere does not excuse it.
		f.SLOs = append(f.SLOs, Sanity(s, f.Points)...)
		return
	}
	f.SLOs = append(Evaluate(s.SLOs, gated(f)), Sanity(s, gated(f))...)
}

// gated returns the points whose SLOs gate the run: all of them, except in
// a capacity search, where probes above capacity fail by design and only
// the capacity point (or, below the search's minimum, the failing minimum)
// is judged.
func gated(f *result.File) []result.Point {
	c := f.Capacity
	if c == nil {
		return f.Points
	}
	want := c.Rate
	if want == 0 {
		want = c.Failing
	}
	var out []result.Point
	for _, p := range f.Points {
		if p.Rate == want {
			out = append(out, p)
		}
	}
	return out
}
