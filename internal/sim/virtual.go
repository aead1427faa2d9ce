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
	if p.TokensPerStep < 1 {
		p.TokensPerStep = 1
	}
	c := newCluster(p, true)
	t0 := time.Unix(0, 0)
	t := t0
	type client struct {
		s            *seq
		start, first time.Time
		warm         bool // its first request is done
	}
	var ttft, tpot, e2e []time.Duration
	sent, tokens := 0, 0
	send := func(c *client, i int, at time.Time) {
		c.s = newVirtualSeq(l.Input, l.Output)
		c.s.tag = i // the client's index: a step's sequences find their clients
		// The request reaches the scheduler after the server's request
		// path; its latencies count from the send.
		c.s.arrived, c.start, c.first = at.Add(p.RequestOverhead), at, time.Time{}
		sent++
	}
	clients := make([]*client, min(l.Concurrency, l.Requests))
	var spread time.Duration
	if l.Staggered {
		spread = c.idleRequest(l.Input, l.Output)
	}
	// Random phases (seeded: every run is the same) rather than an even
	// spread: clients of a real closed loop drift apart at random, and
	// their prompts then sometimes meet in a step, which an even spread
	// would never show.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range clients {
		clients[i] = &client{warm: !l.Staggered}
		send(clients[i], i, t0.Add(time.Duration(rng.Int64N(int64(spread)+1))))
	}
	var pending []*seq // sent, not yet handed to the engine: their start is ahead
	for _, c := range clients {
		pending = append(pending, c.s)
	}
	slices.SortFunc(pending, func(a, b *seq) int { return a.arrived.Compare(b.arrived) })
	var measuredFrom time.Time
	measuredTokens := 0
	steps := 0
	var stepping []int
	for {
		// Hand over what has arrived; when idle, jump to the next arrival.
		if !c.busy() && len(pending) > 0 {
			t = later(t, pending[0].arrived)
		}
		for len(pending) > 0 && !pending[0].arrived.After(t) {
			c.add(pending[0])
			pending = pending[1:]
		}
		var until time.Time
		if len(pending) > 0 {
			until = pending[0].arrived
		}
		now, stepped, _, n, ok := c.advance(t, until)
		if !ok {
			if len(pending) > 0 {
				t = later(t, pending[0].arrived)
				continue
			}
			break // nothing left (or a request no cache can hold)
		}
		t = now
		steps += n
		// Only the clients whose requests were in the steps that ended
		// can have moved, and they are looked at in client order, as a
		// pass over every client would (the order new requests are sent
		// in): a pass over hundreds of idle clients a step was most of a
		// closed loop's time.
		stepping = stepping[:0]
		for _, s := range stepped {
			if c := clients[s.tag]; c.s == s {
				stepping = append(stepping, s.tag)
			}
		}
		slices.Sort(stepping)
		stepping = slices.Compact(stepping)
		for _, i := range stepping {
			c := clients[i]
			if c.s.produced == 0 || c.start.After(t) {
				continue
			}
			if c.first.IsZero() {
				c.first = t
			}
			if !c.s.finished {
				continue
			}
			if c.warm {
				ttft = append(ttft, c.first.Sub(c.start))
				e2e = append(e2e, t.Sub(c.start))
				if l.Output > 1 {
					tpot = append(tpot, t.Sub(c.first)/time.Duration(l.Output-1))
				}
				if measuredFrom.IsZero() {
					measuredFrom = c.start
				}
				measuredTokens += l.Output
			}
			tokens += l.Output
			c.warm = true
			c.s = nil
			if sent < l.Requests {
				send(c, i, t)
				// In arrival order: the first requests' staggered starts
				// may still be ahead of this one's.
				i, _ := slices.BinarySearchFunc(pending, c.s.arrived, func(s *seq, at time.Time) int {
					if s.arrived.After(at) {
						return 1
					}
					return -1
				})
				pending = slices.Insert(pending, i, c.s)
			}
		}
	}
	r := ClosedLoopResult{Requests: len(e2e), TTFT: median(ttft), TPOT: median(tpot), E2E: median(e2e), Preemptions: c.sum(func(e *engine) int64 { return e.preemptions.Load() }), Steps: steps}
	if l.Staggered {
		if span := t.Sub(measuredFrom).Seconds(); span > 0 {
			r.OutputPerSec = float64(measuredTokens) / span
		}
	} else if span := t.Sub(t0).Seconds(); span > 0 {
		r.OutputPerSec = float64(tokens) / span
	}
	return r
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
