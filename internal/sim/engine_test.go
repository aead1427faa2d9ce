package sim

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock records step durations instead of sleeping, and its now
// advances only by them: the engine's catch-up for late steps reads a
// virtual clock, so a test goroutine descheduled on a loaded machine does
// not shorten the next step (a CI run saw step 1 at 550µs, half of 1.1ms).
type fakeClock struct {
	mu    sync.Mutex
	steps []time.Duration
	t     time.Time
}

func (c *fakeClock) sleep(d time.Duration) {
	c.mu.Lock()
	c.steps = append(c.steps, d)
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// useFakeClock makes e step on a fresh fake clock starting now.
func useFakeClock(e *engine) *fakeClock {
	clk := &fakeClock{t: time.Now()}
	e.sleep, e.now = clk.sleep, clk.now
	return clk
}

func waitDone(t *testing.T, s *seq) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !s.live.finished.Load() {
		select {
		case <-s.live.notify:
		case <-deadline:
			t.Fatal("sequence did not finish")
		}
	}
}

func testProfile() Profile {
	return Profile{Name: "t", MaxNumSeqs: 2, MaxBatchedTokens: 100, StepBase: time.Millisecond,
		DecodePerSeq: 100 * time.Microsecond, PrefillPerToken: 10 * time.Microsecond, TokensPerStep: 1}
}

func TestEngineSingleRequestSteps(t *testing.T) {
	t.Parallel()
	e := newEngine(testProfile())
	clk := useFakeClock(e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.loop(ctx)

	s := newSeq(50, 4, nil)
	if err := e.submit(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s)
	want := []time.Duration{
		time.Millisecond + 50*10*time.Microsecond,                                 // prefill of 50 tokens, first token
		1100 * time.Microsecond, 1100 * time.Microsecond, 1100 * time.Microsecond, // decode alone
	}
	clk.mu.Lock()
	defer clk.mu.Unlock()
	if len(clk.steps) != len(want) {
		t.Fatalf("steps %v, want %v", clk.steps, want)
	}
	for i := range want {
		if clk.steps[i] != want[i] {
			t.Errorf("step %d = %v, want %v", i, clk.steps[i], want[i])
		}
	}
	if got := s.live.produced.Load(); got != 4 {
		t.Errorf("produced %d tokens, want 4", got)
	}
}

func TestEngineChunkedPrefillAndBatchCap(t *testing.T) {
	t.Parallel()
	p := testProfile()
	e := newEngine(p)
	clk := useFakeClock(e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Three requests arrive together; only two fit the batch. The 150-token
	// prompt takes two steps of the 100-token budget.
	a, b, c := newSeq(150, 2, nil), newSeq(30, 2, nil), newSeq(10, 1, nil)
	for _, s := range []*seq{a, b, c} {
		e.arrivals <- s
	}
	go e.loop(ctx)
	waitDone(t, a)
	waitDone(t, b)
	waitDone(t, c)
	clk.mu.Lock()
	defer clk.mu.Unlock()
	want := []time.Duration{
		time.Millisecond + 100*10*time.Microsecond, // a: 100 of 150
		time.Millisecond + 80*10*time.Microsecond,  // a: 50 (done), b: 30 (done)
		time.Millisecond + 2*100*time.Microsecond,  // a, b decode; both finish
		time.Millisecond + 10*10*time.Microsecond,  // c admitted once a slot frees
	}
	if len(clk.steps) != len(want) {
		t.Fatalf("steps %v, want %v", clk.steps, want)
	}
	for i := range want {
		if clk.steps[i] != want[i] {
			t.Errorf("step %d = %v, want %v", i, clk.steps[i], want[i])
		}
	}
}

func TestEngineSpeculativeChunks(t *testing.T) {
	t.Parallel()
	p := testProfile()
	p.TokensPerStep = 3
	e := newEngine(p)
	// What the sequence had produced as each step began, read in the
	// loop's own sleep: a reader woken by notify may miss steps (one slot,
	// extra wake-ups dropped) or see one twice, which failed this test
	// under -race on two cores.
	var s *seq
	var before []int64
	e.sleep = func(time.Duration) { before = append(before, s.live.produced.Load()) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s = newSeq(5, 8, nil)
	go e.loop(ctx)
	if err := e.submit(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s)
	// 1 from prefill, then +3 a step, capped at 8.
	want := []int64{0, 1, 4, 7}
	if !slices.Equal(before, want) {
		t.Errorf("produced before each step %v, want %v", before, want)
	}
	if got := s.live.produced.Load(); got != 8 {
		t.Errorf("produced %d, want 8", got)
	}
}

func TestEngineDropsCanceled(t *testing.T) {
	t.Parallel()
	p := testProfile()
	p.MaxNumSeqs = 1
	e := newEngine(p)
	e.sleep = func(time.Duration) { time.Sleep(100 * time.Microsecond) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.loop(ctx)
	long := newSeq(5, 1_000_000, nil)
	short := newSeq(5, 2, nil)
	e.submit(ctx, long)
	e.submit(ctx, short)
	<-long.live.notify
	long.live.canceled.Store(true) // the client went away; its slot must free up
	waitDone(t, short)
}
