package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/cost"
	"github.com/benchci/benchci/internal/engine"
	"github.com/benchci/benchci/internal/fdlimit"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/requestlog"
	"github.com/benchci/benchci/internal/structured"
	"github.com/benchci/benchci/internal/telemetry"
	"github.com/benchci/benchci/internal/workload"
)

// maxPromptOff is the share of prompts more than 5% off their target
// above which a point is flagged.
const maxPromptOff = 0.05

// executor runs single load points of one suite and appends them to f.
type executor struct {
	s    *suite.Suite
	sess *session
	wl   *prepared
	obs  Observer
	f    *result.File
	// points counts the points run, for relaunching before all but the first.
	points int
	// unknownMetricsNoted: the note on unknown /metrics names is made once.
	unknownMetricsNoted bool
	// telemetryNoted: the note on a failing telemetry endpoint, once each.
	telemetryNoted map[int]bool
	// requests, when set, records every request sent.
	requests *requestlog.Writer
	// turn, when set, is yielded between points (interleaved variants).
	turn Turn
	// reruns bounds how often a trial that did not measure the server is
	// measured again.
	reruns int
	// swapServers stops a launched server before handing the turn on.
	swapServers bool
	// judged, when set, sees each attempt's validity before it is acted
	// on (tests: a stalled machine on demand).
	judged func(attempt int, v *result.Validity)
	// now is the clock a point's rerun deadline is kept by.
	now func() time.Time
	// shard is this machine's part of every point; startAt and pointGap
	// align the points of all shards on the wall clock.
	shard    loadgen.Shard
	startAt  time.Time
	pointGap time.Duration
	// virtual, when set, replays the points in simulated time.
	virtual *virtualRun
}

// run measures one point and returns it as stored in f: ready the server,
// configure the load, measure it (again while an attempt measured this
// machine rather than the server), then annotate and store it.
func (ex *executor) run(ctx context.Context, ld load, info PointInfo) (*result.Point, error) {
	fresh, err := ex.ready(ctx)
	if err != nil {
		return nil, err
	}
	ex.points++
	cfg, p, err := ex.pointConfig(ld, info.Trial)
	if err != nil {
		return nil, err
	}
	info.Label, info.Planned = p.Label, cfg.Warmup+cfg.Duration
	a := ex.newAttempts(cfg, ld, info, fresh)
	if p, err = ex.attempts(ctx, a, p); err != nil {
		return nil, err
	}
	ex.annotate(&p)
	ex.f.Points = append(ex.f.Points, p)
	last := &ex.f.Points[len(ex.f.Points)-1]
	if ex.obs != nil {
		ex.obs.PointFinished(a.info, last)
	}
	return last, a.stopped
}

// ready readies the server for a point after the first: the turn handed
// on and back (fresh: the server was relaunched meanwhile), a server
// launched per point relaunched, and a launched server's exit noticed.
func (ex *executor) ready(ctx context.Context) (fresh bool, err error) {
	if ex.turn != nil && ex.points > 0 {
		if fresh, err = ex.yield(ctx); err != nil {
			return false, err
		}
	}
	if ex.sess.perPoint() && ex.points > 0 && !fresh {
		if err := ex.sess.relaunch(ctx); err != nil {
			return false, err
		}
	}
	if proc := ex.sess.tg.Process; proc != nil && proc.Exited() {
		return false, errServerDied
	}
	return fresh, nil
}

