// Package runner runs a loaded suite end to end: it opens the target, runs
// every sweep point through the load generator, checks the SLOs and returns
// the results file.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/benchci/benchci/framework/client"
	"github.com/benchci/benchci/framework/cost"
	"github.com/benchci/benchci/framework/engine"
	"github.com/benchci/benchci/framework/loadgen"
	"github.com/benchci/benchci/framework/metrics"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/slo"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/sweep"
	"github.com/benchci/benchci/framework/target"
	"github.com/benchci/benchci/framework/tokenizer"
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
	// ServerLog is where a launched server's output goes.
	ServerLog string
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
	topts := target.Options{ServerLog: opts.ServerLog}
	tg, err := target.Open(ctx, s.Target, topts)
	if err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}
	// Always stopped: on success, on errors and on Ctrl-C alike. (A closure:
	// a per-point relaunch replaces tg.)
	defer func() { tg.Close() }()
	f.Target = tg.Info

	tokName := s.Tokenizer
	if tokName == "" {
		tokName = "words"
	}
	tok, err := tokenizer.Get(tokName)
	if err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}
	cl, err := client.New(client.Options{
		Counter:   tok,
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
	defer func() { timing(f, cl.Timing()) }()
	if err := preflight(ctx, cl); err != nil {
		return fmt.Errorf("suite %s: target %s: %w", s.Name, tg.Info.URL, err)
	}
	eng := engine.Detect(ctx, tg.Info.URL)
	f.Engine = &eng
	prof, known := engine.Lookup(eng.Name)
	cl.SetContinuousUsage(known && prof.ContinuousUsage)
	if known && s.Request.IgnoreEOS && !prof.IgnoreEOS {
		// The engine does not take ignore_eos: sending it risks a 400 from
		// strict servers, and lengths may now vary; the result says so.
		cl.SetIgnoreEOS(false)
		f.Notes = append(f.Notes, eng.Name+" does not support ignore_eos: output lengths may fall short of the request")
	}
	warm := func() error {
		if s.Target.Launch == nil {
			return nil
		}
		return warmup(ctx, cl, s.Target.Launch.WarmupRequests)
	}
	if err := warm(); err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}

	var srcs workload.Sources
	if s.Workload.Arrival.Kind == "trace" {
		if srcs.Trace, err = workload.LoadTrace(s.Workload.Arrival.Path); err != nil {
			return fmt.Errorf("suite %s: %w", s.Name, err)
		}
	}
	if k := s.Workload.Prompts.Kind; k == "sharegpt" || k == "jsonl" {
		if srcs.Dataset, err = workload.LoadDataset(k, s.Workload.Prompts.Path); err != nil {
			return fmt.Errorf("suite %s: %w", s.Name, err)
		}
	}
	if k := s.Workload.Prompts.Kind; s.Workload.Prompts.Calibrate && (k == "synthetic" || k == "shared_prefix") {
		cal, err := calibrate(ctx, cl)
		if err != nil && tokName != "words" {
			// No usage from the server: size prompts with the suite's
			// tokenizer instead, which cannot see the chat template.
			cal = calibrateOffline(tok)
			cal.Note = err.Error() + "; sized with tokenizer " + tokName + " instead (chat template tokens not included)"
			err = nil
		}
		f.Calibration = &cal
		if err != nil {
			f.Calibration.Note = err.Error()
		} else {
			srcs.Calibration = cal.Calibration
		}
	}
	// The generator is built once here so that a dataset or calibration
	// problem fails the run before any point starts.
	if _, err := workload.NewGenerator(s.Workload, srcs); err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}

	pr := &pointRunner{s: s, cl: cl, srcs: srcs, opts: opts, f: f, url: tg.Info.URL, metrics: eng.Metrics}
	if l := s.Target.Launch; l != nil && l.Per == "point" {
		// A fresh server for every point after the first, warmed up again.
		pr.restart = func(ctx context.Context) error {
			tg.Close()
			if tg, err = target.Open(ctx, s.Target, topts); err != nil {
				tg = &target.Target{}
				return err
			}
			return warm()
		}
	}
	defer func() {
		// A server that died takes its last words into the results.
		if tg.Process != nil && tg.Process.Exited() {
			f.ServerLog = tg.Process.Tail(30)
		}
	}()
	sw := s.Sweep
	switch sw.Kind {
	case "capacity":
		return pr.capacity(ctx)
	case "auto":
		return pr.auto(ctx)
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
	s    *suite.Suite
	cl   *client.Client
	srcs workload.Sources
	opts Options
	f    *result.File
	// restart, when set, relaunches the server before every point but the first.
	restart func(context.Context) error
	points  int
	// url and metrics: where the server is, and whether it serves /metrics.
	url     string
	metrics bool
}

