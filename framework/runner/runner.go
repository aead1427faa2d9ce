// Package runner runs a loaded suite end to end: it opens the target, runs
// every sweep point through the load generator, checks the SLOs and returns
// the results file.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/benchci/benchci/framework/client"
	"github.com/benchci/benchci/framework/cost"
	"github.com/benchci/benchci/framework/loadgen"
	"github.com/benchci/benchci/framework/metrics"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/slo"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/sweep"
	"github.com/benchci/benchci/framework/target"
	"github.com/benchci/benchci/framework/workload"
)

// Observer follows a run, e.g. to show progress. Both calls come from the
// goroutine that called Run.
type Observer interface {
	// PointStarted is called before a point runs; prog is live while it runs.
	PointStarted(pt PointInfo, prog *loadgen.Progress)
	// PointFinished is called with the point's result.
	PointFinished(pt PointInfo, p *result.Point)
}

// PointInfo describes a point about to run.
type PointInfo struct {
	Label string
	// Index counts from 0 over all points of all trials; Total is their number.
	Index, Total int
	Trial        int
	// Planned is how long the point is meant to take (warm-up + duration).
	Planned time.Duration
}

// Options configure a run.
type Options struct {
	// Version is the tool version written into results.
	Version  string
	Observer Observer
}

// Run runs the suite. It always returns a results file holding what was
// measured; when the run failed or was stopped the file is marked
// incomplete and the error says why.
func Run(ctx context.Context, l *suite.Loaded, opts Options) (*result.File, error) {
	s := l.Suite
	f := &result.File{
		Schema:  result.Schema,
		Tool:    result.Tool{Name: "benchci", Version: opts.Version},
		Suite:   result.Suite{Name: s.Name, Path: l.Path, Hash: l.Hash, WorkloadHash: l.WorkloadHash, Definition: l.JSON},
		Started: time.Now().UTC(),
		Points:  []result.Point{},
	}
	err := run(ctx, l, opts, f)
	f.Finished = time.Now().UTC()
	f.SLOs = slo.Evaluate(s.SLOs, gated(f))
	if err != nil {
		f.Incomplete = true
		f.Error = err.Error()
		return f, err
	}
	if ctx.Err() != nil {
		f.Incomplete = true
		f.Error = "stopped: " + context.Cause(ctx).Error()
		return f, fmt.Errorf("suite %s: %w", s.Name, context.Cause(ctx))
	}
	return f, nil
}

func run(ctx context.Context, l *suite.Loaded, opts Options, f *result.File) error {
	s := l.Suite
	tg, err := target.Open(ctx, s.Target)
	if err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}
	defer tg.Close()
	f.Target = tg.Info

	cl, err := client.New(client.Options{
		BaseURL:   tg.Info.URL,
		API:       s.API,
		Model:     tg.Info.Model,
		APIKey:    tg.APIKey,
		IgnoreEOS: s.Request.IgnoreEOS,
		Extra:     s.Request.Extra,
		Timeout:   s.Request.Timeout.D(),
	})
	if err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}
	defer cl.CloseIdle()
	if err := preflight(ctx, cl); err != nil {
		return fmt.Errorf("suite %s: target %s: %w", s.Name, tg.Info.URL, err)
	}

	var trace *workload.Trace
	if s.Workload.Arrival.Kind == "trace" {
		if trace, err = workload.LoadTrace(s.Workload.Arrival.Path); err != nil {
			return fmt.Errorf("suite %s: %w", s.Name, err)
		}
	}

	pr := &pointRunner{s: s, cl: cl, trace: trace, opts: opts, f: f}
	sw := s.Sweep
	switch sw.Kind {
	case "capacity":
		return pr.capacity(ctx)
	case "rate", "concurrency":
	default:
		return fmt.Errorf("suite %s: unknown sweep kind %q", s.Name, sw.Kind)
	}
	levels := len(sw.Rates)
	if sw.Kind == "concurrency" {
		levels = len(sw.Concurrencies)
	}
	total := levels * s.Trials
	for trial := range s.Trials {
		// Trials run the whole sweep in turn rather than repeating each point
		// back to back, so slow drift spreads over all points alike.
		for i := range levels {
			if ctx.Err() != nil {
				return nil
			}
			ld := load{mode: sw.Kind, arrivalStream: i}
			if sw.Kind == "rate" {
				ld.rate = sw.Rates[i]
			} else {
				ld.concurrency = sw.Concurrencies[i]
			}
			if _, err := pr.run(ctx, ld, PointInfo{Index: trial*levels + i, Total: total, Trial: trial + 1}); err != nil {
				return err
			}
		}
	}
	f.Knee = sweep.Knee(f.Points)
	return nil
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

// load is one point's load.
type load struct {
	mode        string
	rate        float64
	concurrency int
	// arrivalStream picks the point's seeded arrival stream.
	arrivalStream int
}

// pointRunner runs single points of one suite and appends them to f.
type pointRunner struct {
	s     *suite.Suite
	cl    *client.Client
	trace *workload.Trace
	opts  Options
	f     *result.File
}