// pointConfig is the load generator's config for the point ld, the
// ex.points-th, and the point as it starts, labeled.
func (ex *executor) pointConfig(ld load, trial int) (loadgen.Config, result.Point, error) {
	s := ex.s
	sw := s.Sweep
	cfg := loadgen.Config{
		Mode: ld.mode, MaxConcurrency: sw.MaxConcurrency,
		Warmup: sw.Warmup.D(), Duration: sw.Duration.D() * time.Duration(max(ld.lengthen, 1)), Requests: sw.Requests,
		Goodput:  recorder.Criteria{TTFT: s.Goodput[metric.TTFT].D(), TPOT: s.Goodput[metric.TPOT].D(), E2E: s.Goodput[metric.E2E].D()},
		Progress: &loadgen.Progress{},
		Retry:    retryPolicy(s),
		Shard:    ex.shard,
	}
	p := result.Point{Mode: string(ld.mode), Trial: trial}
	if st := s.Workload.Structured; st != nil {
		chk, err := structured.Compile(st.Kind, st.Name, st.Schema)
		if err != nil {
			return cfg, p, fmt.Errorf("workload.structured: %w", err)
		}
		cfg.Check = func(res *client.Result) bool { return chk.Check(res.ToolName, res.ToolArgs, res.Text) }
	}
	if !ex.startAt.IsZero() {
		slot := cfg.Warmup + cfg.Duration + ex.pointGap
		cfg.StartAt = ex.startAt.Add(time.Duration(ex.points-1) * slot)
	}
	switch ld.mode {
	case loadgen.OpenLoop:
		if err := ex.openLoad(&cfg, &p, ld); err != nil {
			return cfg, p, err
		}
	case loadgen.ClosedLoop:
		// The shards' workers sum to the level, and so do their requests.
		cfg.Concurrency = ex.shard.Split(ld.concurrency)
		if cfg.Requests > 0 {
			cfg.Requests = ex.shard.Split(cfg.Requests)
		}
		p.Concurrency = ld.concurrency
		p.Label = "concurrency=" + strconv.Itoa(ld.concurrency)
	}
	return cfg, p, nil
}

// openLoad configures an open-loop point: its rate, its cap on requests
// in flight, and its arrivals.
func (ex *executor) openLoad(cfg *loadgen.Config, p *result.Point, ld load) error {
	s := ex.s
	cfg.Rate, cfg.AllAtOnce = ld.rate, ld.allAtOnce
	cfg.StopSaturated = s.Sweep.StopsSaturated()
	if cfg.MaxConcurrency == 0 && ex.virtual == nil {
		// Open loop has no natural bound on requests in flight; past the
		// descriptor limit the client's own dials fail. The cap keeps
		// them waiting instead, and the point is flagged if it bit.
		cfg.MaxConcurrency, cfg.DescriptorLimit = fdlimit.MaxConns()
	}
	if ld.allAtOnce {
		// Rate stays 0 in the result (JSON has no infinity); the label
		// says what vLLM's flag says.
		p.Label = "rate=inf"
		return nil
	}
	// Each point draws its own arrivals, the same in every run.
	var err error
	cfg.Arrivals, err = workload.NewArrivals(s.Workload.Arrival, cfg.Rate, s.Workload.Seed, ld.arrivalStream, ex.wl.srcs.Trace)
	if err != nil {
		return err
	}
	if r := s.Sweep.Ramp; r != nil {
		cfg.Arrivals = workload.Ramped(cfg.Arrivals, cfg.Rate, *r)
	}
	p.Rate = cfg.Rate
	p.Label = "rate=" + strconv.FormatFloat(cfg.Rate, 'g', -1, 64)
	return nil
}

// pointAttempts is what a point's attempts share: the first, and the
// reruns of any that measured this machine rather than the server.
type pointAttempts struct {
	cfg  loadgen.Config
	info PointInfo
	seq  int // the point's place in the suite's sequence of prompts
	// reruns bounds the reruns; discarded holds why each attempt was,
	// the first prior of them before this call.
	reruns    int
	discarded []string
	prior     int
	// began is when the first attempt started; deadline, once it ended,
	// when no rerun starts any more.
	began    time.Time
	deadline time.Duration
	// fresh: the server was relaunched since the last attempt.
	fresh bool
	// stopped, when set, ended the point and the target's remaining ones.
	stopped error
}

func (ex *executor) newAttempts(cfg loadgen.Config, ld load, info PointInfo, fresh bool) *pointAttempts {
	// A trial that measured this machine rather than the server is measured
	// again, up to the suite's reruns: the same requests, the same arrivals.
	// Aligned shards cannot: the others have moved on.
	reruns := ex.reruns
	if !ex.startAt.IsZero() {
		reruns = 0
	}
	// Attempts discarded before this call (a capacity probe measured again,
	// longer) count with this call's own: in the requests file, the
	// progress and the validity's list.
	discarded := slices.Clone(ld.earlier)
	info.Rerun = len(discarded)
	info.Virtual = ex.virtual != nil
	return &pointAttempts{cfg: cfg, info: info, seq: ex.points - 1, reruns: reruns, discarded: discarded, prior: len(discarded), began: ex.now(), fresh: fresh}
}

