package sim

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/benchci/benchci/internal/clock"
)

// seq is one request inside the engine. The engine goroutine owns the
// scheduling fields and the progress; a server's handler reads the live
// copy of the progress and waits on its notify.
type seq struct {
	promptTokens int
	maxTokens    int

	// hashes are the prompt's whole blocks' prefix hashes (nil without
	// prefix caching).
	hashes []uint64

	arrived     time.Time  // for the queue-time metric
	prefillLeft int        // engine-owned: tokens to compute before the next sample
	computed    int        // engine-owned: tokens whose KV is cached
	refs        []*kvBlock // engine-owned: leading blocks, shared through the prefix cache
	own         int        // engine-owned: private KV blocks held
	cached      int        // engine-owned: prompt tokens the prefix cache held at admission
	scheduled   int        // engine-owned: tokens computed in the current step
	prefilling  bool       // engine-owned: the current step's work is prefill
	slotted     bool       // engine-owned: holds a slot of a unified cache (takeSlot)

	tag int // the replay's id of the request (Replay); unused by the server

	produced  int64 // engine-owned: tokens emitted so far
	finished  bool  // engine-owned: set after the last token
	abandoned bool  // a replay's client went away (virtual time: the engine's goroutine)

	// live is what a server's handler, on a goroutine of its own, reads
	// and sets; nil in virtual time, where nothing else reads a sequence
	// and atomics per token were most of a replay's cost under the race
	// detector.
	live *liveSeq
}

// liveSeq is a served sequence's progress as its handler sees it.
type liveSeq struct {
	hit      atomic.Int64 // prompt tokens the prefix cache held at the last admission, for traces
	produced atomic.Int64 // tokens emitted so far
	finished atomic.Bool  // set after the last token
	canceled atomic.Bool  // set by the handler when the client went away
	notify   chan struct{}
}

// newSeq makes a sequence; hashes are its prompt's block hashes, for the
// prefix cache (nil: none).
func newSeq(promptTokens, maxTokens int, hashes []uint64) *seq {
	s := newVirtualSeq(promptTokens, maxTokens)
	s.hashes, s.live, s.arrived = hashes, &liveSeq{notify: make(chan struct{}, 1)}, time.Now()
	return s
}

// newVirtualSeq makes a sequence nothing waits on (a replay in virtual
// time): no live copy to publish to, and no clock read for arrived,
// which the replay sets.
func newVirtualSeq(promptTokens, maxTokens int) *seq {
	return &seq{promptTokens: promptTokens, maxTokens: maxTokens, prefillLeft: promptTokens}
}

func (s *seq) wake() {
	if s.live == nil {
		return // nothing waits on it: a replay in virtual time
	}
	select {
	case s.live.notify <- struct{}{}:
	default: // a wake-up is already pending; the handler reads the counter
	}
}

