package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/offered"
	"github.com/benchci/benchci/internal/slo"
	"github.com/benchci/benchci/internal/sweep"
)

// A plan decides which load points a run measures, running each through
// the executor. Each sweep kind is one plan type, chosen once by planFor.
type plan interface {
	run(ctx context.Context, ex *executor) error
}

// load is one point's load.
type load struct {
	mode loadgen.Mode
	// allAtOnce sends the point's requests at its start (rate=inf).
	allAtOnce   bool
	rate        float64
	concurrency int
	// arrivalStream picks the point's seeded arrival stream.
	arrivalStream int
	// lengthen multiplies the suite's duration (0 or 1: as the suite says),
	// and earlier lists the attempts at this point already discarded: a
	// capacity probe measured again, longer (capacityPlan.settle).
	lengthen int
	earlier  []string
}

func planFor(s *suite.Suite) (plan, error) {
	sw := s.Sweep
	switch sw.Kind {
	case suite.SweepRate:
		p := &explicitPlan{trials: s.Trials}
		for i, r := range sw.Rates {
			p.loads = append(p.loads, load{mode: loadgen.OpenLoop, rate: r, arrivalStream: i})
		}
		return p, nil
	case suite.SweepConcurrency:
		p := &explicitPlan{trials: s.Trials}
		for i, c := range sw.Concurrencies {
			p.loads = append(p.loads, load{mode: loadgen.ClosedLoop, concurrency: c, arrivalStream: i})
		}
		return p, nil
	case suite.SweepThroughput:
		return &explicitPlan{trials: s.Trials, loads: []load{{mode: loadgen.OpenLoop, allAtOnce: true}}}, nil
	case suite.SweepAuto:
		limit := sw.MaxConcurrency
		if limit == 0 {
			limit = 256
		}
		return &autoPlan{points: sw.Points, limit: limit}, nil
	case suite.SweepCapacity:
		return &capacityPlan{min: sw.Min, max: sw.Max, precision: sw.Precision, slos: s.SLOs}, nil
	}
	return nil, fmt.Errorf("unknown sweep kind %q", sw.Kind)
}

// trialStreams separates the arrival streams of a sweep's trials, above
// any point's index; lengthenStreams those of a capacity probe measured
// again longer from its first (a probe's own is its rate × 1000, below
// 2^27 for any rate a suite may give).
const (
	trialStreams    = 1 << 24
	lengthenStreams = 1 << 27
)

// explicitPlan runs the listed loads, trials times over.
type explicitPlan struct {
	loads  []load
	trials int
}

func (p *explicitPlan) run(ctx context.Context, ex *executor) error {
	total := len(p.loads) * p.trials
	for trial := range p.trials {
		// Trials run the whole sweep in turn rather than repeating each point
		// back to back, so slow drift spreads over all points alike.
		for i, ld := range p.loads {
			if ctx.Err() != nil {
				return nil
			}
			// Each trial draws its own arrivals (the first the ones a
			// single-trial run draws): trials then average out one draw's
			// luck, as a point's note on its offered rate advises, where
			// repeating one draw would repeat its shortfall in every trial.
			// A baseline and a candidate still draw the same ones.
			ld.arrivalStream += trial * trialStreams
			if _, err := ex.run(ctx, ld, PointInfo{Index: trial*len(p.loads) + i, Total: total, Trial: trial + 1}); err != nil {
				return err
			}
		}
	}
	ex.f.Knee = sweep.Knee(ex.f.Points)
	return nil
}

// autoPlan runs a GuideLLM-style sweep: a synchronous point (one request
// at a time) and a throughput point (limit in flight) bound what the
// server can do; points open-loop rates are then spread evenly between the
// two throughputs, both ends included.
type autoPlan struct {
	points, limit int
}

