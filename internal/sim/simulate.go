package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Run is a load point to replay in virtual time: a closed loop of
// Concurrency clients, or an open loop of Poisson arrivals at Rate per
// second (Rate and Concurrency both 0: every request at once), as a
// benchmark client runs one point of a sweep.
type Run struct {
	Concurrency int
	Rate        float64
	// Warmup requests are sent first and left out of the figures, as a
	// client's warm-up is; Requests are measured after them.
	Warmup, Requests int
	// Lengths draws each request's prompt tokens (as the engine counts
	// them, chat template included) and output tokens.
	Lengths func(r *rand.Rand) (prompt, output int)
	// Seed seeds the arrivals and the lengths: a run is the same every time.
	Seed uint64
	// RepeatPrompts makes a closed loop's request i send the prompt of
	// request i mod Concurrency (its lengths too), as a latency benchmark
	// sends the same batch of prompts in every iteration, warm-up
	// included: a profile's prefix cache (vLLM V1's is on by default)
	// then holds each prompt from the iteration before, and a batch
	// prefills only the last block of each. Off, or in an open loop,
	// every prompt is new.
	RepeatPrompts bool
	// Turnaround is how long after a closed-loop client's answer ends its
	// next request reaches the engine (the last chunk's way to the client
	// and the request's way back): any at all, and the request misses the
	// step that starts as the answer ends, and waits for the next.
	Turnaround time.Duration
}

// Sample is one measured request of a Run, in engine time.
type Sample struct {
	Prompt, Output int
	// Sent is when it was sent, from the run's start.
	Sent      time.Duration
	TTFT, E2E time.Duration
}

// TPOT is the mean time between output tokens after the first, as a
// client computes it; 0 for a one-token answer.
func (s Sample) TPOT() time.Duration {
	if s.Output < 2 {
		return 0
	}
	return (s.E2E - s.TTFT) / time.Duration(s.Output-1)
}

// RunResult is what Simulate measured.
type RunResult struct {
	// Samples are the measured requests that finished, in the order
	// they finished.
	Samples []Sample
	// Window is from the first measured request's send to the last's; a
	// client's window is a stretch of steady load in the same way.
	// OutputTokens counts the tokens emitted inside it, by any request.
	Window       time.Duration
	OutputTokens int
	Preemptions  int64
	Steps        int
	// Unserved counts requests the engine could never admit (a prompt
	// longer than its KV cache): they do not finish.
	Unserved int
}

// OutputPerSec is the output token throughput over the window.
func (r RunResult) OutputPerSec() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.OutputTokens) / r.Window.Seconds()
}

// Simulate replays a load point on the engine in virtual time: the
// scheduler, the KV cache and the step costs are the server's code, the
// clock is simulated, so a point of minutes runs in milliseconds and gives
// the same figures on every machine. Unlike ClosedLoop it takes each
// request's lengths from a distribution, runs open loops too, and returns
// every request, so figures can be computed as a client computes them.
//
//go:norace
func Simulate(p Profile, run Run) RunResult {
	r := startSimulation(p, run)
	for r.step() {
	}
	return r.result()
}

// simulation is one Simulate run: the requests sent and not yet handed to the
// engine, those in flight, and the figures so far.
type simulation struct {
	run Run
	c   *cluster
	rng *rand.Rand
	// t is the simulated clock.
	t time.Time
	// p is the profile replayed (its request path's delay).
	p           Profile
	total, sent int
	closed      bool
	// pending is sent, in arrival order, not yet handed over.
	pending []*simReq
	// inFlight finds a sequence's request by its tag (the request's
	// index); only the step's sequences are looked at after it, so a step
	// costs its batch, not every client.
	inFlight []*simReq
	flying   int
	res      RunResult
	// The window's output tokens are counted as steps end: from the
	// first measured send, until the last measured request has been sent
	// (ended), and then up to its send.
	windowStart, windowEnd time.Time
	ended                  bool
	// repeated holds the first Concurrency requests' lengths where
	// requests repeat prompts (repeats).
	repeated [][2]int
}

// simReq is a request of a simulation.
type simReq struct {
	s           *seq
	sent, first time.Time
	measured    bool
}

// simStart is a simulation's clock at its start.
var simStart = time.Unix(0, 0)

// startSimulation sends the run's first requests: a closed loop's clients
// at once, an open loop's every arrival, each at its time.
//
//go:norace
func startSimulation(p Profile, run Run) *simulation {
	t0 := simStart
	r := &simulation{run: run, c: newCluster(p, true), rng: rand.New(rand.NewPCG(run.Seed, 0x5eed)), t: t0,
		p: p, total: run.Warmup + run.Requests, closed: run.Concurrency > 0}
	if r.closed {
		for ; r.sent < min(run.Concurrency, r.total); r.sent++ {
			r.pending = append(r.pending, r.newReq(r.sent, t0))
		}
	} else {
		at := t0
		for ; r.sent < r.total; r.sent++ {
			if run.Rate > 0 {
				at = at.Add(time.Duration(r.rng.ExpFloat64() / run.Rate * 1e9))
			}
			r.pending = append(r.pending, r.newReq(r.sent, at))
		}
		// The request path's spread can let a later send arrive first.
		slices.SortStableFunc(r.pending, func(a, b *simReq) int { return a.s.arrived.Compare(b.s.arrived) })
	}
	r.inFlight = make([]*simReq, r.total)
	return r
}