// attempts measures the point p until an attempt stands, and returns it
// with its validity.
func (ex *executor) attempts(ctx context.Context, a *pointAttempts, p result.Point) (result.Point, error) {
	for attempt := 0; ; attempt++ {
		q := p
		a.cfg.Progress = &loadgen.Progress{}
		if rl := ex.requests; rl != nil {
			label, trial, rerun := p.Label, a.info.Trial, a.prior+attempt
			a.cfg.OnSample = func(s recorder.Sample) { rl.Add(label, trial, rerun, s) }
		}
		// A rerun within this call repeats its attempt; a capacity probe
		// measured again longer (prior) is a new point, relaunched above
		// where the session does so, with prompts of its own.
		again := attempt > 0
		if again && ex.sess.perPoint() && !a.fresh {
			// A rerun starts as the attempt it replaces did: a fresh server.
			if err := ex.sess.relaunch(ctx); err != nil {
				return p, err
			}
		}
		a.fresh = false
		// A rerun sends the discarded attempt's prompts again: the
		// server's prefix cache is emptied first, so that it does not
		// serve them from what the discarded attempt left.
		out, err := ex.measure(ctx, a.cfg, &q, a.info, a.seq, again)
		if err != nil && (out == nil || !errors.Is(err, errServerDied)) {
			return p, fmt.Errorf("%s: %w", p.Label, err)
		}
		q.Measured, q.Schedule, q.Incomplete = out.Measured, out.Schedule, out.Incomplete
		v := out.Validity
		if ex.judged != nil {
			ex.judged(attempt, &v)
		}
		if err != nil {
			// The server died: what the point measured until then is kept,
			// marked incomplete, and the target's remaining points end.
			v.Reruns = a.discarded
			q.Incomplete, q.Validity = true, &v
			a.stopped = fmt.Errorf("%s: %w", p.Label, err)
			return q, nil
		}
		again, err = ex.rerun(ctx, a, attempt, &q, &v, out.Incomplete, out.Final)
		if err != nil {
			return p, err
		}
		if !again {
			v.Reruns = a.discarded
			q.Validity = &v
			return q, nil
		}
	}
}

// rerun says whether the attempt q, judged v, is measured again: it did
// not measure the server, and neither the reruns nor their deadline are
// spent nor the point stopped. If so it reports the attempt discarded and
// hands the turn on.
func (ex *executor) rerun(ctx context.Context, a *pointAttempts, attempt int, q *result.Point, v *result.Validity, incomplete bool, final string) (bool, error) {
	if attempt == 0 {
		a.deadline = rerunDeadline(a.info.Planned, ex.now().Sub(a.began), a.reruns)
	}
	if len(v.Invalid) == 0 || attempt >= a.reruns {
		return false, nil
	}
	if final != "" {
		v.Invalid = append(v.Invalid, "not measured again: "+final)
		return false, nil
	}
	if took := ex.now().Sub(a.began); took >= a.deadline {
		v.Invalid = append(v.Invalid, fmt.Sprintf("no rerun after attempt %d: the point's attempts took %v, past their deadline of %v", attempt+1, took.Round(time.Second), a.deadline.Round(time.Second)))
		return false, nil
	}
	if ctx.Err() != nil || incomplete {
		return false, nil
	}
	a.discarded = append(a.discarded, strings.Join(v.Invalid, "; "))
	if ex.obs != nil {
		q.Validity = v
		a.info.Discarded = true
		ex.obs.PointFinished(a.info, q)
		a.info.Discarded = false
	}
	if ex.turn != nil {
		// Interleaved variants keep their turns: the others measure
		// while this machine settles.
		var err error
		if a.fresh, err = ex.yield(ctx); err != nil {
			return false, err
		}
	}
	a.info.Rerun = a.prior + attempt + 1
	return true, nil
}

