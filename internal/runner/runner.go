// Package runner runs a loaded suite end to end. The work is split by
// concern: a session owns the target and the client (open, preflight,
// engine recognition, warm-up, relaunch, stop); a prepared workload owns
// the request sequence (data files, calibration); a plan decides which load
// points run (an explicit sweep, an auto sweep, a capacity search); and an
// executor runs one point through the load generator into the results file.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/requestlog"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/slo"
	"github.com/benchci/benchci/internal/target"
	"github.com/benchci/benchci/internal/tokenizer"
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
	// Index counts from 0 over all points of all trials; Total is their
	// number (0 when the plan cannot know it, as in a capacity search).
	Index, Total int
	Trial        int
	// Planned is how long the point is meant to take (warm-up + duration).
	Planned time.Duration
	// Rerun counts the earlier attempts at this trial that were discarded
	// because they did not measure the server (0: the first attempt).
	// Discarded, in PointFinished, says this attempt is one of them: the
	// trial is measured again.
	Rerun     int
	Discarded bool
	// Virtual: the point is replayed in virtual time (run --virtual), so
	// Planned is simulated time, which the replay takes far less of.
	Virtual bool
}

// Options configure a run.
type Options struct {
	// Version is the tool version written into results.
	Version  string
	Observer Observer
	// ServerLog is where a launched server's output goes.
	ServerLog string
	// Requests, when set, gets one record per request sent.
	Requests *requestlog.Writer
	// Turn, when set, is this run's place in a rotation of runs sharing
	// the machine (interleaved variants): the run holds it while it
	// opens its target and measures a point, and yields it between points.
	Turn Turn
	// Calibration, when set, is shared by runs that must send the same
	// prompts (variants): the first run to calibrate stores its fit, and
	// the others use it instead of their own.
	Calibration *SharedCalibration
	// Salt, when set, is the prompt salt a suite that asks for a fresh one
	// each run (workload.prompts.salt: "run") uses: drawn once by the
	// caller for all the runs that must send the same prompts (variants,
	// an A/B pair). Unset, such a run draws its own.
	Salt string
	// Order is recorded with a variant's results.
	Order string
	// Shard, when its Count is above 1, runs only this machine's part of
	// every point (loadgen.Shard); benchci merge joins the parts.
	Shard loadgen.Shard
	// StartAt, when set, aligns the shards: point k's timeline starts at
	// StartAt + k x (warm-up + duration + PointGap) on every machine.
	StartAt  time.Time
	PointGap time.Duration
	// Reruns bounds how often a trial that did not measure the server (a
	// stalled machine, a client that fell behind) is measured again. What each discarded attempt showed is
	// recorded with the trial kept. 0: DefaultReruns; negative: none.
	Reruns int
	// StopBetweenTurns stops a launched server before the run hands its
	// Turn on, and starts it again when the turn comes back: runs whose
	// servers take one address (ci --ab's base and candidate) launch them
	// in turn.
	StopBetweenTurns bool
	// Virtual replays every point on the embedded simulator's engine in
	// simulated time (loadgen.RunVirtual) instead of measuring it over
	// HTTP: a planning mode, seconds for a suite of minutes. Only sim
	// targets can; suites using what the replay does not model are
	// refused (virtualRefusal). The results file is marked virtual.
	Virtual bool
	// judged, when set, sees each attempt's validity (tests).
	judged func(attempt int, v *result.Validity)
	// now, when set, is the clock a point's rerun deadline is kept by
	// (tests); time.Now otherwise.
	now func() time.Time
}

// DefaultReruns is how often a trial is measured again when it did not
// measure the server: a passing stall clears in one or two, a machine
// that stays busy does not, and its points end inconclusive.
const DefaultReruns = 2

// MaxReruns bounds Options.Reruns: a machine that stalls this many
// attempts in a row will not settle for the next.
const MaxReruns = 10

// RerunSlack is the time a point's attempts may take beyond their plan
// before no rerun starts: see rerunDeadline.
const RerunSlack = 2 * time.Minute

// DefaultPointGap is the time left between aligned points for the last
// requests of one to finish before the next starts.
const DefaultPointGap = 10 * time.Second