func (pr *pointRunner) run(ctx context.Context, ld load, info PointInfo) (*result.Point, error) {
	s := pr.s
	sw := s.Sweep
	cfg := loadgen.Config{
		Mode: ld.mode, MaxConcurrency: sw.MaxConcurrency,
		Warmup: sw.Warmup.D(), Duration: sw.Duration.D(), Requests: sw.Requests,
		Goodput:  metrics.Criteria{TTFT: s.Goodput["ttft"].D(), TPOT: s.Goodput["tpot"].D(), E2E: s.Goodput["e2e"].D()},
		Progress: &loadgen.Progress{},
	}
	p := result.Point{Mode: ld.mode, Trial: info.Trial}
	if ld.mode == "rate" {
		cfg.Rate = ld.rate
		// Each point draws its own arrivals, the same in every run.
		var err error
		cfg.Arrivals, err = workload.NewProcess(s.Workload.Arrival, cfg.Rate, workload.ArrivalSource(s.Workload.Seed, ld.arrivalStream), pr.trace)
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", s.Name, err)
		}
		p.Rate = cfg.Rate
		p.Label = "rate=" + strconv.FormatFloat(cfg.Rate, 'g', -1, 64)
	} else {
		cfg.Concurrency = ld.concurrency
		p.Concurrency = cfg.Concurrency
		p.Label = "concurrency=" + strconv.Itoa(cfg.Concurrency)
	}
	info.Label, info.Planned = p.Label, cfg.Warmup+cfg.Duration
	if pr.opts.Observer != nil {
		pr.opts.Observer.PointStarted(info, cfg.Progress)
	}
	src, err := source(s, pr.cl, pr.trace)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", s.Name, err)
	}
	out, err := loadgen.Run(ctx, pr.cl, cfg, src)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %s: %w", s.Name, p.Label, err)
	}
	p.Point, p.Schedule, p.Incomplete = out.Point, out.Schedule, out.Incomplete
	if s.Cost != nil {
		c := cost.At(*s.Cost, p.Throughput.OutputTokens, p.Throughput.TotalTokens)
		p.Cost = &c
	}
	pr.f.Points = append(pr.f.Points, p)
	last := &pr.f.Points[len(pr.f.Points)-1]
	if pr.opts.Observer != nil {
		pr.opts.Observer.PointFinished(info, last)
	}
	return last, nil
}

// capacity searches for the highest rate at which every SLO holds. Each
// probe is a point in the results; an incomplete probe (Ctrl-C) ends the
// search without a verdict on it.
func (pr *pointRunner) capacity(ctx context.Context) error {
	sw := pr.s.Sweep
	byRate := map[float64]*result.Point{}
	probe := func(ctx context.Context, rate float64) (bool, error) {
		// A stream per rate, so a rate probed again in another run draws
		// the same arrivals.
		p, err := pr.run(ctx, load{mode: "rate", rate: rate, arrivalStream: int(math.Round(rate * 1000))},
			PointInfo{Index: len(pr.f.Points), Trial: 1})
		if err != nil {
			return false, err
		}
		byRate[rate] = p
		for _, v := range slo.Evaluate(pr.s.SLOs, []result.Point{*p}) {
			if !v.Pass {
				return false, nil
			}
		}
		return !p.Incomplete, nil
	}
	c, err := sweep.Search(ctx, sw.Min, sw.Max, sw.Precision, probe)
	if c != nil && c.Rate > 0 {
		if p := byRate[c.Rate]; p != nil {
			c.OutputThroughput = p.Throughput.OutputTokens
			c.Cost = p.Cost
		}
	}
	pr.f.Capacity = c
	pr.f.Knee = sweep.Knee(pr.f.Points)
	return err
}

// source returns the suite's request sequence, from its start: every point
// sends the same requests in the same order.
func source(s *suite.Suite, cl *client.Client, trace *workload.Trace) (loadgen.Source, error) {
	gen, err := workload.NewGenerator(s.Workload, trace)
	if err != nil {
		return nil, err
	}
	return func() (loadgen.Item, error) {
		r := gen.Next()
		body, err := cl.Body(r.Prompt, r.OutputTokens)
		if err != nil {
			return loadgen.Item{}, err
		}
		return loadgen.Item{Body: body, WantInput: r.InputTokens, WantOutput: r.OutputTokens}, nil
	}, nil
}

// preflight sends one short request so that a wrong URL, model or key fails
// the run at once with the server's own words, not as 100% errors later.
func preflight(ctx context.Context, cl *client.Client) error {
	body, err := cl.Body("Say hello.", 2)
	if err != nil {
		return err
	}
	var res client.Result
	cl.Do(ctx, body, "benchci-preflight", &res)
	if res.Err == client.ErrCanceled {
		return errors.New("stopped")
	}
	if !res.OK() {
		return fmt.Errorf("preflight request failed (%s): %s", res.Err, res.Detail)
	}
	return nil
}
