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
	// Turnaround is how long after a closed-loop client's answer ends its
	// next request reaches the engine (the last chunk's way to the client
	// and the request's way back): any at all, and the request misses the
	// step that starts as the answer ends, and waits for the next.
	Turnaround time.Duration
}

// Sample is one measured request of a Run, in engine time.
type Sample struct {
	Prompt, Output int
	TTFT, E2E      time.Duration
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
	if p.TokensPerStep < 1 {
		p.TokensPerStep = 1
	}
	c := newCluster(p, true)
	rng := rand.New(rand.NewPCG(run.Seed, 0x5eed))
	total := run.Warmup + run.Requests
	type req struct {
		s           *seq
		sent, first time.Time
		measured    bool
	}
	t0 := time.Unix(0, 0)
	t := t0
	newReq := func(i int, at time.Time) *req {
		in, out := run.Lengths(rng)
		in, out = max(in, 1), max(out, 1)
		s := newVirtualSeq(in, out)
		s.arrived = at.Add(p.RequestOverhead) // after the server's request path
		s.tag = i
		return &req{s: s, sent: at, measured: i >= run.Warmup}
	}
	var pending []*req // sent, in arrival order, not yet handed over
	sent := 0
	closed := run.Concurrency > 0
	if closed {
		for ; sent < min(run.Concurrency, total); sent++ {
			pending = append(pending, newReq(sent, t0))
		}
	} else {
		at := t0
		for ; sent < total; sent++ {
			if run.Rate > 0 {
				at = at.Add(time.Duration(rng.ExpFloat64() / run.Rate * 1e9))
			}
			pending = append(pending, newReq(sent, at))
		}
	}
	// inFlight finds a sequence's request by its tag (the request's
	// index); only the step's sequences are looked at after it, so a step
	// costs its batch, not every client.
	inFlight := make([]*req, total)
	flying := 0
	var res RunResult
	// The window's output tokens are counted as steps end: from the
	// first measured send, until the last measured request has been sent
	// (ended), and then up to its send.
	var windowStart, windowEnd time.Time
	ended := false
	for {
		if !c.busy() {
			if len(pending) == 0 {
				break
			}
			t = later(t, pending[0].s.arrived)
		}
		for len(pending) > 0 && !pending[0].s.arrived.After(t) {
			r := pending[0]
			pending = pending[1:]
			if r.measured {
				if windowStart.IsZero() {
					windowStart = r.sent
				}
				windowEnd = r.sent
			}
			c.add(r.s)
			inFlight[r.s.tag] = r
			flying++
		}
		ended = sent == total && len(pending) == 0
		var until time.Time
		if len(pending) > 0 {
			until = pending[0].s.arrived // handed over at its arrival, after the request path
		}
		now, stepped, generated, steps, ok := c.advance(t, until)
		if !ok {
			if len(pending) > 0 {
				// Nothing fits now; move on to the next arrival.
				t = later(t, pending[0].s.arrived)
				continue
			}
			break // what waits can never be admitted
		}
		t = now
		res.Steps += steps
		if !windowStart.IsZero() && t.After(windowStart) && (!ended || !t.After(windowEnd)) {
			res.OutputTokens += int(generated)
		}
		for _, sq := range stepped {
			r := inFlight[sq.tag]
			if r.first.IsZero() && r.s.produced > 0 {
				r.first = t
			}
			if !r.s.finished {
				continue
			}
			inFlight[sq.tag] = nil
			flying--
			if r.measured {
				res.Samples = append(res.Samples, Sample{Prompt: r.s.promptTokens, Output: r.s.maxTokens, TTFT: r.first.Sub(r.sent), E2E: t.Sub(r.sent)})
			}
			if closed && sent < total {
				// A step's sends share its time: pending stays in time order.
				pending = append(pending, newReq(sent, t.Add(run.Turnaround)))
				sent++
			}
		}
	}
	res.Unserved = flying + len(pending)
	res.Preemptions = c.sum(func(e *engine) int64 { return e.preemptions.Load() })
	if windowEnd.After(windowStart) {
		res.Window = windowEnd.Sub(windowStart)
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