// newReq is request i, sent at at, of lengths drawn from the run's.
//
//go:norace
func (r *simulation) newReq(i int, at time.Time) *simReq {
	in, out := r.lengths(i)
	s := newVirtualSeq(in, out)
	if r.repeats() && r.p.PrefixCaching {
		s.hashes = repeatedPromptHashes(i%r.run.Concurrency, in, r.p.blockSize())
	}
	s.arrived = at // after the server's request path, where it has one
	if r.p.RequestOverhead > 0 {
		s.arrived = at.Add(r.p.requestDelay(r.rng.Float64()))
	}
	s.tag = i
	return &simReq{s: s, sent: at, measured: i >= r.run.Warmup}
}

// repeats reports whether requests repeat earlier ones' prompts: a
// closed loop's, with Run.RepeatPrompts.
func (r *simulation) repeats() bool { return r.run.RepeatPrompts && r.run.Concurrency > 0 }

// lengths draws request i's prompt and output tokens; where requests
// repeat prompts, request i repeats request i mod Concurrency's lengths
// as well as its prompt.
func (r *simulation) lengths(i int) (int, int) {
	c := r.run.Concurrency
	if r.repeats() && i >= c {
		l := r.repeated[i%c]
		return l[0], l[1]
	}
	in, out := r.run.Lengths(r.rng)
	in, out = max(in, 1), max(out, 1)
	if r.repeats() {
		if r.repeated == nil {
			r.repeated = make([][2]int, c)
		}
		r.repeated[i] = [2]int{in, out}
	}
	return in, out
}

// step hands over what has arrived (when idle, jumping to the next
// arrival), runs the engine to its next steps' end, counts the window's
// tokens and lets the requests those steps moved see them; false when
// nothing is left (or what waits can never be admitted).
//
//go:norace
func (r *simulation) step() bool {
	if !r.c.busy() {
		if len(r.pending) == 0 {
			return false
		}
		r.t = later(r.t, r.pending[0].s.arrived)
	}
	r.handOver()
	r.ended = r.sent == r.total && len(r.pending) == 0
	var until time.Time
	if len(r.pending) > 0 {
		until = r.pending[0].s.arrived // handed over at its arrival, after the request path
	}
	now, stepped, generated, steps, ok := r.c.advance(r.t, until)
	if !ok {
		if len(r.pending) > 0 {
			// Nothing fits now; move on to the next arrival.
			r.t = later(r.t, r.pending[0].s.arrived)
			return true
		}
		return false
	}
	r.t = now
	r.res.Steps += steps
	if !r.windowStart.IsZero() && r.t.After(r.windowStart) && (!r.ended || !r.t.After(r.windowEnd)) {
		r.res.OutputTokens += int(generated)
	}
	for _, sq := range stepped {
		r.progress(sq.tag)
	}
	return true
}

// handOver gives the engine the requests that have arrived by now, and
// moves the window's ends to the measured ones' sends.
//
//go:norace
func (r *simulation) handOver() {
	for len(r.pending) > 0 && !r.pending[0].s.arrived.After(r.t) {
		q := r.pending[0]
		r.pending = r.pending[1:]
		if q.measured {
			if r.windowStart.IsZero() {
				r.windowStart = q.sent
			}
			r.windowEnd = q.sent
		}
		r.c.add(q.s)
		r.inFlight[q.s.tag] = q
		r.flying++
	}
}

// progress notes request i's first token, and when it ended, records it
// and (a closed loop) sends its client's next.
//
//go:norace
func (r *simulation) progress(i int) {
	q := r.inFlight[i]
	if q.first.IsZero() && q.s.produced > 0 {
		q.first = r.t
	}
	if !q.s.finished {
		return
	}
	r.inFlight[i] = nil
	r.flying--
	if q.measured {
		r.res.Samples = append(r.res.Samples, Sample{Prompt: q.s.promptTokens, Output: q.s.maxTokens, Sent: q.sent.Sub(simStart), TTFT: q.first.Sub(q.sent), E2E: r.t.Sub(q.sent)})
	}
	if r.closed && r.sent < r.total {
		// In arrival order: a request path's spread can put this one
		// ahead of one sent earlier.
		q := r.newReq(r.sent, r.t.Add(r.run.Turnaround))
		at, _ := slices.BinarySearchFunc(r.pending, q.s.arrived, func(p *simReq, t time.Time) int {
			if p.s.arrived.After(t) {
				return 1
			}
			return -1
		})
		r.pending = slices.Insert(r.pending, at, q)
		r.sent++
	}
}

// result is the run's samples, what was left unserved and the window.
//
//go:norace
func (r *simulation) result() RunResult {
	res := r.res
	res.Unserved = r.flying + len(r.pending)
	res.Preemptions = r.c.sum(func(e *engine) int64 { return e.preemptions.Load() })
	if r.windowEnd.After(r.windowStart) {
		res.Window = r.windowEnd.Sub(r.windowStart)
	} else if len(res.Samples) > 0 {
		// One measured request, or all sent at once: the span to the last
		// finish is the window.
		var last time.Duration
		for _, s := range res.Samples {
			last = max(last, s.E2E)
		}
		res.Window = last
		res.OutputTokens = 0
		for _, s := range res.Samples {
			res.OutputTokens += s.Output
		}
	}
	return res
}

// Quantile returns the q-quantile (0..1) of ds by the nearest rank, as
// the client's histograms read it; 0 for none.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// repeatedPromptHashes are the block hashes of prompt number prompt, of
// tokens tokens: its whole blocks', each standing for every token up to
// its end (prompt and block identify it), so two requests share blocks
// only when they send the same prompt.
func repeatedPromptHashes(prompt, tokens, blockSize int) []uint64 {
	out := make([]uint64, tokens/blockSize)
	for j := range out {
		// splitmix64 of (prompt, block): distinct pairs, spread hashes.
		z := uint64(prompt)<<32 | uint64(j)
		z += 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		out[j] = z ^ z>>31
	}
	return out
}