// engine is a continuous-batching step loop in the manner of vLLM's
// scheduler: each step first serves running sequences (decodes, then
// prefill chunks) within the step's token budget, allocating KV blocks as
// they grow and preempting the newest sequence when none is free; then it
// admits waiting sequences up to MaxNumSeqs while budget and blocks last.
// It sleeps for the modelled step time, then emits tokens.
//
// The step's functions (schedule, emit, the KV pool's, the virtual
// drivers) carry //go:norace. Each engine's state is its own goroutine's:
// its loop's, or a replay's caller's (simfit replays on several at once,
// each its own cluster); a sequence crosses to another engine only
// through a channel (disaggregation's hand-off). Under the race detector
// their per-token loads and stores made a replay in virtual time 26
// times slower (sim check: 1.1 s, 29 s with -race; 4.2 s with the
// directive), most of the test suite's time. The cost: the detector no
// longer checks these functions' own plain loads and stores, so a
// mistake in that ownership (say, a hand-off that bypassed the channel)
// would go unseen; atomics and channel operations are still checked, and
// TestHandlersReadOnlyLive holds that code outside the step's files
// reaches a sequence's progress only through live, and the step's
// unsynchronised state not at all.
type engine struct {
	p    Profile
	cost func(batch) time.Duration
	// arrivals feeds the loop; waiting and running are the loop's own.
	arrivals         chan *seq
	waiting, running []*seq
	kv               *kvPool
	blockSize        int
	// resets asks the loop to empty the prefix cache; it closes the
	// channel it is sent when done.
	resets chan chan struct{}
	// sleep blocks for d; nil until the loop starts (a clock.Sleeper),
	// tests set their own. now reads the clock sleep runs on (time.Now
	// when nil): a test whose sleep returns at once gives its virtual
	// time, so a descheduled test goroutine cannot look like a late step.
	sleep func(time.Duration)
	now   func() time.Time

	// quiet: a colocated replay in virtual time, whose gauges nothing
	// reads (no /metrics, no routing). publish skips them: their atomics,
	// each step, were a tenth of a replay's time under the race detector.
	quiet bool

	numRunning atomic.Int64 // sequences in the batch, for /metrics-style gauges
	numWaiting atomic.Int64
	// pending counts arrivals sent to the loop and not yet taken into
	// waiting (they arrive between steps): queued, though no step has
	// seen them. waitingPeak is the most waiting (pending included) since
	// /metrics last read it, so the gauge a scrape reads is the queue's
	// true peak between scrapes, not its value at one instant.
	pending     atomic.Int64
	waitingPeak atomic.Int64
	// Counters for /metrics: queue time (arrival to admission) in
	// nanoseconds, admissions, tokens generated, preemptions, KV blocks used.
	queueNanos  atomic.Int64
	admitted    atomic.Int64
	generated   atomic.Int64
	preemptions atomic.Int64
	usedBlocks  atomic.Int64
	// Prompt tokens looked up in the prefix cache at admissions, and
	// found there (vLLM's prefix_cache_queries and prefix_cache_hits).
	prefixQueries, prefixHits atomic.Int64

	// accept draws speculative decoding's emitted tokens (nil: none, see
	// speculative.go); handoff, on a disaggregated prefill instance, takes
	// a sequence whose prefill is done (nil: it decodes here, see disagg.go).
	accept  *acceptor
	handoff func(*seq)
	// lazyCancel leaves canceled sequences in waiting until they reach
	// its head, rather than sweeping the whole queue every step (Replay:
	// a saturated queue holds millions, and nothing reads its gauge).
	// They hold no KV cache, and admission skips them, so the schedule is
	// the same; only the waiting gauge counts them meanwhile.
	lazyCancel bool

	// stale is, with UnifiedKV, the tokens of the contexts finished
	// requests left in their slots, the least recently freed first: they
	// stay in the cache, and in every step's attention, until a new
	// request takes the slot.
	stale []int64
}

func newEngine(p Profile) *engine {
	// A step emits at least one token a sequence, whoever built the
	// engine (the server, a replay, a closed loop).
	p.TokensPerStep = max(p.TokensPerStep, 1)
	e := &engine{p: p, cost: p.stepCost(), arrivals: make(chan *seq, 1024), kv: newKVPool(p.KVBlocks),
		blockSize: p.blockSize(), resets: make(chan chan struct{})}
	if p.Speculative != nil {
		e.accept = newAcceptor(*p.Speculative)
	}
	return e
}

// reset empties the prefix cache before the engine's next step.
func (e *engine) reset(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case e.resets <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *engine) submit(ctx context.Context, s *seq) error {
	e.notePeak(e.numWaiting.Load() + e.pending.Add(1))
	select {
	case e.arrivals <- s:
		return nil
	case <-ctx.Done():
		e.pending.Add(-1)
		return ctx.Err()
	}
}

// notePeak raises waitingPeak to n.
func (e *engine) notePeak(n int64) {
	for old := e.waitingPeak.Load(); n > old && !e.waitingPeak.CompareAndSwap(old, n); old = e.waitingPeak.Load() {
	}
}

// waitingNow is the queue at this instant: waiting, and arrivals not yet
// taken in.
func (e *engine) waitingNow() int64 { return e.numWaiting.Load() + e.pending.Load() }

// takePeak returns the queue's peak since the last call and starts the
// next from the queue as it is.
func (e *engine) takePeak() int64 { return max(e.waitingPeak.Swap(e.waitingNow()), e.waitingNow()) }

