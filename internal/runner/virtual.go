package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/target"
)

// VirtualNote is the results file's note on a virtual-time run: what its
// figures are, for a reader who would take them as measured.
const VirtualNote = "virtual time (simulated clock): every point was replayed on the embedded simulator's engine in simulated time, not measured over HTTP; " +
	"the client is perfect (no send lag, no HTTP or SSE cost, no machine noise), so latencies are the engine's alone. " +
	"Use it to plan a suite; gate measured runs against measured baselines"

// VirtualRefusal says why the suite cannot be replayed in virtual time
// with opts (run --virtual), or nil, for refusing before anything runs.
func VirtualRefusal(s *suite.Suite, opts Options) error { return virtualRefusal(s, opts) }

// virtualRefusal says why the suite cannot be replayed in virtual time,
// or nil. What the replay does not model is refused rather than left out
// without a word: partial figures that look whole would mislead.
func virtualRefusal(s *suite.Suite, opts Options) error {
	var why []string
	if k := s.Target.Kind; k != suite.TargetSim {
		// The caller names the suite file.
		return fmt.Errorf("--virtual replays the embedded simulator only, and this suite's target is a %s target: run it without --virtual to measure the server", k)
	}
	if s.Target.Faults != nil {
		why = append(why, "target.faults: the simulator's faults (errors, resets, stalls, malformed chunks) act on the HTTP stream, which a virtual run has none of")
	}
	if s.Target.Proxy != nil {
		why = append(why, "target.proxy: the fault proxy sits on a socket, which a virtual run has none of")
	}
	if len(s.Telemetry) > 0 {
		why = append(why, "telemetry: its endpoints measure real hardware over real time")
	}
	if s.Request.Retry != nil {
		why = append(why, "request.retry: the replay does not model retries (its server never fails transiently)")
	}
	if s.Workload.Structured != nil {
		why = append(why, "workload.structured: the replay produces no answer text to check against the schema")
	}
	if s.API == suite.APIEmbeddings {
		why = append(why, "api embeddings: the replay streams chat and completions only")
	}
	if s.Target.Launch != nil {
		why = append(why, "target.launch: a launched server runs in real time")
	}
	if s.Target.Spec != nil && s.Target.Spec.Disaggregated != nil {
		why = append(why, "target.spec.disaggregated: the replay steps one engine, not pools with transfers between them")
	}
	if opts.Shard.Count > 1 || !opts.StartAt.IsZero() {
		why = append(why, "--shard/--start-at: a virtual run is one machine's, on no wall clock")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("--virtual cannot honour %s; run it without --virtual", joinAnd(why))
}

func joinAnd(s []string) string {
	out := ""
	for i, w := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += "; and "
		default:
			out += "; "
		}
		out += w
	}
	return out
}

// virtualRun is a run's simulated server and clock: one engine for the
// whole run, as the embedded server is one for the whole run (its prefix
// cache carries over from point to point unless the suite resets it), and
// a clock that starts when the run does and moves on by each point's
// simulated time.
type virtualRun struct {
	replay *sim.Replay
	now    time.Time
	// timeouts of the suite's requests, enforced in simulated time.
	timeout, firstToken, idle time.Duration
}

func newVirtualRun(s *suite.Suite, start time.Time) (*virtualRun, error) {
	p, field, err := target.SimProfile(&s.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %s: %w", field, err)
	}
	r, err := sim.NewReplay(p)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	v := &virtualRun{replay: r, now: start, timeout: s.Request.Timeout.D()}
	if to := s.Request.Timeouts; to != nil {
		v.firstToken, v.idle = to.FirstToken.D(), to.Idle.D()
	}
	return v, nil
}

// replayServer is a sim.Replay as the load generator's VirtualServer.
type replayServer struct{ r *sim.Replay }

func (s replayServer) Submit(it *loadgen.Item, at time.Time) (int, int, error) {
	if it.Text != nil {
		a, err := s.r.SubmitRequest(sim.Request(*it.Text), at)
		return a.ID, a.Prompt, err
	}
	a, err := s.r.Submit(it.Body, at)
	return a.ID, a.Prompt, err
}
func (s replayServer) Cancel(id int)                             { s.r.Cancel(id) }
func (s replayServer) Busy() bool                                { return s.r.Busy() }
func (s replayServer) Start(now time.Time) (time.Duration, bool) { return s.r.Start(now) }
func (s replayServer) Waiting() bool                             { return s.r.Waiting() }
func (s replayServer) End(report func(id, produced int, finished bool)) {
	s.r.End(report)
}

// measureVirtual replays one attempt at a point on the run's simulated
// server. The server's /metrics and telemetry are not read: there is no
// server process, and the engine's own figures would be the replay's
// inputs, not observations.
func (ex *executor) measureVirtual(ctx context.Context, cfg loadgen.Config, p *result.Point, info PointInfo, seq int, rerun bool) (*loadgen.Outcome, error) {
	if ex.obs != nil {
		ex.obs.PointStarted(info, cfg.Progress)
	}
	src, err := ex.wl.source(seq, true)
	if err != nil {
		return nil, err
	}
	v := ex.virtual
	if ex.s.Sweep.ResetPrefixCache || rerun {
		v.replay.ResetPrefixCache()
		p.PrefixCacheReset = "reset in the simulated engine"
	}
	out, err := loadgen.RunVirtual(ctx, loadgen.Virtual{Server: replayServer{v.replay}, Start: v.now,
		Timeout: v.timeout, FirstTokenTimeout: v.firstToken, IdleTimeout: v.idle}, cfg, src)
	if err != nil {
		return nil, err
	}
	if out.End.After(v.now) {
		v.now = out.End
	}
	return out, nil
}
