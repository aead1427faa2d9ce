package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
)

// RunVariants runs a suite's variants in the suite's order and returns
// one results file and one error (nil on success) per variant. A variant
// that fails (its server does not start, or dies) does not stop the
// others; a stopped run (Ctrl-C, --timeout) stops them all, and a variant
// that never started is returned as an incomplete file that says so.
// opts(i) gives variant i's options (called only for variants that
// start); Turn, Calibration and Order are set here. version is recorded
// in the file of a variant that never started.
func RunVariants(ctx context.Context, vs []Input, order, version string, opts func(i int) Options) ([]*result.File, []error) {
	files := make([]*result.File, len(vs))
	errs := make([]error, len(vs))
	shared := &SharedCalibration{}
	if order == suite.OrderInterleaved {
		rot := NewRotation(len(vs))
		var wg sync.WaitGroup
		for i, v := range vs {
			o := opts(i)
			o.Turn, o.Calibration, o.Order = rot.Member(i), shared, order
			wg.Go(func() {
				defer o.Turn.Leave()
				files[i], errs[i] = Run(ctx, v, o)
			})
		}
		wg.Wait()
		return files, errs
	}
	for i, v := range vs {
		if ctx.Err() != nil {
			files[i] = notRun(v, order, version, context.Cause(ctx))
			errs[i] = fmt.Errorf("suite %s: not run: %w", v.Suite.RunName(), context.Cause(ctx))
			continue
		}
		o := opts(i)
		o.Calibration, o.Order = shared, order
		files[i], errs[i] = Run(ctx, v, o)
	}
	return files, errs
}

// notRun is the results file of a variant stopped before it started.
func notRun(v Input, order, version string, cause error) *result.File {
	now := time.Now().UTC()
	s := v.Suite
	return &result.File{
		Schema: result.Schema, Counting: result.CountingRule, Figures: result.Figures, Tool: result.Tool{Name: "benchci", Version: version},
		Suite:  v.record(order),
		Target: result.Target{Kind: string(s.Target.Kind)}, Started: now, Finished: now,
		Incomplete: true, Error: "not run: " + cause.Error(), Points: []result.Point{},
	}
}

// Turn is a run's place in a rotation of runs that share one machine.
type Turn interface {
	// Take waits for the run's first turn.
	Take(ctx context.Context) error
	// Yield hands the turn to the next run and waits for it to come back.
	Yield(ctx context.Context) error
	// Leave hands the turn on for good; the run is over.
	Leave()
}

// Rotation passes one turn round robin among n runs, so that only one
// measures at a time and their points interleave: 0, 1, ..., n-1, 0, ...
// A run that ends leaves the rotation; the others go on without it.
type Rotation struct {
	mu      sync.Mutex
	active  []bool
	holding []bool
	turn    []chan struct{}
}

// NewRotation starts a rotation of n runs, run 0 first.
func NewRotation(n int) *Rotation {
	r := &Rotation{active: make([]bool, n), holding: make([]bool, n), turn: make([]chan struct{}, n)}
	for i := range n {
		r.active[i] = true
		r.turn[i] = make(chan struct{}, 1)
	}
	if n > 0 {
		r.turn[0] <- struct{}{}
	}
	return r
}

// Member returns run i's turn.
func (r *Rotation) Member(i int) Turn { return member{r, i} }

type member struct {
	r *Rotation
	i int
}

func (m member) Take(ctx context.Context) error {
	select {
	case <-m.r.turn[m.i]:
		m.r.mu.Lock()
		m.r.holding[m.i] = true
		m.r.mu.Unlock()
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (m member) Yield(ctx context.Context) error {
	m.r.mu.Lock()
	m.r.passLocked(m.i)
	m.r.mu.Unlock()
	return m.Take(ctx)
}

func (m member) Leave() {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	m.r.active[m.i] = false
	select {
	case <-m.r.turn[m.i]:
		// Passed to this run as it stopped waiting: pass it on.
		m.r.holding[m.i] = true
	default:
	}
	if m.r.holding[m.i] {
		m.r.passLocked(m.i)
	}
}

// passLocked gives the turn held by run i to the next active run after
// it, i itself when it is the only one left.
func (r *Rotation) passLocked(i int) {
	r.holding[i] = false
	n := len(r.active)
	for k := 1; k <= n; k++ {
		if j := (i + k) % n; r.active[j] {
			r.turn[j] <- struct{}{}
			return
		}
	}
}

// SharedCalibration holds the first calibration measured among runs that
// must send the same prompts.
type SharedCalibration struct {
	mu   sync.Mutex
	cal  result.Calibration
	from string
	ok   bool
}

// get returns the stored calibration and the run it came from; a nil
// holder has none.
func (c *SharedCalibration) get() (result.Calibration, string, bool) {
	if c == nil {
		return result.Calibration{}, "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cal, c.from, c.ok
}

// set stores a calibration that fitted; the first one stays.
func (c *SharedCalibration) set(cal result.Calibration, from string, fitted bool) {
	if c == nil || !fitted {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok {
		c.cal, c.from, c.ok = cal, from, true
	}
}