func (e *engine) loop(ctx context.Context) {
	// Steps are timed with package clock, so the simulated timings hold to
	// tens of microseconds rather than to Go's ~1 ms timer lateness.
	if e.sleep == nil {
		sl := clock.NewSleeper()
		defer sl.Close()
		e.sleep = sl.Sleep
	}
	if e.now == nil {
		e.now = time.Now
	}
	var deadline time.Time
	idle := true
	for {
		if len(e.waiting) == 0 && len(e.running) == 0 {
			idle = true
			select {
			case s := <-e.arrivals:
				e.pending.Add(-1)
				e.waiting = append(e.waiting, s)
			case done := <-e.resets:
				e.kv.reset()
				close(done)
				continue
			case <-ctx.Done():
				return
			}
		}
	drain:
		for {
			select {
			case s := <-e.arrivals:
				e.pending.Add(-1)
				e.waiting = append(e.waiting, s)
			case done := <-e.resets:
				e.kv.reset()
				close(done)
			default:
				break drain
			}
		}
		now := e.now()
		b := e.schedule(now)
		if b.seqs == 0 {
			continue
		}
		// Steps run on the engine's own timeline: a step that ended late
		// (a late timer, the CPU of scheduling and emitting) makes the next
		// one shorter, so lateness does not add up over a stream. A step
		// gives back at most half its time and maxCatchUp, so the handlers
		// still get to send each step's tokens before the next's; after
		// idling the timeline restarts from now.
		cost := e.cost(b)
		start := now
		if behind := now.Sub(deadline); behind > 0 && !idle {
			start = now.Add(-min(behind, cost/2, maxCatchUp))
		}
		deadline = start.Add(cost)
		e.sleep(deadline.Sub(now))
		e.emit()
		idle = false
	}
}

// chunkCap is the most prompt tokens one sequence prefills in a step:
// the profile's MaxPrefillChunk, else the step's whole budget.
func (e *engine) chunkCap() int {
	// A prompt prefilled in one step or not at all ignores the cap: held
	// to it, a longer prompt could never be admitted.
	if e.p.MaxPrefillChunk > 0 && !e.p.NoChunkedPrefill {
		return e.p.MaxPrefillChunk
	}
	return e.p.MaxBatchedTokens
}

// maxCatchUp is how far behind its timeline the engine may be and still
// shorten the next step to make up for it.
const maxCatchUp = 5 * time.Millisecond

// schedule picks the step's work and returns what it computes.
//
//go:norace
func (e *engine) schedule(now time.Time) batch {
	e.running = e.dropCanceled(e.running)
	if e.lazyCancel {
		e.dropCanceledHead()
	} else {
		e.waiting = e.dropCanceled(e.waiting)
	}
	var b batch
	budget, preempted := e.scheduleDecodes(&b, e.p.MaxBatchedTokens)
	budget = e.schedulePrefills(&b, budget)
	// Admissions only if the step did not have to preempt: the room a
	// preemption freed is the preempted sequence's to take back.
	if !preempted {
		e.admit(now, &b, budget)
	}
	if e.p.UnifiedKV {
		for _, n := range e.stale {
			b.kvInUse += n
		}
		for _, s := range e.running {
			b.kvInUse += int64(s.computed + s.scheduled)
		}
	}
	e.publish()
	return b
}

// scheduleDecodes puts each running sequence done with its prompt in b,
// first: each needs room for the tokens it emits, and gets it by
// preempting the latest admitted. It returns the token budget left and
// whether it preempted.
//
//go:norace
func (e *engine) scheduleDecodes(b *batch, budget int) (int, bool) {
	preempted := false
	for i := 0; i < len(e.running); i++ {
		s := e.running[i]
		s.scheduled = 0
		if s.prefillLeft > 0 {
			continue
		}
		for !e.alloc(s, e.lookahead()) {
			v := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(v)
			preempted = true
			if v == s {
				break
			}
		}
		if s.prefillLeft > 0 { // it was the one preempted
			break
		}
		s.scheduled, s.prefilling = 1, false
		budget -= e.decodeBudget()
		b.seqs++
		b.decodes++
		b.decodeCtx += int64(s.computed)
	}
	return budget, preempted
}