// annotate adds to a measured point what its figures imply: the queue's
// wait, the client's overhead, notes on prompts off their targets and
// others, and its cost.
func (ex *executor) annotate(p *result.Point) {
	s := ex.s
	if st, ttft := p.ServerTimings, p.Latency[metric.TTFT]; st != nil && ttft.Count > 0 && ttft.Mean > st.PromptMsMean {
		// The difference the server timings' line prints, recorded with
		// the queue it measures (time in transit and in the client too).
		if p.Queue == nil {
			p.Queue = &result.Queue{}
		}
		p.Queue.WaitMsMean = ttft.Mean - st.PromptMsMean
	}
	// A shard's requests are a part of what the server's own mean covers
	// (every shard's): the two cannot be set against each other.
	if ex.shard.Count <= 1 {
		var overheadNote string
		if p.Overhead, overheadNote = serverOverhead(p); overheadNote != "" {
			ex.f.Notes = append(ex.f.Notes, p.Label+": "+overheadNote)
		}
	}
	if n, off := p.Tokens.Prompt.Count, p.Tokens.PromptMismatch; s.Workload.Prompts.Kind.Synthetic() && n > 0 && float64(off) > maxPromptOff*float64(n) {
		// The server's own counts say the prompts missed their targets:
		// the calibration did not fit this server's tokenizer.
		why := ""
		if ex.wl.calFailed != "" {
			why = " (the prompt calibration failed: see its note)"
		}
		if a := p.Tokens.PromptAsked; a != nil {
			why += fmt.Sprintf("; mean %.1f tokens asked, %.1f sent by the server's count", a.Mean, p.Tokens.Prompt.Mean)
		}
		ex.f.Notes = append(ex.f.Notes, fmt.Sprintf("%s: %d of %d prompts (%.0f%%) were more than 5%% off the tokens asked, by the server's usage: the figures are for other prompt lengths than the suite states%s", p.Label, off, n, 100*float64(off)/float64(n), why))
	}
	for _, n := range pointNotes(s, p, max(ex.shard.Count, 1)) {
		ex.f.Notes = append(ex.f.Notes, p.Label+": "+n)
	}
	cost.Price((*cost.Deployment)(s.Cost), s.TelemetryNames(), p)
}

// yield hands the turn to the other runs sharing the machine and waits for
// it to come back. Runs that launch their servers on one address in turn
// (ci --ab) stop theirs first and start it again after: fresh reports
// that it did.
func (ex *executor) yield(ctx context.Context) (fresh bool, err error) {
	swap := ex.swapServers && ex.sess.st.Launch != nil
	if swap {
		ex.sess.tg.Close()
	}
	if err := ex.turn.Yield(ctx); err != nil {
		return false, err
	}
	if swap {
		return true, ex.sess.relaunch(ctx)
	}
	return false, nil
}

// errServerDied ends a point, and the target's remaining points, when a
// launched server exits while it runs.
var errServerDied = errors.New("the launched server exited during the run; its remaining points were not run")

// measure runs one attempt at a point into p (its server, telemetry and
// engine figures) and returns the load generator's outcome.
func (ex *executor) measure(ctx context.Context, cfg loadgen.Config, p *result.Point, info PointInfo, seq int, rerun bool) (*loadgen.Outcome, error) {
	if ex.virtual != nil {
		return ex.measureVirtual(ctx, cfg, p, info, seq, rerun)
	}
	if ex.obs != nil {
		ex.obs.PointStarted(info, cfg.Progress)
	}
	src, err := ex.wl.source(seq, false)
	if err != nil {
		return nil, err
	}
	if ex.s.Sweep.ResetPrefixCache || rerun {
		p.PrefixCacheReset = engine.ResetPrefixCache(ctx, ex.sess.tg.Info.URL)
	}
	sampler := ex.sampleServer(ctx, &cfg)
	var tel []*telemetry.Sampler
	for _, t := range ex.s.Telemetry {
		tel = append(tel, telemetry.Start(ctx, telemetry.Endpoint{Name: t.Name, URL: t.URL, Interval: t.Interval.D(), Gauges: t.Gauges}))
	}
	runCtx, died, cancel := ex.watchProcess(ctx)
	defer cancel(nil)
	watch := ex.watchServer(runCtx)
	out, err := loadgen.Run(runCtx, ex.sess.cl, cfg, src)
	if out != nil {
		judgeServer(watch, &out.Validity)
	} else if watch != nil {
		watch.Stop()
	}
	if died && context.Cause(runCtx) == errServerDied {
		err = errServerDied
	}
	ex.telemetryFigures(tel, p)
	if sampler != nil {
		ex.serverFigures(sampler, cfg.Warmup, p)
	}
	return out, err
}