func (p *autoPlan) run(ctx context.Context, ex *executor) error {
	total := p.points + 2
	sync, err := ex.run(ctx, load{mode: loadgen.ClosedLoop, concurrency: 1}, PointInfo{Index: 0, Total: total, Trial: 1})
	if err != nil || ctx.Err() != nil {
		return err
	}
	lo := sync.Throughput.Requests
	top, err := ex.run(ctx, load{mode: loadgen.ClosedLoop, concurrency: p.limit}, PointInfo{Index: 1, Total: total, Trial: 1})
	if err != nil || ctx.Err() != nil {
		return err
	}
	hi := top.Throughput.Requests
	if !(lo > 0) || !(hi > lo) {
		return fmt.Errorf("auto sweep: synchronous throughput %.3g req/s, maximum %.3g: no range to sweep", lo, hi)
	}
	for i := range p.points {
		if ctx.Err() != nil {
			return nil
		}
		rate := sweep.RoundRate(lo + (hi-lo)*float64(i)/float64(p.points-1))
		if _, err := ex.run(ctx, load{mode: loadgen.OpenLoop, rate: rate, arrivalStream: i}, PointInfo{Index: i + 2, Total: total, Trial: 1}); err != nil {
			return err
		}
	}
	ex.f.Knee = sweep.Knee(openLoopOnly(ex.f.Points))
	return nil
}

func openLoopOnly(ps []result.Point) []result.Point {
	var out []result.Point
	for _, p := range ps {
		if p.Mode == string(loadgen.OpenLoop) {
			out = append(out, p)
		}
	}
	return out
}

// capacityPlan searches for the highest rate at which every SLO holds.
// Each probe is a point in the results; an incomplete probe (Ctrl-C) ends
// the search without a verdict on it.
type capacityPlan struct {
	min, max, precision float64
	slos                []suite.SLO
}

// offeredCapacity records the rate a capacity's passing probe offered
// when its arrivals fell short of the nominal rate beyond their own noise:
// the server held its SLOs at what it was shown, and a headline of "14.5
// req/s" from a probe that offered 12 claims more than was tested. Rate
// stays the probe's (its point is judged by it).
func offeredCapacity(s *suite.Suite, c *result.Capacity, pt *result.Point) {
	off, ok := offered.Judge(s, pt, 1)
	if !ok || !off.Below {
		return
	}
	got := sweep.RoundRate(off.Offered)
	if got <= 0 || got >= c.Rate {
		return
	}
	c.Offered = got
}

// inconclusiveProbe ends a capacity search at a probe that did not measure
// the server, even after its reruns.
type inconclusiveProbe struct {
	rate float64
	why  string
}

func (e *inconclusiveProbe) Error() string {
	return fmt.Sprintf("the probe at %g req/s did not measure the server: %s", e.rate, e.why)
}

// maxLengthen bounds how far a capacity probe is lengthened to settle
// its verdict: two more probes, at twice and four times the duration,
// cut the offered rate's noise to half of the first probe's.
const maxLengthen = 4

// unsettled says why a probe's verdict cannot be credited to its rate:
// its arrivals strayed from the rate beyond their noise in the direction
// that favours the verdict. A pass from a probe that offered less than
// its rate, or a failure from one that offered more, was shown another
// load than the one it is recorded at; a stray the other way only makes
// the verdict safer. "" when the verdict stands.
func unsettled(s *suite.Suite, pt *result.Point, pass bool) string {
	off, ok := offered.Judge(s, pt, 1)
	if !ok || off.Below != pass {
		return ""
	}
	dir := "above"
	if off.Below {
		dir = "below"
	}
	verdict := "failed"
	if pass {
		verdict = "passed"
	}
	return fmt.Sprintf("the %g s probe %s having offered %.3g req/s, %.1f standard deviations %s its rate", pt.Window.Seconds, verdict, off.Offered, off.SDs, dir)
}