// schedulePrefills puts the next prompt chunk of each running sequence
// still prefilling in b, in admission order, and returns the budget left.
//
//go:norace
func (e *engine) schedulePrefills(b *batch, budget int) int {
	for _, s := range e.running {
		if s.prefillLeft == 0 || budget <= 0 {
			continue
		}
		n := min(s.prefillLeft, budget, e.chunkCap())
		if e.p.NoChunkedPrefill && n < s.prefillLeft || !e.alloc(s, n) {
			continue
		}
		e.take(s, n, b)
		budget -= n
	}
	return budget
}

// admit moves waiting sequences to running, first come first served,
// while there is a slot, budget and cache for their first chunk (or, one
// that arrived with its KV cache, its first decode), and puts each in b.
//
//go:norace
func (e *engine) admit(now time.Time, b *batch, budget int) {
	for len(e.waiting) > 0 && len(e.running) < e.p.MaxNumSeqs && budget > 0 {
		if e.lazyCancel {
			if e.dropCanceledHead(); len(e.waiting) == 0 {
				break
			}
		}
		s := e.waiting[0]
		e.matchPrefix(s)
		n := min(s.prefillLeft, budget, e.chunkCap())
		need := n
		if s.prefillLeft == 0 {
			need = e.lookahead() // arrived with its KV cache (disagg.go): it decodes
		}
		if e.p.NoChunkedPrefill && n < s.prefillLeft || !e.alloc(s, need) {
			e.unmatchPrefix(s)
			break
		}
		if s.hashes != nil {
			e.prefixQueries.Add(int64(s.promptTokens))
			e.prefixHits.Add(int64(s.cached))
			if s.live != nil {
				s.live.hit.Store(int64(s.cached))
			}
		}
		e.queueNanos.Add(int64(now.Sub(s.arrived)))
		e.admitted.Add(1)
		e.running = append(e.running, s)
		e.takeSlot(s)
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
		if s.prefillLeft == 0 {
			e.admitDecode(s, b)
			budget -= e.decodeBudget()
			continue
		}
		e.take(s, n, b)
		budget -= n
	}
}

// dropCanceledHead drops the canceled sequences at the head of waiting.
//
//go:norace
func (e *engine) dropCanceledHead() {
	for len(e.waiting) > 0 && e.waiting[0].canceled() {
		e.release(e.waiting[0])
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
	}
}

// publish updates the gauges /metrics reads.
func (e *engine) publish() {
	if e.quiet {
		return
	}
	e.numRunning.Store(int64(len(e.running)))
	e.numWaiting.Store(int64(len(e.waiting)))
	e.notePeak(e.waitingNow())
	e.usedBlocks.Store(int64(e.kv.used()))
}

// matchPrefix gives a sequence about to be admitted the cached blocks its
// prompt begins with. At least its last prompt token is computed, and
// computing stays block-aligned, so a prompt seen whole recomputes its
// last block, as vLLM V1 does.
//
//go:norace
func (e *engine) matchPrefix(s *seq) {
	if s.hashes == nil || len(s.refs) > 0 || s.computed > 0 {
		return
	}
	s.refs = e.kv.match(s.hashes, (s.promptTokens-1)/e.blockSize)
	s.cached = len(s.refs) * e.blockSize
	s.computed += s.cached
	s.prefillLeft -= s.cached
}

// unmatchPrefix undoes matchPrefix for a sequence that was not admitted.
//
//go:norace
func (e *engine) unmatchPrefix(s *seq) {
	e.release(s) // its matched blocks are all it holds
	s.computed -= s.cached
	s.prefillLeft += s.cached
	s.cached = 0
}

// take schedules n prefill tokens of s in the step. The prompt blocks the
// chunk fills become findable now, as vLLM V1 caches a block when it
// allocates it: a sequence admitted later in the same step already shares
// them (one forward pass writes each layer's KV before attention reads).
//
//go:norace
func (e *engine) take(s *seq, n int, b *batch) {
	for j := len(s.refs); j < min((s.computed+n)/e.blockSize, len(s.hashes)); j++ {
		s.refs = append(s.refs, e.kv.register(s.hashes[j]))
		s.own--
	}
	s.scheduled, s.prefilling = n, true
	b.seqs++
	b.prefill += n
	b.prefillCtx += int64(s.computed)
	b.prefillAttn += int64(n)*int64(s.computed) + int64(n)*int64(n+1)/2
}