// Run runs in's suite. It always returns a results file holding what was
// measured; when the run failed or was stopped the file is marked
// incomplete and the error says why.
func Run(ctx context.Context, in Input, opts Options) (*result.File, error) {
	s := in.Suite
	t0 := time.Now()
	f := &result.File{
		Schema:   result.Schema,
		Counting: result.CountingRule, Figures: result.Figures,
		Tool:    result.Tool{Name: "benchci", Version: opts.Version},
		Suite:   in.record(opts.Order),
		Started: t0.UTC(),
		Points:  []result.Point{},
	}
	if sh := opts.Shard; sh.Count > 1 {
		f.Shard = &result.Shard{Index: sh.Index, Count: sh.Count, Started: f.Started}
		f.Shard.Host, _ = os.Hostname()
		if !opts.StartAt.IsZero() {
			at := opts.StartAt.UTC()
			f.Shard.StartAt = &at
		}
	}
	err := run(ctx, s, opts, f)
	// By the monotonic clock: a wall clock stepped back mid-run (NTP, a
	// VM resumed) would write a run that finished before it started,
	// which the reader refuses.
	f.Finished = f.Started.Add(time.Since(t0))
	if f.Shard != nil {
		f.Shard.Finished = f.Finished
	}
	slo.Judge(s, f)
	if err != nil {
		// The suite is named once, here, for every failure below.
		err = fmt.Errorf("suite %s: %w", s.RunName(), err)
		f.Incomplete = true
		f.Error = err.Error()
		return f, err
	}
	if ctx.Err() != nil {
		f.Incomplete = true
		f.Error = "stopped: " + context.Cause(ctx).Error()
		return f, fmt.Errorf("suite %s: %w", s.RunName(), context.Cause(ctx))
	}
	return f, nil
}

func run(ctx context.Context, s *suite.Suite, opts Options, f *result.File) (err error) {
	if len(s.Variants) > 0 {
		return errors.New("the suite has variants: each runs as a suite of its own (RunVariants)")
	}
	pl, err := planFor(s)
	if err != nil {
		return err
	}
	var virtual *virtualRun
	if opts.Virtual {
		if err := virtualRefusal(s, opts); err != nil {
			return err
		}
		if virtual, err = newVirtualRun(s, f.Started); err != nil {
			return err
		}
		f.Virtual = true
		f.Notes = append(f.Notes, VirtualNote)
	}
	if err := shardable(s, opts.Shard); err != nil {
		return err
	}
	if t := opts.Turn; t != nil {
		if err := t.Take(ctx); err != nil {
			return nil // stopped while waiting: Run reports the cause
		}
	}
	sess, err := openSession(ctx, s, opts.ServerLog, f)
	if err != nil {
		return err
	}
	// Always stopped: on success, on errors and on Ctrl-C alike. A server
	// that died during the run makes the run an error, whatever was
	// measured before.
	defer func() {
		if died := sess.close(f); died != nil && err == nil {
			err = died
		}
	}()
	wl, err := prepare(ctx, s, sess, f, opts.Calibration, opts.Salt)
	if err != nil {
		return err
	}
	ex := &executor{s: s, sess: sess, wl: wl, obs: opts.Observer, f: f, requests: opts.Requests, turn: opts.Turn,
		shard: opts.Shard, startAt: opts.StartAt, pointGap: cmp.Or(opts.PointGap, DefaultPointGap), reruns: opts.Reruns, judged: opts.judged, now: opts.now,
		swapServers: opts.StopBetweenTurns, virtual: virtual}
	if ex.now == nil {
		ex.now = time.Now
	}
	switch {
	case virtual != nil:
		// A replay is the same every time: measuring it again would
		// give the same figures.
		ex.reruns = 0
	case ex.reruns == 0:
		ex.reruns = DefaultReruns
	case ex.reruns < 0:
		ex.reruns = 0
	case ex.reruns > MaxReruns:
		return fmt.Errorf("%d reruns, more than the %d a trial may take", ex.reruns, MaxReruns)
	}
	return pl.run(ctx, ex)
}

// shardable refuses to split a suite whose points cannot be split: an auto
// sweep and a capacity search choose each point from the last one's
// figures, which no single shard has.
func shardable(s *suite.Suite, sh loadgen.Shard) error {
	if sh.Count <= 1 {
		return nil
	}
	if k := s.Target.Kind; k != suite.TargetURL {
		// Each shard would start its own server: N servers each taking a
		// 1/N load, not one taking the whole.
		return fmt.Errorf("a %s target runs inside each shard, so each would measure its own server under a part of the load: shard against one shared server (a url target)", k)
	}
	switch s.Sweep.Kind {
	case suite.SweepAuto, suite.SweepCapacity:
		return fmt.Errorf("a %s sweep chooses each point from the figures of the last, which no shard has alone: shard a rates, concurrencies or throughput sweep", s.Sweep.Kind)
	case suite.SweepConcurrency:
		for _, c := range s.Sweep.Concurrencies {
			if c < sh.Count {
				return fmt.Errorf("concurrency %d cannot be split over %d shards: each needs a worker at least", c, sh.Count)
			}
		}
	}
	return nil
}

// Known is what this binary can run, for validating suites about to run:
// its simulator profiles and tokenizers.
func Known() *suite.Known {
	return &suite.Known{SimProfiles: sim.ProfileNames(), Tokenizers: tokenizer.Names,
		Sim: func(t *suite.Target) (string, error) {
			_, field, err := target.SimProfile(t)
			return field, err
		}}
}
