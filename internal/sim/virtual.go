package sim

import (
	"math/rand/v2"
	"slices"
	"time"
)

// ClosedLoopResult is what a closed-loop run in virtual time measured.
type ClosedLoopResult struct {
	Requests int
	// Medians over requests, in the engine's time (no HTTP, no client).
	TTFT, TPOT, E2E time.Duration
	// Mean holds the same figures' means, which is what the published
	// rows state (genai-perf's and TensorRT-LLM's averages, vLLM's
	// average batch latency): under load a few prompts that met in a
	// step pull the mean TTFT up and leave the median where it was.
	Mean struct{ TTFT, TPOT, E2E time.Duration }
	// OutputPerSec is output tokens over the run's span.
	OutputPerSec float64
	Preemptions  int64
	Steps        int
}

// Load is a closed-loop workload: Concurrency clients each send a request
// of Input prompt tokens and Output tokens, and the next as soon as it
// ends, until Requests have been sent.
type Load struct {
	Concurrency, Input, Output, Requests int
	// Staggered starts the clients at random over one idle request's time
	// and leaves each client's first request out of the figures, so they
	// describe the steady state rather than every client's prompt
	// arriving in the same step. Off, all start at once (a batch).
	Staggered bool
}

// ClosedLoop drives the engine in virtual time under a closed-loop load.
// The engine's scheduling, KV cache and step costs are the same code the
// server runs; only the clock is simulated, so minutes of engine time
// take milliseconds and give the same answer on every machine. It is what
// the published-figure check and the capacity tests use.
//
//go:norace
func ClosedLoop(p Profile, l Load) ClosedLoopResult {
	r := startClosedLoop(p, l)
	for r.step() {
	}
	return r.result()
}

// closedLoop is one ClosedLoop replay: its clients, the requests sent and
// not yet handed to the engine (their start is ahead), and the figures
// so far.
type closedLoop struct {
	l  Load
	c  *cluster
	t0 time.Time
	// t is the simulated clock.
	t       time.Time
	clients []*loopClient
	// pending is in arrival order.
	pending []*seq
	// p is the profile replayed: a request reaches the scheduler its
	// request path's delay after it was sent (requestDelay, drawn from
	// rng).
	p   Profile
	rng *rand.Rand

	ttft, tpot, e2e []time.Duration
	sent, tokens    int
	// measuredFrom and measuredTokens are the staggered figures' span
	// start and tokens (the clients' first requests left out).
	measuredFrom   time.Time
	measuredTokens int
	steps          int
	// stepping is scratch: the clients whose requests a step moved.
	stepping []int
}

// loopClient is a closed loop's client and the request it has out.
type loopClient struct {
	s            *seq
	start, first time.Time
	warm         bool // its first request is done
}

// startClosedLoop sends every client's first request: all at once, or
// staggered over an idle request's time.
//
//go:norace
func startClosedLoop(p Profile, l Load) *closedLoop {
	r := &closedLoop{l: l, c: newCluster(p, true), t0: time.Unix(0, 0), p: p, rng: rand.New(rand.NewPCG(3, 4))}
	r.t = r.t0
	r.clients = make([]*loopClient, min(l.Concurrency, l.Requests))
	var spread time.Duration
	if l.Staggered {
		spread = r.c.idleRequest(l.Input, l.Output)
	}
	// Random phases (seeded: every run is the same) rather than an even
	// spread: clients of a real closed loop drift apart at random, and
	// their prompts then sometimes meet in a step, which an even spread
	// would never show.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range r.clients {
		r.clients[i] = &loopClient{warm: !l.Staggered}
		r.send(r.clients[i], i, r.t0.Add(time.Duration(rng.Int64N(int64(spread)+1))))
		r.pending = append(r.pending, r.clients[i].s)
	}
	slices.SortFunc(r.pending, func(a, b *seq) int { return a.arrived.Compare(b.arrived) })
	return r
}

// send gives client i a new request sent at at.
//
//go:norace
func (r *closedLoop) send(cl *loopClient, i int, at time.Time) {
	cl.s = newVirtualSeq(r.l.Input, r.l.Output)
	cl.s.tag = i // the client's index: a step's sequences find their clients
	// The request reaches the scheduler after the server's request path;
	// its latencies count from the send.
	cl.s.arrived, cl.start, cl.first = at, at, time.Time{}
	if r.p.RequestOverhead > 0 {
		cl.s.arrived = at.Add(r.p.requestDelay(r.rng.Float64()))
	}
	r.sent++
}