// alloc makes room in the KV cache for n more tokens of s.
//
//go:norace
func (e *engine) alloc(s *seq, n int) bool {
	need := (s.computed+n+e.blockSize-1)/e.blockSize - len(s.refs) - s.own
	if need <= 0 {
		return true
	}
	if !e.kv.take(need) {
		return false
	}
	s.own += need
	return true
}

// release returns s's private blocks and its holds on shared ones, which
// stay cached for later prompts until their memory is needed.
//
//go:norace
func (e *engine) release(s *seq) {
	for _, b := range s.refs {
		e.kv.unref(b)
	}
	e.kv.give(s.own)
	s.refs, s.own = nil, 0
	if s.slotted {
		// It leaves its slot, and its context there.
		s.slotted = false
		e.stale = append(e.stale, int64(s.computed))
	}
}

// takeSlot gives s, just admitted, a slot of the unified cache. Ollama's
// runner gives a request the free slot whose context shares the longest
// prefix with its prompt (OLLAMA_MULTIUSER_CACHE unset): every used slot
// shares at least the chat template's first tokens, so a slot a request
// left is taken before an empty one, and its old context is dropped past
// that shared prefix (which Ollama does not prefill again, and this
// model does). Old contexts linger only in slots the load no longer
// needs: after a burst, or a sweep's higher level.
//
//go:norace
func (e *engine) takeSlot(s *seq) {
	if !e.p.UnifiedKV {
		return
	}
	s.slotted = true
	if len(e.stale) > 0 {
		e.stale = e.stale[1:]
	}
}

// preempt frees s's KV cache and puts it first in line: on readmission it
// recomputes its prompt and what it generated so far (vLLM's recompute
// preemption), then goes on sampling.
//
//go:norace
func (e *engine) preempt(s *seq) {
	s.slotted = false // its KV cache is freed, not left in the slot
	e.release(s)
	s.computed, s.scheduled, s.cached = 0, 0, 0
	s.prefillLeft = s.promptTokens + int(s.produced)
	e.preemptions.Add(1)
	e.waiting = append(e.waiting, nil)
	copy(e.waiting[1:], e.waiting)
	e.waiting[0] = s
}

// emit advances the step's sequences: a decode emits TokensPerStep tokens;
// a completed prefill samples one (as in vLLM, prefill samples a token).
//
//go:norace
func (e *engine) emit() (generated int64) {
	kept := e.running[:0]
	for _, s := range e.running {
		n := s.scheduled
		if n == 0 {
			kept = append(kept, s)
			continue
		}
		s.scheduled = 0
		before := s.produced
		after := before
		if s.prefilling {
			s.prefillLeft -= n
			s.computed += n
			if s.prefillLeft > 0 {
				kept = append(kept, s) // still prefilling
				continue
			}
			after = before + 1
		} else {
			after = min(before+int64(e.decodeTokens()), int64(s.maxTokens))
			s.computed += int(after - before)
		}
		s.produced = after
		generated += after - before
		if s.live != nil {
			s.live.produced.Store(after)
		}
		if after >= int64(s.maxTokens) {
			e.release(s)
			s.finished = true
			if s.live != nil {
				s.live.finished.Store(true)
			}
		} else if s.prefilling && e.handoff != nil {
			e.release(s) // its KV cache goes to a decode instance
			e.handoff(s)
		} else {
			kept = append(kept, s)
		}
		s.wake()
	}
	e.generated.Add(generated)
	clear(e.running[len(kept):])
	e.running = kept
	e.publish()
	return generated
}

// canceled reports whether the sequence's client went away.
func (s *seq) canceled() bool {
	if s.live != nil {
		return s.live.canceled.Load()
	}
	return s.abandoned
}

//go:norace
func (e *engine) dropCanceled(ss []*seq) []*seq {
	kept := ss[:0]
	for _, s := range ss {
		if s.canceled() {
			e.release(s)
			continue
		}
		kept = append(kept, s)
	}
	clear(ss[len(kept):])
	return kept
}