// sampleServer starts reading the server's /metrics, when it has them
// (nil: it has not).
func (ex *executor) sampleServer(ctx context.Context, cfg *loadgen.Config) *engine.Sampler {
	if !ex.sess.metrics {
		return nil
	}
	sampler := engine.Sample(ctx, ex.sess.tg.Info.URL, time.Second, cfg.Progress.InFlight.Load)
	if cfg.Warmup > 0 {
		// The server's counters are read again when the measured
		// window starts, so that the warm-up's requests stay out of
		// them. Without a warm-up the first reading, taken before any
		// request went, is the window's start.
		cfg.OnWindow = sampler.From
	}
	return sampler
}

// watchProcess returns the context a point runs under: for a launched
// server, one canceled with errServerDied when it exits (watched: true),
// so that the point ends at once rather than sending its remaining
// requests to a closed port. The caller calls cancel when the point ends.
func (ex *executor) watchProcess(ctx context.Context) (runCtx context.Context, watched bool, cancel context.CancelCauseFunc) {
	proc := ex.sess.tg.Process
	if proc == nil {
		return ctx, false, func(error) {}
	}
	runCtx, cancel = context.WithCancelCause(ctx)
	died := proc.Done()
	go func() {
		select {
		case <-died:
			cancel(errServerDied)
		case <-runCtx.Done():
		}
	}()
	return runCtx, true, cancel
}

// telemetryFigures stops the telemetry samplers and puts their figures
// into p; an endpoint that failed is noted once.
func (ex *executor) telemetryFigures(tel []*telemetry.Sampler, p *result.Point) {
	for i, ts := range tel {
		figs, terr := ts.Stop()
		var dropped *telemetry.Dropped
		if errors.As(terr, &dropped) {
			// Implausible readings were left out; the rest stands, and
			// the point says what was dropped.
			if p.Telemetry == nil {
				p.Telemetry = map[string]float64{}
			}
			maps.Copy(p.Telemetry, figs)
			ex.f.Notes = append(ex.f.Notes, fmt.Sprintf("%s: %v", p.Label, terr))
			continue
		}
		if terr != nil {
			if !ex.telemetryNoted[i] {
				if ex.telemetryNoted == nil {
					ex.telemetryNoted = map[int]bool{}
				}
				ex.telemetryNoted[i] = true
				ex.f.Notes = append(ex.f.Notes, fmt.Sprintf("%s: %v: no telemetry figures from it", p.Label, terr))
			}
			continue
		}
		if p.Telemetry == nil {
			p.Telemetry = map[string]float64{}
		}
		maps.Copy(p.Telemetry, figs)
	}
}

// serverFigures stops the /metrics sampler and puts the server's figures
// and queue into p.
func (ex *executor) serverFigures(sampler *engine.Sampler, warmup time.Duration, p *result.Point) {
	p.Server = sampler.Stop()
	p.Queue = nil // a rerun's attempt starts afresh
	if peak, n := sampler.Held(); n > 0 {
		p.Queue = &result.Queue{HeldPeak: peak, Scrapes: n}
		if _, ok := p.Server["waiting_peak"]; ok {
			p.Queue.GaugeBlind = ex.sess.waitingBlind
		}
	}
	switch {
	case len(p.Server) == 0:
	case !sampler.FromWindow() && warmup > 0:
		p.ServerFrom = "point"
	default:
		p.ServerFrom = "window"
	}
	if names := sampler.Unknown(); names != nil && !ex.unknownMetricsNoted {
		ex.unknownMetricsNoted = true
		ex.f.Notes = append(ex.f.Notes, fmt.Sprintf("the server's /metrics were read, but none of their names is one benchci knows (%s, ...): no server-side figures", strings.Join(names, ", ")))
	}
}

// rerunDeadline is the time a point's attempts may take in all before no
// rerun starts: each planned attempt (its warm-up and duration, or what
// the first took where the plan is a count of requests) and RerunSlack.
// Attempts that overrun their plan (answers that drag on a machine that
// stays busy) end the reruns before their count does.
func rerunDeadline(planned, first time.Duration, reruns int) time.Duration {
	if planned <= 0 {
		planned = first
	}
	return time.Duration(reruns+1)*planned + RerunSlack
}
