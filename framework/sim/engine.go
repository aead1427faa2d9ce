package sim

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/benchci/benchci/framework/internal/clock"
)

// seq is one request inside the engine. The engine goroutine owns the
// scheduling fields; the handler reads produced/finished and waits on notify.
type seq struct {
	promptTokens int
	maxTokens    int

	arrived     time.Time // for the queue-time metric
	prefillLeft int       // engine-owned
	firstNow    bool      // engine-owned: prefill completed in the current step

	produced atomic.Int64 // tokens emitted so far
	finished atomic.Bool  // set after the last token
	canceled atomic.Bool  // set by the handler when the client went away
	notify   chan struct{}
}

// newSeq makes a sequence; cached prompt tokens need no prefill, but at
// least one token is always computed, as in vLLM.
func newSeq(promptTokens, cachedTokens, maxTokens int) *seq {
	return &seq{promptTokens: promptTokens, maxTokens: maxTokens, prefillLeft: max(promptTokens-cachedTokens, 1), notify: make(chan struct{}, 1), arrived: time.Now()}
}

func (s *seq) wake() {
	select {
	case s.notify <- struct{}{}:
	default: // a wake-up is already pending; the handler reads the counter
	}
}

// engine is a continuous-batching step loop in the manner of vLLM's
// scheduler: admit waiting sequences up to MaxNumSeqs, spend the step's token
// budget on decodes first and then on prefill chunks, sleep for the modelled
// step time, then emit tokens.
type engine struct {
	p        Profile
	arrivals chan *seq
	// sleep is replaced in tests; it must block for d.
	sleep func(time.Duration)

	running atomic.Int64 // sequences in the batch, for /metrics-style gauges
	waiting atomic.Int64
	// Counters for /metrics: queue time (arrival to admission) in
	// nanoseconds, admissions, and tokens generated.
	queueNanos atomic.Int64
	admitted   atomic.Int64
	generated  atomic.Int64
}

func newEngine(p Profile) *engine {
	return &engine{p: p, arrivals: make(chan *seq, 1024), sleep: clock.Sleep}
}

func (e *engine) submit(ctx context.Context, s *seq) error {
	select {
	case e.arrivals <- s:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *engine) loop(ctx context.Context) {
	// Steps are timed with package clock, so the simulated timings hold to
	// tens of microseconds rather than to Go's ~1 ms timer lateness.
	var waiting, running []*seq
	for {
		if len(waiting) == 0 && len(running) == 0 {
			select {
			case s := <-e.arrivals:
				waiting = append(waiting, s)
			case <-ctx.Done():
				return
			}
		}
	drain:
		for {
			select {
			case s := <-e.arrivals:
				waiting = append(waiting, s)
			default:
				break drain
			}
		}
		// Drop sequences whose clients left; admit waiting ones FIFO.
		running = dropCanceled(running)
		waiting = dropCanceled(waiting)
		for len(waiting) > 0 && len(running) < e.p.MaxNumSeqs {
			e.queueNanos.Add(int64(time.Since(waiting[0].arrived)))
			e.admitted.Add(1)
			running = append(running, waiting[0])
			waiting[0] = nil
			waiting = waiting[1:]
		}
		e.running.Store(int64(len(running)))
		e.waiting.Store(int64(len(waiting)))
		if len(running) == 0 {
			continue
		}

		budget := e.p.MaxBatchedTokens
		decoding, prefilled := 0, 0
		for _, s := range running {
			if s.prefillLeft == 0 {
				decoding++
			}
		}
		budget -= decoding
		for _, s := range running {
			if s.prefillLeft == 0 || budget <= 0 {
				continue
			}
			take := min(s.prefillLeft, budget)
			s.prefillLeft -= take
			budget -= take
			prefilled += take
			s.firstNow = s.prefillLeft == 0
		}
		step := e.p.StepBase + time.Duration(decoding)*e.p.DecodePerSeq + time.Duration(prefilled)*e.p.PrefillPerToken
		e.sleep(step)

		// Emit: decoding sequences advance TokensPerStep, a completed prefill
		// yields the first token (as in vLLM, prefill samples one token).
		kept := running[:0]
		for _, s := range running {
			switch {
			case s.firstNow:
				s.firstNow = false
				s.produced.Store(1)
				e.generated.Add(1)
			case s.prefillLeft == 0:
				before := s.produced.Load()
				s.produced.Store(min(before+int64(e.p.TokensPerStep), int64(s.maxTokens)))
				e.generated.Add(s.produced.Load() - before)
			default:
				kept = append(kept, s) // still prefilling
				continue
			}
			if s.produced.Load() >= int64(s.maxTokens) {
				s.finished.Store(true)
			} else {
				kept = append(kept, s)
			}
			s.wake()
		}
		clear(running[len(kept):])
		running = kept
	}
}

func dropCanceled(ss []*seq) []*seq {
	kept := ss[:0]
	for _, s := range ss {
		if !s.canceled.Load() {
			kept = append(kept, s)
		}
	}
	clear(ss[len(kept):])
	return kept
}