func (pr *pointRunner) run(ctx context.Context, ld load, info PointInfo) (*result.Point, error) {
	s := pr.s
	if pr.restart != nil && pr.points > 0 {
		if err := pr.restart(ctx); err != nil {
			return nil, fmt.Errorf("suite %s: relaunch: %w", s.Name, err)
		}
	}
	pr.points++
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
		cfg.Arrivals, err = workload.NewProcess(s.Workload.Arrival, cfg.Rate, workload.ArrivalSource(s.Workload.Seed, ld.arrivalStream), pr.srcs.Trace)
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
	src, err := source(s, pr.cl, pr.srcs)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", s.Name, err)
	}
	var sampler *engine.Sampler
	if pr.metrics {
		sampler = engine.Sample(ctx, pr.url, time.Second)
	}
	out, err := loadgen.Run(ctx, pr.cl, cfg, src)
	if sampler != nil {
		p.Server = sampler.Stop()
	}
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

// auto runs a GuideLLM-style sweep: a synchronous point (one request at a
// time) and a throughput point (MaxConcurrency in flight) bound what the
// server can do; Points open-loop rates are then spread evenly between the
// two throughputs, both ends included.
func (pr *pointRunner) auto(ctx context.Context) error {
	sw := pr.s.Sweep
	limit := sw.MaxConcurrency
	if limit == 0 {
		limit = 256
	}
	sync, err := pr.run(ctx, load{mode: "concurrency", concurrency: 1}, PointInfo{Index: 0, Total: sw.Points + 2, Trial: 1})
	if err != nil || ctx.Err() != nil {
		return err
	}
	lo := sync.Throughput.Requests
	top, err := pr.run(ctx, load{mode: "concurrency", concurrency: limit}, PointInfo{Index: 1, Total: sw.Points + 2, Trial: 1})
	if err != nil || ctx.Err() != nil {
		return err
	}
	hi := top.Throughput.Requests
	if !(lo > 0) || !(hi > lo) {
		return fmt.Errorf("suite %s: auto sweep: synchronous throughput %.3g req/s, maximum %.3g: no range to sweep", pr.s.Name, lo, hi)
	}
	for i := range sw.Points {
		if ctx.Err() != nil {
			return nil
		}
		rate := sweep.RoundRate(lo + (hi-lo)*float64(i)/float64(sw.Points-1))
		if _, err := pr.run(ctx, load{mode: "rate", rate: rate, arrivalStream: i}, PointInfo{Index: i + 2, Total: sw.Points + 2, Trial: 1}); err != nil {
			return err
		}
	}
	pr.f.Knee = sweep.Knee(rateOnly(pr.f.Points))
	return nil
}