// settle probes rate until its verdict can be credited to it: a probe
// that unsettled rejects is discarded and run again at twice the
// duration, whose offered rate has √2 less relative noise and draws
// further arrivals, up to maxLengthen times the suite's duration. What
// each discarded probe showed is kept with the one that stands. run
// measures one probe; drop discards the last one measured (its point and
// the notes made of it).
func settle(s *suite.Suite, rate float64, run func(ld load) (*result.Point, error), drop func(), pass func(*result.Point) bool) (*result.Point, error) {
	ld := load{mode: loadgen.OpenLoop, rate: rate, arrivalStream: int(math.Round(rate * 1000)), lengthen: 1}
	for {
		pt, err := run(ld)
		if err != nil || !pt.Valid() || pt.Incomplete || ld.lengthen >= maxLengthen {
			return pt, err
		}
		why := unsettled(s, pt, pass(pt))
		if why == "" {
			return pt, nil
		}
		var before []string
		if pt.Validity != nil {
			before = pt.Validity.Reruns
		}
		ld.lengthen *= 2
		// A stream of its own: the same stream cut later would begin with
		// the discarded probe's arrivals, diluting their stray, not
		// replacing it.
		ld.arrivalStream += lengthenStreams
		ld.earlier = append(slices.Clone(before), fmt.Sprintf("%s; lengthened to %d times the suite's duration, with arrivals drawn afresh", why, ld.lengthen))
		drop()
	}
}

func (p *capacityPlan) run(ctx context.Context, ex *executor) error {
	byRate := map[float64]*result.Point{}
	pass := func(pt *result.Point) bool {
		for _, v := range slo.Evaluate(p.slos, []result.Point{*pt}) {
			if !v.Pass {
				return false
			}
		}
		return true
	}
	probe := func(ctx context.Context, rate float64) (bool, error) {
		// A stream per rate, so a rate probed again in another run draws
		// the same arrivals.
		notes := len(ex.f.Notes)
		var unknownNoted bool
		var telemetryNoted map[int]bool
		run := func(ld load) (*result.Point, error) {
			if !ex.startAt.IsZero() {
				ld.lengthen = maxLengthen // aligned shards cannot measure again: none settles
			}
			notes = len(ex.f.Notes)
			unknownNoted, telemetryNoted = ex.unknownMetricsNoted, maps.Clone(ex.telemetryNoted)
			return ex.run(ctx, ld, PointInfo{Index: len(ex.f.Points), Trial: 1})
		}
		drop := func() {
			// The probe, its notes, and the marks that its one-time notes
			// were made: the probe that stands makes them again.
			ex.f.Points = ex.f.Points[:len(ex.f.Points)-1]
			ex.f.Notes = ex.f.Notes[:notes]
			ex.unknownMetricsNoted, ex.telemetryNoted = unknownNoted, telemetryNoted
		}
		pt, err := settle(ex.s, rate, run, drop, pass)
		if err != nil {
			return false, err
		}
		byRate[rate] = pt
		if !pt.Valid() {
			// Neither side of the bracket: the search cannot go on from it.
			return false, &inconclusiveProbe{rate: rate, why: strings.Join(pt.Validity.Invalid, "; ")}
		}
		return pass(pt) && !pt.Incomplete, nil
	}
	c, err := sweep.Search(ctx, p.min, p.max, p.precision, probe)
	if ip := (*inconclusiveProbe)(nil); errors.As(err, &ip) {
		// The capacity is not known: said so, not guessed from the probes
		// that happened to measure the server.
		c, err = &result.Capacity{Bound: result.CapacityInconclusive, Probes: len(byRate),
			Why: fmt.Sprintf("the probe at %g req/s did not measure the server: %s", ip.rate, ip.why)}, nil
	}
	if c != nil && c.Rate > 0 {
		if pt := byRate[c.Rate]; pt != nil {
			c.OutputThroughput = pt.Throughput.OutputTokens
			c.Cost = pt.Cost
			offeredCapacity(ex.s, c, pt)
		}
	}
	ex.f.Capacity = c
	ex.f.Knee = sweep.Knee(ex.f.Points)
	return err
}
