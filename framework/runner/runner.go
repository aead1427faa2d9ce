// Package runner runs a loaded suite end to end: it opens the target, runs
// every sweep point through the load generator, checks the SLOs and returns
// the results file.
package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/benchci/benchci/framework/client"
	"github.com/benchci/benchci/framework/cost"
	"github.com/benchci/benchci/framework/loadgen"
	"github.com/benchci/benchci/framework/metrics"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/slo"
	"github.com/benchci/benchci/framework/suite"
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
	f.SLOs = slo.Evaluate(s.SLOs, f.Points)
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

	sw := s.Sweep
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
			cfg := loadgen.Config{
				Mode: sw.Kind, MaxConcurrency: sw.MaxConcurrency,
				Warmup: sw.Warmup.D(), Duration: sw.Duration.D(), Requests: sw.Requests,
				Goodput:  metrics.Criteria{TTFT: s.Goodput["ttft"].D(), TPOT: s.Goodput["tpot"].D(), E2E: s.Goodput["e2e"].D()},
				Progress: &loadgen.Progress{},
			}
			p := result.Point{Mode: sw.Kind, Trial: trial + 1}
			if sw.Kind == "rate" {
				cfg.Rate = sw.Rates[i]
				// Each point draws its own arrivals, the same in every run.
				cfg.Arrivals, err = workload.NewProcess(s.Workload.Arrival, cfg.Rate, workload.ArrivalSource(s.Workload.Seed, i), trace)
				if err != nil {
					return fmt.Errorf("suite %s: %w", s.Name, err)
				}
				p.Rate = cfg.Rate
				p.Label = "rate=" + strconv.FormatFloat(cfg.Rate, 'g', -1, 64)
			} else {
				cfg.Concurrency = sw.Concurrencies[i]
				p.Concurrency = cfg.Concurrency
				p.Label = "concurrency=" + strconv.Itoa(cfg.Concurrency)
			}
			info := PointInfo{Label: p.Label, Index: trial*levels + i, Total: total, Trial: trial + 1, Planned: cfg.Warmup + cfg.Duration}
			if opts.Observer != nil {
				opts.Observer.PointStarted(info, cfg.Progress)
			}
			src, err := source(s, cl, trace)
			if err != nil {
				return fmt.Errorf("suite %s: %w", s.Name, err)
			}
			out, err := loadgen.Run(ctx, cl, cfg, src)
			if err != nil {
				return fmt.Errorf("suite %s: %s: %w", s.Name, p.Label, err)
			}
			p.Point, p.Schedule, p.Incomplete = out.Point, out.Schedule, out.Incomplete
			if s.Cost != nil {
				c := cost.At(*s.Cost, p.Throughput.OutputTokens, p.Throughput.TotalTokens)
				p.Cost = &c
			}
			f.Points = append(f.Points, p)
			if opts.Observer != nil {
				opts.Observer.PointFinished(info, &f.Points[len(f.Points)-1])
			}
		}
	}
	return nil
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