func rateOnly(ps []result.Point) []result.Point {
	var out []result.Point
	for _, p := range ps {
		if p.Mode == "rate" {
			out = append(out, p)
		}
	}
	return out
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
func source(s *suite.Suite, cl *client.Client, srcs workload.Sources) (loadgen.Source, error) {
	gen, err := workload.NewGenerator(s.Workload, srcs)
	if err != nil {
		return nil, err
	}
	return func() (loadgen.Item, error) { return item(cl, gen.Next()) }, nil
}

// item builds the bodies of a request and of its session's later turns.
func item(cl *client.Client, r workload.Request) (loadgen.Item, error) {
	var msgs []client.Message
	if r.System != "" {
		msgs = append(msgs, client.Message{Role: "system", Content: r.System})
	}
	for _, m := range r.History {
		msgs = append(msgs, client.Message{Role: m.Role, Content: m.Content})
	}
	body, err := cl.BodyMessages(append(msgs, client.Message{Role: "user", Content: r.Prompt}), r.OutputTokens)
	if err != nil {
		return loadgen.Item{}, err
	}
	it := loadgen.Item{Body: body, WantInput: r.InputTokens, WantOutput: r.OutputTokens, Think: r.Think}
	for _, f := range r.FollowUps {
		next, err := item(cl, f)
		if err != nil {
			return loadgen.Item{}, err
		}
		it.FollowUps = append(it.FollowUps, next)
	}
	return it, nil
}

// calibrateOffline fits the same line as calibrate with a local tokenizer.
func calibrateOffline(tok tokenizer.Counter) result.Calibration {
	cal, err := fit(func(prompt string) (int, error) { return tok.Count(prompt), nil })
	if err != nil {
		return result.Calibration{Calibration: oneTokenPerWord, Note: err.Error()}
	}
	return cal
}

// oneTokenPerWord is the calibration assumed when none could be measured.
var oneTokenPerWord = workload.Calibration{TokensPerWord: 1}

// Calibration probe sizes, in words: small enough to fit any context
// window (Ollama truncates prompts to 2048 tokens by default, silently).
var calibrateWords = [3]int{16, 64, 128}

// calibrate asks the target how many prompt tokens it counts for synthetic
// prompts of known word counts (see fit). Servers that report no usage
// cannot be calibrated.
func calibrate(ctx context.Context, cl *client.Client) (result.Calibration, error) {
	return fit(func(prompt string) (int, error) {
		body, err := cl.Body("", prompt, 1)
		if err != nil {
			return 0, err
		}
		var res client.Result
		cl.Do(ctx, body, "benchci-calibrate", &res)
		if !res.OK() && res.Err != client.ErrEmpty {
			return 0, fmt.Errorf("prompt calibration: request failed (%s): %s", res.Err, res.Detail)
		}
		if res.PromptTokens == 0 {
			return 0, errors.New("prompt calibration: the server reports no usage.prompt_tokens; prompts are sized at one token per word")
		}
		return res.PromptTokens, nil
	})
}

// fit counts the tokens of synthetic prompts of calibrateWords words and
// fits tokens = overhead + tokens_per_word x words. The overhead is the chat
// template's (or BOS) tokens; the slope is the tokenizer's view of our
// vocabulary. Three probes check the counts are linear: a server that
// truncates prompts fails the check instead of skewing every prompt.
func fit(count func(prompt string) (int, error)) (result.Calibration, error) {
	r := rand.New(rand.NewPCG(0xca11b, 1))
	var counts [3]int
	for i, n := range calibrateWords {
		c, err := count(workload.Prompt(n, r))
		if err != nil {
			return result.Calibration{Calibration: oneTokenPerWord}, err
		}
		counts[i] = c
	}
	w := calibrateWords
	slope := func(i, j int) float64 { return float64(counts[j]-counts[i]) / float64(w[j]-w[i]) }
	tpw, check := slope(0, 2), slope(0, 1)
	if tpw <= 0 || math.Abs(check/tpw-1) > 0.1 {
		return result.Calibration{Calibration: oneTokenPerWord}, fmt.Errorf("prompt calibration: %v words counted %v tokens, not a straight line (does the server truncate prompts?)", w, counts)
	}
	return result.Calibration{Calibration: workload.Calibration{Overhead: float64(counts[0]) - tpw*float64(w[0]), TokensPerWord: tpw}}, nil
}

// warmup sends n short requests, unmeasured, to a freshly started server.
func warmup(ctx context.Context, cl *client.Client, n int) error {
	body, err := cl.Body("", workload.Prompt(64, rand.New(rand.NewPCG(1, 1))), 16)
	if err != nil {
		return err
	}
	var res client.Result
	for i := range n {
		cl.Do(ctx, body, "benchci-warmup", &res)
		if !res.OK() {
			return fmt.Errorf("warm-up request %d of %d failed (%s): %s", i+1, n, res.Err, res.Detail)
		}
	}
	return nil
}

// preflight sends one short request so that a wrong URL, model or key fails
// the run at once with the server's own words, not as 100% errors later.
// It tries three times: one failure of a flaky server is the benchmark's
// to measure, not a reason to refuse it.
func preflight(ctx context.Context, cl *client.Client) error {
	body, err := cl.Body("", "Say hello.", 2)
	if err != nil {
		return err
	}
	var res client.Result
	for range 3 {
		cl.Do(ctx, body, "benchci-preflight", &res)
		if res.OK() {
			return nil
		}
		if res.Err == client.ErrCanceled {
			return errors.New("stopped")
		}
	}
	return fmt.Errorf("preflight request failed (%s): %s", res.Err, res.Detail)
}

// timing records where the run's chunk times came from, with a note when
// many were read times, which include the client's own delays.
func timing(f *result.File, t client.Timing) {
	total := t.Kernel + t.Read
	switch {
	case total == 0:
		return
	case t.Read == 0:
		f.Tool.Timing = "kernel receive stamps"
		return
	case t.Kernel == 0:
		f.Tool.Timing = "read times"
	default:
		f.Tool.Timing = fmt.Sprintf("kernel receive stamps for %.1f%% of chunks, read times for the rest", 100*float64(t.Kernel)/float64(total))
	}
	// The first packets on a machine can miss their stamp; a few are no
	// cause for a caveat.
	if float64(t.Read) > 0.01*float64(total) {
		f.Notes = append(f.Notes, "chunk times are the times reads returned, not kernel receive stamps (not Linux, or stamps unavailable): under heavy client load, TTFT and ITL include the client's own delay")
	}
}