// step hands over what has arrived (when idle, jumping to the next
// arrival), runs the engine to its next steps' end and lets the clients
// those steps moved see their tokens; false when nothing is left (or a
// request no cache can hold).
//
//go:norace
func (r *closedLoop) step() bool {
	if !r.c.busy() && len(r.pending) > 0 {
		r.t = later(r.t, r.pending[0].arrived)
	}
	for len(r.pending) > 0 && !r.pending[0].arrived.After(r.t) {
		r.c.add(r.pending[0])
		r.pending = r.pending[1:]
	}
	var until time.Time
	if len(r.pending) > 0 {
		until = r.pending[0].arrived
	}
	now, stepped, _, n, ok := r.c.advance(r.t, until)
	if !ok {
		if len(r.pending) > 0 {
			r.t = later(r.t, r.pending[0].arrived)
			return true
		}
		return false
	}
	r.t = now
	r.steps += n
	// Only the clients whose requests were in the steps that ended can
	// have moved, and they are looked at in client order, as a pass over
	// every client would (the order new requests are sent in): a pass
	// over hundreds of idle clients a step was most of a closed loop's
	// time.
	r.stepping = r.stepping[:0]
	for _, s := range stepped {
		if r.clients[s.tag].s == s {
			r.stepping = append(r.stepping, s.tag)
		}
	}
	slices.Sort(r.stepping)
	r.stepping = slices.Compact(r.stepping)
	for _, i := range r.stepping {
		r.progress(i)
	}
	return true
}

// progress notes client i's first token, and when its request ended,
// records it and sends the next.
//
//go:norace
func (r *closedLoop) progress(i int) {
	cl := r.clients[i]
	if cl.s.produced == 0 || cl.start.After(r.t) {
		return
	}
	if cl.first.IsZero() {
		cl.first = r.t
	}
	if !cl.s.finished {
		return
	}
	if cl.warm {
		r.ttft = append(r.ttft, cl.first.Sub(cl.start))
		r.e2e = append(r.e2e, r.t.Sub(cl.start))
		if r.l.Output > 1 {
			r.tpot = append(r.tpot, r.t.Sub(cl.first)/time.Duration(r.l.Output-1))
		}
		if r.measuredFrom.IsZero() {
			r.measuredFrom = cl.start
		}
		r.measuredTokens += r.l.Output
	}
	r.tokens += r.l.Output
	cl.warm = true
	cl.s = nil
	if r.sent < r.l.Requests {
		r.send(cl, i, r.t)
		// In arrival order: the first requests' staggered starts may
		// still be ahead of this one's.
		r.pending = insertByArrival(r.pending, cl.s)
	}
}

// result is the run's figures: medians over the measured requests, and
// output tokens over the measured span.
//
//go:norace
func (r *closedLoop) result() ClosedLoopResult {
	out := ClosedLoopResult{Requests: len(r.e2e), TTFT: median(r.ttft), TPOT: median(r.tpot), E2E: median(r.e2e),
		Preemptions: r.c.sum(func(e *engine) int64 { return e.preemptions.Load() }), Steps: r.steps}
	out.Mean.TTFT, out.Mean.TPOT, out.Mean.E2E = mean(r.ttft), mean(r.tpot), mean(r.e2e)
	if r.l.Staggered {
		if span := r.t.Sub(r.measuredFrom).Seconds(); span > 0 {
			out.OutputPerSec = float64(r.measuredTokens) / span
		}
	} else if span := r.t.Sub(r.t0).Seconds(); span > 0 {
		out.OutputPerSec = float64(r.tokens) / span
	}
	return out
}

// insertByArrival inserts s into q, which is in arrival order, after those
// arriving at the same instant: first sent, first in.
//
//go:norace
func insertByArrival(q []*seq, s *seq) []*seq {
	i, _ := slices.BinarySearchFunc(q, s.arrived, func(x *seq, at time.Time) int {
		if x.arrived.After(at) {
			return 1
		}
		return -1
	})
	return slices.Insert(q, i, s)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	if n := len(ds); n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2
	}
	return ds[len(ds)/2]
}
