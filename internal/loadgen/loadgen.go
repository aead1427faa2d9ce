// Package loadgen drives requests at a server: open loop at a request rate
// on a schedule drawn from an arrival process, or closed loop at a fixed
// concurrency. It measures how far actual sends trail the schedule, so a
// client that cannot keep up is detected instead of being reported as a
// slow server.
package loadgen

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/stall"
	"github.com/benchci/benchci/internal/workload"
)

// Doer sends one request and measures it into res (client.Client).
type Doer interface {
	Do(ctx context.Context, body []byte, id string, res *client.Result)
}

// Item is one request ready to send.
type Item struct {
	Body []byte
	// Text, when not nil, is the request as a VirtualServer reads it, in
	// place of Body (then nil): a replay has no wire, and encoding JSON
	// only for the server to decode it was most of a replay's time.
	Text                  *Text
	WantInput, WantOutput int
	// FollowUps are later turns of the same session, each sent Think after
	// the previous turn's reply; a failed turn ends its session.
	FollowUps []Item
	Think     time.Duration
	// AbandonAfter, when above 0, closes the stream once that many output
	// tokens came, as a user who stops reading (client.AbandonAfter);
	// AbandonAt, that long after the send (client.AbandonAt).
	AbandonAfter int
	AbandonAt    time.Duration
	// Seq is the request's place in the point's whole sequence (every
	// shard's), set by the load generator: its id is "benchci-<Seq+1>",
	// the same on whichever machine sends it.
	Seq int
	// Model, in a mix of models, is the one the body names: the request
	// is also counted in that model's figures.
	Model string
	// Inputs is how many inputs an embeddings request carries (0: a
	// completion).
	Inputs int
	// Images is how many images the request carries.
	Images int
	// Structured marks a request whose answer is checked (Config.Check).
	Structured bool
}

// Text is a text request without its JSON: a chat's messages (Roles and
// Texts, one each) or a completion's prompt (Texts, one), and max_tokens.
type Text struct {
	Chat         bool
	Roles, Texts []string
	MaxTokens    int
}

// Source yields the requests to send, in order. It is called from one
// goroutine, ahead of the schedule.
type Source func() (Item, error)

// Mode is how a point's load is applied.
type Mode string

// Modes; the values are the result's point modes.
const (
	// OpenLoop sends on the arrival process's schedule, whatever the
	// server's pace: the load a population of independent users makes.
	OpenLoop Mode = "rate"
	// ClosedLoop keeps a fixed number of requests in flight.
	ClosedLoop Mode = "concurrency"
)

// Config describes one load point.
type Config struct {
	Mode Mode
	// Rate in requests/s and the arrival process drawn at that rate, for
	// open loop.
	Rate     float64
	Arrivals workload.Arrivals
	// AllAtOnce schedules every request at the start (vLLM's rate inf;
	// Requests bounds them): Rate and Arrivals are unused, and the wait
	// for a MaxConcurrency slot is the point, not a client falling behind.
	AllAtOnce bool
	// Concurrency is the number of closed-loop workers.
	Concurrency int
	// MaxConcurrency caps open-loop requests in flight (0: none).
	MaxConcurrency int
	// DescriptorLimit, when set, is the descriptor limit MaxConcurrency
	// was derived from (the suite set no cap): a send that waited for it
	// was held up by this machine, and the point is flagged.
	DescriptorLimit int
	// Warmup runs first and is excluded from latencies; Duration is the
	// measured window; Requests bounds measured requests (0: none).
	Warmup, Duration time.Duration
	Requests         int
	// Check, when set, judges the answers of structured requests
	// (Item.Structured): whether they match their schema.
	Check func(*client.Result) bool
	// Goodput sets the per-request SLOs that goodput counts.
	Goodput recorder.Criteria
	// Retry, when set, retries failed requests.
	Retry *RetryPolicy
	// StopSaturated ends an open-loop point early when its queue grows
	// without bound (see saturated), marking it; requests still in
	// flight are canceled instead of drained.
	StopSaturated bool
	// Progress, when set, is updated as the point runs.
	Progress *Progress
	// OnWindow, when set, is told when the measured window starts, as
	// soon as the point's timeline is fixed (before the warm-up runs), so
	// that server counters can be read there.
	OnWindow func(start time.Time)
	// OnSample, when set, sees every finished request, warm-up and
	// canceled ones too, on the one goroutine that records them; the
	// sample is reused once it returns.
	OnSample func(recorder.Sample)
	// Shard, when Count is above 1, sends only this machine's part of the
	// load: arrival k of the timeline (open loop), or request k of the
	// sequence (closed loop), when k mod Count is Index. The timeline and
	// the sequence are the whole point's, so the shards' union is what one
	// machine would send, request for request.
	Shard Shard
	// StartAt, when set, is the wall-clock time the point's timeline
	// starts: the point waits for it and records how late it began.
	StartAt time.Time
	// Clock paces sends and stamps the window; nil is the real, precise
	// clock. Tests inject one that sleeps on timers alone, so that a
	// fake-time bubble (testing/synctest) can run a point instantly.
	Clock clock.Clock
}

// Shard is one machine's part of a load split over Count machines.
type Shard struct{ Index, Count int }

// Owns reports whether request k of the sequence is this shard's.
func (s Shard) Owns(k int) bool { return s.Count <= 1 || k%s.Count == s.Index }

// Split is this shard's part of n closed-loop workers: the shards' parts
// sum to n, the first n mod Count shards taking one more.
func (s Shard) Split(n int) int {
	if s.Count <= 1 {
		return n
	}
	part := n / s.Count
	if s.Index < n%s.Count {
		part++
	}
	return part
}

// Progress is read by progress displays while a point runs.
type Progress struct {
	Scheduled atomic.Int64 // requests in the plan (open loop; 0 when unknown)
	Sent      atomic.Int64
	Done      atomic.Int64
	Failed    atomic.Int64
	InFlight  atomic.Int64
}

// Outcome is one point's result.
type Outcome struct {
	result.Measured
	Schedule result.Schedule `json:"schedule"`
	// Validity is the evidence on whether the point measured the server.
	Validity result.Validity `json:"validity"`
	// Incomplete is set when the run was stopped before the point ended.
	Incomplete bool `json:"incomplete,omitempty"`
	// End, of a virtual-time point (RunVirtual), is the simulated time its
	// last request ended: the next point's timeline starts there.
	End time.Time `json:"-"`
	// Final, when set, says why measuring the point again would fail
	// alike: an invalid attempt is not rerun.
	Final string `json:"-"`
}

// Thresholds for flagging a saturated client.
const (
	// MinSendRatio is the least fraction of the scheduled rate that must be sent.
	MinSendRatio = 0.99
	// MaxLagP99 is the most the 99th percentile send lag may be.
	MaxLagP99 = 10 * time.Millisecond
)

// Run runs one point and returns its outcome. A canceled ctx stops it
// early; the outcome then holds what was measured, marked incomplete.
func Run(ctx context.Context, d Doer, cfg Config, src Source) (*Outcome, error) {
	if cfg.Progress == nil {
		cfg.Progress = &Progress{}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Precise
	}
	switch cfg.Mode {
	case OpenLoop:
		return runOpen(ctx, d, cfg, src)
	case ClosedLoop:
		return runClosed(ctx, d, cfg, src)
	}
	return nil, fmt.Errorf("loadgen: unknown mode %q", cfg.Mode)
}

// ahead builds requests on its own goroutine ahead of the dispatcher, so the
// dispatcher's loop is only "wait, then send". It numbers them in sequence
// and passes on those keep accepts (nil: all); the others are built and
// dropped, so that every shard numbers the same sequence alike.
func ahead(ctx context.Context, src Source, n int, keep func(int) bool, bodies *budget, built *buildTime) (<-chan Item, <-chan error) {
	items := make(chan Item, 256)
	errc := make(chan error, 1)
	go func() {
		defer close(items)
		for i := 0; n < 0 || i < n; i++ {
			t0 := time.Now()
			it, err := src()
			built.add(time.Since(t0))
			if err != nil {
				errc <- err
				return
			}
			if it.Seq = i; keep != nil && !keep(i) {
				continue
			}
			// Held from here until the request is answered (collector.send).
			if !bodies.take(ctx, it.weight()) {
				return
			}
			select {
			case items <- it:
			case <-ctx.Done():
				return
			}
		}
	}()
	return items, errc
}

// scheduleGap is the open loop's mean time between sends (0: all at once).
func scheduleGap(cfg Config) time.Duration {
	if cfg.Rate > 0 && !cfg.AllAtOnce {
		return time.Duration(float64(time.Second) / cfg.Rate)
	}
	return 0
}

// buildTime sums the time the source took to build requests, and counts
// those that took over slowOver each.
type buildTime struct {
	nanos, n, slow atomic.Int64
	slowOver       time.Duration // 0: none counted slow
}

func (b *buildTime) add(d time.Duration) {
	if b != nil {
		b.nanos.Add(int64(d))
		b.n.Add(1)
		if b.slowOver > 0 && d > b.slowOver {
			b.slow.Add(1)
		}
	}
}

// mostlySlow reports whether most of at least two builds were slow: a
// stall slows a build or two, prompts too long to build slow them all.
func (b *buildTime) mostlySlow() bool {
	n := b.n.Load()
	return n >= 2 && 2*b.slow.Load() > n
}

// mean is the time a request took to build, on average (0: none built).
func (b *buildTime) mean() time.Duration {
	if n := b.n.Load(); n > 0 {
		return time.Duration(b.nanos.Load() / n)
	}
	return 0
}

// collector records finished requests on one goroutine.
type collector struct {
	rec      *recorder.Recorder
	results  chan recorder.Sample
	onSample func(recorder.Sample)
	pool     sync.Pool
	done     chan struct{}
	prog     *Progress
	clk      clock.Clock
	// watch, when set, sees every first token as it comes.
	watch *saturationWatch
	// retry, when set, sends failed requests again.
	retry *retrier
	// check judges structured answers (Config.Check).
	check func(*client.Result) bool
	// bodies counts the request bodies held, built or in flight.
	bodies *budget
}

func newCollector(rec *recorder.Recorder, cfg Config) *collector {
	rec.Goodput = cfg.Goodput
	prog := cfg.Progress
	c := &collector{rec: rec, results: make(chan recorder.Sample, 4096), onSample: cfg.OnSample, done: make(chan struct{}), prog: prog, clk: cfg.Clock,
		retry: newRetrier(cfg.Retry), check: cfg.Check}
	c.pool.New = func() any { return new(client.Result) }
	go func() {
		defer close(c.done)
		for s := range c.results {
			c.rec.Add(s)
			if c.onSample != nil {
				c.onSample(s)
			}
			c.pool.Put(s.Result)
		}
	}()
	return c
}

// send runs one request, and its session's later turns, handing each
// sample to the collector. Later turns are scheduled by the reply before
// them, not by the arrival process: their intended time is the end of the
// think time.
// It returns when the last reply ended, as the client stamped it.
// hold, when set, is its place under the open loop's cap on requests in
// flight (see retrier.do); the caller gives it up after.
// ready, when set, is when the first turn got its place under the suite's
// cap on requests in flight (recorder.Sample.Ready).
func (c *collector) send(ctx context.Context, d Doer, it Item, scheduled, ready time.Time, warmup bool, hold *slot) time.Time {
	defer c.bodies.give(it.weight())
	id := "benchci-" + strconv.Itoa(it.Seq+1)
	ok, end := c.sendOne(ctx, d, it, id, scheduled, ready, warmup, hold)
	if !ok {
		return end
	}
	for i, next := range it.FollowUps {
		at := c.clk.Now().Add(it.Think)
		if !c.clk.SleepUntil(ctx, at, 0) {
			return end
		}
		if ok, end = c.sendOne(ctx, d, next, id+".t"+strconv.Itoa(i+2), at, time.Time{}, warmup, hold); !ok {
			return end
		}
	}
	return end
}

func (c *collector) sendOne(ctx context.Context, d Doer, it Item, id string, scheduled, ready time.Time, warmup bool, hold *slot) (bool, time.Time) {
	res := c.pool.Get().(*client.Result)
	c.prog.Sent.Add(1)
	c.prog.InFlight.Add(1)
	rctx := ctx
	if it.AbandonAfter > 0 {
		rctx = client.AbandonAfter(rctx, it.AbandonAfter)
	}
	if it.AbandonAt > 0 {
		var stop context.CancelFunc
		rctx, stop = client.AbandonAt(rctx, it.AbandonAt)
		defer stop()
	}
	if c.watch != nil {
		rctx = client.OnFirstToken(rctx, c.watch.firstToken)
	}
	smp := recorder.Sample{Result: res, Scheduled: scheduled, Ready: ready, Warmup: warmup, WantInput: it.WantInput, WantOutput: it.WantOutput, Model: it.Model, Inputs: it.Inputs, Images: it.Images}
	if r := c.retry; r == nil {
		d.Do(rctx, it.Body, id, res)
	} else {
		c.sendRetrying(rctx, d, it.Body, id, &smp, hold)
	}
	c.prog.InFlight.Add(-1)
	c.prog.Done.Add(1)
	ok := res.OK()
	if !ok && res.Err != client.ErrCanceled && res.Err != client.ErrAbandoned {
		c.prog.Failed.Add(1)
	}
	if ok && it.Structured && c.check != nil {
		smp.Checked, smp.Correct = true, c.check(res)
	}
	end := res.Sent.Add(res.End)
	if res.Sent.IsZero() {
		end = c.clk.Now() // never sent (a dial refused before the stamp)
	}
	c.results <- smp
	return ok, end
}

// sendRetrying sends a request until it succeeds, fails for good, runs
// out of attempts or of budget, or the run stops; the sample holds the
// last attempt, the count, and the first attempt's send. Each attempt
// carries the request's id with its number, as a client's logs would.
func (c *collector) sendRetrying(ctx context.Context, d Doer, body []byte, id string, smp *recorder.Sample, hold *slot) {
	c.retry.requests.Add(1)
	smp.Attempts, smp.UserStart, smp.GaveUp = c.retry.do(ctx, c.clk, d, body, id, smp.Result, hold)
}

// do sends body until an attempt succeeds, fails for good, runs out of
// attempts or of budget, or ctx ends. It returns the attempts sent, the
// first one's send (the user's start: the send lag is measured to it,
// and the waits after it count in the user's latencies, not in the
// lag), and whether a retryable failure was given up on. res holds the
// last attempt. hold, when set, is the request's place under the cap on
// requests in flight: it is given up for each wait, when the request is
// in flight nowhere, so that a Retry-After does not hold back the sends
// scheduled meanwhile (their wait for a place would be counted as the
// client's send lag); the retry takes a place again before it is sent.
func (r *retrier) do(ctx context.Context, clk clock.Clock, d Doer, body []byte, id string, res *client.Result, hold *slot) (attempts int, userStart time.Time, gaveUp bool) {
	first := clk.Now() // on the clock the waits are slept on
	for n := 1; ; n++ {
		aid := id
		if n > 1 {
			aid = id + "-" + strconv.Itoa(n)
		}
		d.Do(ctx, body, aid, res)
		if n == 1 {
			userStart = res.Sent
		}
		switch {
		case res.OK(), ctx.Err() != nil, !r.p.Retryable(res):
			return n, userStart, false
		case n >= r.p.MaxAttempts || !r.allow():
			return n, userStart, true
		}
		w := r.wait(n, res)
		if r.p.Total > 0 {
			if left := first.Add(r.p.Total).Sub(clk.Now()); w >= left {
				// The wait would pass the request's timeout: a client
				// bounded by it gives up now, keeping the last answer.
				res.Detail = redact.Cut(fmt.Sprintf("%s; gave up: the %v wait before attempt %d would pass the request's %v timeout", res.Detail, w.Round(time.Millisecond), n+1, r.p.Total), 300)
				return n, userStart, true
			}
		}
		hold.release()
		if !clk.SleepUntil(ctx, clk.Now().Add(w), 0) || !hold.take(ctx) {
			// Stopped while waiting to retry: the user left, or the run did.
			res.Err, res.Detail = client.StoppedKind(ctx), "stopped during a retry's backoff"
			return n, userStart, false
		}
	}
}

// Retry sends one request outside a point (the prompt calibration's)
// under the policy (none without Retryable): its budget, which caps
// retries at a share of a point's requests, does not apply to one
// request. It returns the
// attempts sent; res holds the last.
func Retry(ctx context.Context, d Doer, p RetryPolicy, body []byte, id string, res *client.Result) int {
	if p.Retryable == nil {
		d.Do(ctx, body, id, res) // no policy: one attempt
		return 1
	}
	p.Budget = 0
	n, _, _ := newRetrier(&p).do(ctx, clock.Precise, d, body, id, res, nil)
	return n
}

// slot is one request's place under an open-loop point's cap on requests
// in flight (max_concurrency, or the one the descriptor limit sets).
type slot struct {
	sem  chan struct{}
	held bool
	// freed, when set, is stamped with the time of each release: a send
	// that waited for a place was due when one was freed, not when the
	// dispatcher woke to take it (that delay is the client's).
	freed *freedAt
}

// freedAt holds when a place under the cap was last given up.
type freedAt struct {
	clk clock.Clock
	ns  atomic.Int64
}

func (f *freedAt) mark() {
	if f != nil {
		f.ns.Store(f.clk.Now().UnixNano())
	}
}

// last is the latest release, or zero before any.
func (f *freedAt) last() time.Time {
	if f == nil {
		return time.Time{}
	}
	// One load: a release between two would pair one's check with
	// another's time.
	ns := f.ns.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// release gives the place up, if held; a nil slot holds none.
func (s *slot) release() {
	if s != nil && s.held {
		s.freed.mark() // before the place is free: its taker reads a time no later
		<-s.sem
		s.held = false
	}
}

// take waits for a place, unless one is held; false: ctx ended first.
func (s *slot) take(ctx context.Context) bool {
	if s == nil || s.held {
		return true
	}
	select {
	case s.sem <- struct{}{}:
		s.held = true
		return true
	case <-ctx.Done():
		return false
	}
}

// finish waits for the recorder and summarizes, unless building requests
// failed (errc), which fails the point. A non-zero endAt ends the measured
// window there (a point stopped early).
func (c *collector) finish(errc <-chan error, endAt time.Time) (result.Measured, error) {
	close(c.results)
	<-c.done
	if !endAt.IsZero() {
		c.rec.EndAt(endAt)
	}
	select {
	case err := <-errc:
		return result.Measured{}, fmt.Errorf("build requests: %w", err)
	default:
	}
	return c.rec.Point()
}

// openPlan checks an open-loop point's arrivals (all at once: every
// request at the start) and returns the config to draw them from and the
// schedule's end (0: the request bound alone), as the real-time and the
// virtual-time load generators both plan them.
func openPlan(cfg Config) (Config, time.Duration, error) {
	end := time.Duration(0)
	if cfg.Duration > 0 {
		end = cfg.Warmup + cfg.Duration
	}
	if cfg.AllAtOnce {
		if cfg.Requests <= 0 {
			return cfg, 0, fmt.Errorf("loadgen: all at once needs a request count")
		}
		cfg.Arrivals = func() workload.Process { return workload.AllAtOnce{} }
	}
	if cfg.Arrivals == nil {
		return cfg, 0, fmt.Errorf("loadgen: open loop needs an arrival process")
	}
	return cfg, end, nil
}

// openRun is one open-loop point's state, shared by its phases: plan,
// fill, start, dispatch (pace, take an item, take a place, tally,
// launch) and judge. The dispatcher's goroutine alone changes it while
// the point runs; each send's goroutine gets what it needs by value.
type openRun struct {
	d   Doer
	cfg Config
	// built is how long the requests took to build.
	built buildTime
	// The schedule to send, and the first pass's counts of it.
	sched                  *workload.Schedule
	total, measured, owned int
	// The requests built ahead, and those buffered before the start.
	bodies   *budget
	items    <-chan Item
	errc     <-chan error
	buffered []Item
	// The cap on requests in flight (nil: none), when a place was last
	// freed, and heldUntil: when the cap last let a waiting send go. A
	// later send due before it could not have gone earlier either (the
	// dispatcher sends in order), so its lag counts from there too.
	sem       chan struct{}
	freed     *freedAt
	heldUntil time.Time
	// The timeline and its measured window (winEnd zero: open to the
	// last completion).
	t0, winStart, winEnd time.Time
	col                  *collector
	// Sends run under sendCtx; the wait for an unbuilt body ends with
	// itemCtx.
	sendCtx, itemCtx context.Context
	wg               sync.WaitGroup
	// What the dispatcher did.
	prev                      time.Duration // the latest send's offset
	sends                     int
	capWaits, sentIn, schedIn int
	unbuilt                   int
	stopped                   bool
}

func runOpen(ctx context.Context, d Doer, cfg Config, src Source) (*Outcome, error) {
	o, err := planOpen(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	cfg = o.cfg // with the arrivals planned
	runCtx, cancelItems := context.WithCancel(ctx)
	defer cancelItems()
	o.bodies = newBudget(runCtx, MaxBodyBytes)
	o.built.slowOver = 10 * scheduleGap(cfg) // no moment's stall slows most builds past ten gaps
	o.items, o.errc = ahead(runCtx, src, o.total, cfg.Shard.Owns, o.bodies, &o.built)
	if cfg.MaxConcurrency > 0 {
		o.sem = make(chan struct{}, cfg.MaxConcurrency)
		o.freed = &freedAt{clk: cfg.Clock}
	}
	if err := o.fill(); err != nil {
		return nil, err
	}

	t0, skew := start(ctx, cfg)
	canary := stall.Start(ctx)
	o.open(t0)
	// Sends run under their own context, so that a saturated point can
	// stop sending and cancel its queue without stopping the run.
	sendCtx, cancelSends := context.WithCancel(ctx)
	defer cancelSends()
	var mon *monitor
	if cfg.StopSaturated && !cfg.AllAtOnce {
		o.col.watch = &saturationWatch{}
		mon = startMonitor(ctx, cfg, o.col.watch, o.winStart, o.winEnd, cancelSends)
	}
	// A request not built by SendOverrun past the window's end is not
	// waited for: prompts that take longer to build than the schedule
	// allows (a trace of huge prompts) must not stretch the point without
	// bound. What was due and not sent is the client's shortfall.
	o.sendCtx, o.itemCtx = sendCtx, sendCtx
	if !o.winEnd.IsZero() {
		var cancelItemWait context.CancelFunc
		o.itemCtx, cancelItemWait = context.WithDeadline(sendCtx, o.winEnd.Add(SendOverrun(cfg.Duration)))
		defer cancelItemWait()
	}

	o.dispatch()
	cancelItems()
	o.wg.Wait()
	stalls := canary.Stop()
	var endAt time.Time
	var saturation string
	if mon != nil {
		endAt, saturation = mon.stop()
	}
	p, err := o.col.finish(o.errc, endAt)
	if err != nil {
		return nil, err
	}
	// A point stopped for saturation is complete: it measured what it had to.
	incomplete := (o.stopped && saturation == "") || ctx.Err() != nil
	return o.outcome(p, incomplete, saturation, skew, stalls), nil
}

// planOpen checks the point's plan and counts it. A first pass counts
// the plan, drawing the same times as the second without keeping them:
// the count sizes the progress display and the request builder, and says
// whether the request bound ends the point before its duration.
func planOpen(ctx context.Context, d Doer, cfg Config) (*openRun, error) {
	cfg, end, err := openPlan(cfg)
	if err != nil {
		return nil, err
	}
	o := &openRun{d: d, cfg: cfg}
	o.total, o.measured, o.owned = count(ctx, workload.NewSchedule(cfg.Arrivals(), end, cfg.Warmup, cfg.Requests), cfg.Shard)
	cfg.Progress.Scheduled.Store(int64(o.owned))
	o.sched = workload.NewSchedule(cfg.Arrivals(), end, cfg.Warmup, cfg.Requests)
	return o, nil
}

// fill lets the source fill its buffer before the clock starts. Bodies
// past the budget are built once requests finish: the buffer holds what
// fits. Bodies slow to build (huge prompts) fill it for MaxFillWait at
// the most: the point's start is not put off by its own requests.
func (o *openRun) fill() error {
	warm := min(o.owned, 64)
	o.buffered = make([]Item, 0, warm)
	fillBy := time.NewTimer(MaxFillWait)
	defer fillBy.Stop()
fill:
	for range warm {
		select {
		case it, ok := <-o.items:
			if !ok {
				break fill
			}
			o.buffered = append(o.buffered, it)
		case <-o.bodies.full:
			break fill
		case <-fillBy.C:
			break fill
		}
	}
	select {
	case err := <-o.errc:
		return fmt.Errorf("build requests: %w", err)
	default:
	}
	return nil
}

// open fixes the measured window on the timeline starting at t0, and
// starts recording. The window is fixed when the schedule spans the whole
// duration; when the request bound cut it short it stays open to the
// last completion.
func (o *openRun) open(t0 time.Time) {
	cfg := o.cfg
	o.t0, o.winStart = t0, t0.Add(cfg.Warmup)
	if cfg.OnWindow != nil {
		cfg.OnWindow(o.winStart)
	}
	if cfg.Duration > 0 && (cfg.Requests == 0 || o.measured < cfg.Requests) {
		o.winEnd = o.winStart.Add(cfg.Duration)
	}
	rec := recorder.NewRecorder(o.winStart, o.winEnd)
	rec.Slices = recorder.NewSlicer(t0, cfg.Warmup+cfg.Duration, cfg.Warmup)
	o.col = newCollector(rec, cfg)
	o.col.bodies = o.bodies
}

// dispatch sends the schedule, each arrival in turn: wait for its time,
// take its request, take a place under the cap, count it, send it.
func (o *openRun) dispatch() {
	for i := 0; ; i++ {
		off, ok := o.sched.Next()
		if !ok {
			return
		}
		if !o.cfg.Shard.Owns(i) {
			continue // another machine's
		}
		at := o.t0.Add(off)
		if !o.pace(at, off) {
			o.stopped = true
			return
		}
		it, ok := o.next(i, off)
		if !ok {
			return
		}
		ready, ok := o.place(at)
		if !ok {
			o.stopped = true
			return
		}
		warmup := off < o.cfg.Warmup
		o.tally(at, warmup)
		o.launch(it, at, ready, warmup)
	}
}

// pace waits for a send's time; false: the sends were stopped.
func (o *openRun) pace(at time.Time, off time.Duration) bool {
	// Yielding through the last stretch before a send makes it
	// punctual, but burns the CPU meanwhile: at high rates every gap is
	// inside that stretch and the pacer would take a whole core from
	// the client and, on a shared machine, the server. A quarter of
	// each gap bounds it to a quarter of a core; the timer's lateness
	// past that is recorded as send lag.
	spin := min(clock.DefaultSpin, (off-o.prev)/4)
	o.prev = off
	return o.cfg.Clock.SleepUntil(o.sendCtx, at, spin)
}

// next takes the i-th arrival's request (due at off): buffered, or built
// since; false: none comes, the sends stopped or (counted in unbuilt) the
// wait for its body passed the deadline.
func (o *openRun) next(i int, off time.Duration) (Item, bool) {
	if o.sends < len(o.buffered) {
		o.sends++
		return o.buffered[o.sends-1], true
	}
	var it Item
	var ok bool
	// A body built is sent, however late: only the wait for one not yet
	// built ends at the deadline.
	select {
	case it, ok = <-o.items:
	default:
		select {
		case it, ok = <-o.items:
		case <-o.itemCtx.Done():
		}
	}
	if !ok && o.sendCtx.Err() == nil && o.itemCtx.Err() != nil {
		o.unbuilt = unsent(o.sched, i, o.t0, off, o.cfg, o.winEnd)
		o.schedIn += o.unbuilt
		return it, false
	}
	if !ok {
		o.stopped = true
		return it, false
	}
	o.sends++
	return it, true
}

// place takes a place under the cap on requests in flight, if any, and
// returns when the send was ready to go, if not when due (zero); false:
// the sends stopped while it waited.
func (o *openRun) place(at time.Time) (ready time.Time, ok bool) {
	if o.sem != nil {
		select {
		case o.sem <- struct{}{}:
		default:
			o.capWaits++
			select {
			case o.sem <- struct{}{}:
			case <-o.sendCtx.Done():
				return time.Time{}, false
			}
			if o.cfg.DescriptorLimit == 0 {
				// The suite's own cap held the send: the lag counts
				// from when a place was freed. A cap this machine's
				// descriptor limit set is the client's, and its wait
				// stays lag.
				ready = o.freed.last()
				if ready.Before(at) {
					ready = at
				}
				o.heldUntil = ready
			}
		}
	}
	if ready.IsZero() && at.Before(o.heldUntil) {
		ready = o.heldUntil
	}
	return ready, true
}

// tally counts a send due at at in the schedule's and the sent rates when
// it falls in the window.
func (o *openRun) tally(at time.Time, warmup bool) {
	if !warmup && (o.winEnd.IsZero() || at.Before(o.winEnd)) {
		o.schedIn++
		if now := o.cfg.Clock.Now(); o.winEnd.IsZero() || now.Before(o.winEnd) {
			o.sentIn++
		}
	}
}

// launch sends the request on its own goroutine, which gives its place
// under the cap up once it ends.
func (o *openRun) launch(it Item, at, ready time.Time, warmup bool) {
	var hold *slot
	if o.sem != nil {
		hold = &slot{sem: o.sem, held: true, freed: o.freed}
	}
	col, ctx, d, wg := o.col, o.sendCtx, o.d, &o.wg
	wg.Add(1)
	go func() {
		defer wg.Done()
		col.send(ctx, d, it, at, ready, warmup, hold)
		hold.release()
	}()
}

// outcome judges the point from what it measured and what the dispatcher
// did.
func (o *openRun) outcome(p result.Measured, incomplete bool, saturation string, skew float64, stalls stall.Reading) *Outcome {
	cfg := o.cfg
	out := &Outcome{Measured: p, Incomplete: incomplete}
	out.Schedule = result.Schedule{TargetRate: cfg.Rate, CapWaits: o.capWaits, Saturation: saturation, StartSkewMs: skew}
	if secs := p.Window.Seconds; secs > 0 {
		out.Schedule.ScheduledRate = float64(o.schedIn) / secs
		out.Schedule.SendRate = float64(o.sentIn) / secs
	}
	lag := p.Latency[metric.Lag].P99
	if cfg.AllAtOnce {
		lag = 0 // waiting for a slot is the test, not the client falling behind
	}
	judge(&out.Schedule, lag, cfg.MaxConcurrency, cfg.DescriptorLimit)
	judgeLimits(&out.Schedule, p.Requests)
	if cpu := stalls.CPUShort(); cpu != "" && out.Schedule.ClientSaturated {
		// Name the resource that ran out first: with every core busy, a
		// descriptor cap that bit is a symptom, not the cause.
		out.Schedule.Reason = cpu + "; " + out.Schedule.Reason
	}
	gap := scheduleGap(cfg)
	out.Validity = judgeValidity(p, out.Schedule, lag, gap, o.capWaits > 0 && cfg.DescriptorLimit > 0, o.capWaits > 0 && cfg.DescriptorLimit == 0, stalls)
	if o.unbuilt > 0 {
		out.Validity.Invalid = append(out.Validity.Invalid, fmt.Sprintf("%d requests due in the window were not sent: their bodies were not built %v after it closed (prompts too long to build at this rate); the client's shortfall, not the server's",
			o.unbuilt, SendOverrun(cfg.Duration)))
		if o.built.mostlySlow() {
			// Not a moment's stall: most requests took ten times the
			// schedule's gap to build, and a rerun builds the same prompts.
			out.Final = fmt.Sprintf("a request took %v to build on average where the schedule gives %v, and a rerun would build the same prompts", o.built.mean().Round(time.Millisecond), gap.Round(time.Microsecond))
		}
	}
	return out
}

// MaxFillWait bounds the time an open-loop point waits, before its
// clock starts, for requests to be built ahead.
const MaxFillWait = 2 * time.Second

// SendOverrun is how long past its window's end an open-loop point waits
// for requests still being built: a tenth of its duration, at least a
// second and at most a minute.
func SendOverrun(d time.Duration) time.Duration {
	return min(max(d/10, time.Second), time.Minute)
}

// unsent counts the arrivals from the i-th (due at off, not sent) to the
// schedule's end that were due in the window and owned by this shard.
func unsent(sched *workload.Schedule, i int, t0 time.Time, off time.Duration, cfg Config, winEnd time.Time) int {
	n := 0
	for ; ; i++ {
		if cfg.Shard.Owns(i) && off >= cfg.Warmup && t0.Add(off).Before(winEnd) {
			n++
		}
		var ok bool
		if off, ok = sched.Next(); !ok {
			return n
		}
	}
}

// start waits for the point's aligned start, when it has one, and returns
// the time its timeline starts and how late that was, in milliseconds.
// Without StartAt the timeline starts now.
func start(ctx context.Context, cfg Config) (time.Time, float64) {
	if cfg.StartAt.IsZero() {
		return cfg.Clock.Now(), 0
	}
	// The timeline starts at StartAt itself when the machine is there in
	// time, so every shard's offsets count from one instant; a late one
	// starts now, and says by how much.
	cfg.Clock.SleepUntil(ctx, cfg.StartAt, clock.DefaultSpin)
	now := cfg.Clock.Now()
	late := max(0, now.Sub(cfg.StartAt))
	if late > time.Millisecond {
		return now, float64(late) / float64(time.Millisecond)
	}
	return cfg.StartAt, float64(late) / float64(time.Millisecond)
}

// count runs a schedule to its end: how many arrivals, and how many of
// them are measured. Validation bounds a plan (suite.MaxPlannedRequests),
// yet a canceled run must not wait for the count: it stops early, and the
// dispatcher, seeing the same cancellation, sends nothing.
// owned counts the arrivals the shard sends.
func count(ctx context.Context, s *workload.Schedule, sh Shard) (total, measured, owned int) {
	for {
		if _, more := s.Next(); !more {
			break
		}
		if sh.Owns(total) {
			owned++
		}
		total++
		if total%(1<<16) == 0 && ctx.Err() != nil {
			break
		}
	}
	return total, s.Measured(), owned
}

// judge flags a client that fell behind its own schedule. lagP99ms is
// the client's own lateness: a wait for a place under the suite's
// max_concurrency is not in it (recorder.Sample.Ready), and sends that
// such waits held past the window are not the client's shortfall either:
// the server, at its cap, could not take the rate. Flagging them sent
// users after their client when the server was the bottleneck.
func judge(s *result.Schedule, lagP99ms float64, maxConc, fdLimit int) {
	lagLimit := float64(MaxLagP99) / float64(time.Millisecond)
	suiteCapped := s.CapWaits > 0 && fdLimit == 0
	switch {
	case s.ScheduledRate > 0 && s.SendRate < MinSendRatio*s.ScheduledRate && !suiteCapped:
		s.ClientSaturated = true
		s.Reason = fmt.Sprintf("sent %.1f req/s of %.1f scheduled (below %.0f%%)", s.SendRate, s.ScheduledRate, MinSendRatio*100)
	case lagP99ms > lagLimit:
		s.ClientSaturated = true
		s.Reason = fmt.Sprintf("P99 send lag %.1f ms exceeds %.0f ms", lagP99ms, lagLimit)
	}
	switch {
	case s.CapWaits == 0:
	case fdLimit > 0:
		// The cap was this machine's, not the suite's: whatever the lag,
		// the server was offered less than planned because of the client.
		flagClient(s, fmt.Sprintf("this machine's descriptor limit (%d) capped requests in flight at %d and %d sends waited for it: raise it (ulimit -n) or set max_concurrency", fdLimit, maxConc, s.CapWaits))
	case s.ClientSaturated && maxConc > 0:
		s.Reason += fmt.Sprintf("; max_concurrency %d also delayed %d sends (not counted as lag)", maxConc, s.CapWaits)
	}
}

// judgeLimits flags a point some of whose requests this machine could not
// send: the load it put on the server was less than planned.
func judgeLimits(s *result.Schedule, r result.Requests) {
	if r.ClientLimited == 0 {
		return
	}
	flagClient(s, fmt.Sprintf("%d requests failed on this machine's own limits (%s): raise the descriptor limit (ulimit -n) or set max_concurrency", r.ClientLimited, r.ClientLimitError))
}

// flagClient marks the point as limited by the client, adding why to any
// reason already given.
func flagClient(s *result.Schedule, why string) {
	if s.ClientSaturated {
		s.Reason += "; " + why
	} else {
		s.ClientSaturated, s.Reason = true, why
	}
}

// closedRun is a closed-loop point's state, shared by its workers.
type closedRun struct {
	d     Doer
	cfg   Config
	items <-chan Item
	col   *collector
	// The measured window's start, and when sends stop (zero: when the
	// request bound or the items do).
	winStart, stopAt time.Time
	measured, sentIn atomic.Int64
	// Workers whose warm-up request was still running when the window
	// closed measured nothing in it, and the longest such request.
	warmHeld, warmLongest atomic.Int64
}

func runClosed(ctx context.Context, d Doer, cfg Config, src Source) (*Outcome, error) {
	runCtx, cancelItems := context.WithCancel(ctx)
	defer cancelItems()
	bodies := newBudget(runCtx, MaxBodyBytes)
	items, errc := ahead(runCtx, src, -1, cfg.Shard.Owns, bodies, nil)

	t0, skew := start(ctx, cfg)
	canary := stall.Start(ctx)
	r := &closedRun{d: d, cfg: cfg, items: items, winStart: t0.Add(cfg.Warmup)}
	if cfg.OnWindow != nil {
		cfg.OnWindow(r.winStart)
	}
	winEnd := time.Time{}
	if cfg.Duration > 0 && cfg.Requests == 0 {
		winEnd = r.winStart.Add(cfg.Duration)
	}
	if cfg.Duration > 0 {
		r.stopAt = r.winStart.Add(cfg.Duration)
	}
	rec := recorder.NewRecorder(r.winStart, winEnd)
	rec.Slices = recorder.NewSlicer(t0, cfg.Warmup+cfg.Duration, cfg.Warmup)
	r.col = newCollector(rec, cfg)
	r.col.bodies = bodies
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx)
		}()
	}
	wg.Wait()
	cancelItems()
	stalls := canary.Stop()
	p, err := r.col.finish(errc, time.Time{})
	if err != nil {
		return nil, err
	}
	return r.outcome(p, ctx.Err() != nil, skew, stalls), nil
}

// work is one worker: it sends a request as soon as the previous one's
// answer ends, until the window, the request bound or the items end.
func (r *closedRun) work(ctx context.Context) {
	cfg := r.cfg
	// A worker means to send as its last answer ends: the time from
	// that end to the next send is its lag, as a late timer is an
	// open loop's.
	var due time.Time
	for ctx.Err() == nil {
		now := cfg.Clock.Now()
		if !r.stopAt.IsZero() && !now.Before(r.stopAt) {
			return
		}
		warmup := now.Before(r.winStart)
		if !warmup && cfg.Requests > 0 && r.measured.Add(1) > int64(cfg.Requests) {
			return
		}
		it, ok := <-r.items
		if !ok {
			return
		}
		if !warmup {
			r.sentIn.Add(1)
		}
		now = cfg.Clock.Now()
		if due.IsZero() || due.After(now) {
			due = now
		}
		due = r.col.send(ctx, r.d, it, due, time.Time{}, warmup, nil)
		if end := cfg.Clock.Now(); warmup && !r.stopAt.IsZero() && !end.Before(r.stopAt) && ctx.Err() == nil {
			r.heldInWarmup(end.Sub(now))
		}
	}
}

// heldInWarmup counts a worker whose warm-up request, which took took,
// outlasted the window.
func (r *closedRun) heldInWarmup(took time.Duration) {
	r.warmHeld.Add(1)
	for old := r.warmLongest.Load(); int64(took) > old && !r.warmLongest.CompareAndSwap(old, int64(took)); old = r.warmLongest.Load() {
	}
}

// outcome judges the point from what it measured and its workers sent.
func (r *closedRun) outcome(p result.Measured, incomplete bool, skew float64, stalls stall.Reading) *Outcome {
	out := &Outcome{Measured: p, Incomplete: incomplete}
	out.Schedule.StartSkewMs = skew
	if secs := p.Window.Seconds; secs > 0 {
		out.Schedule.SendRate = float64(r.sentIn.Load()) / secs
	}
	judgeLimits(&out.Schedule, p.Requests)
	out.Validity = judgeValidity(p, out.Schedule, p.Latency[metric.Lag].P99, time.Duration(p.Latency[metric.E2E].P50*float64(time.Millisecond)), false, false, stalls)
	if n := r.warmHeld.Load(); n > 0 {
		out.Validity.Invalid = append(out.Validity.Invalid, warmupOutlasted(int(n), r.cfg, time.Duration(r.warmLongest.Load()), p.Requests.Sent))
	}
	if len(out.Validity.Invalid) > 0 && !out.Schedule.ClientSaturated {
		// Closed-loop points are judged too: a late worker offered less.
		flagClient(&out.Schedule, out.Validity.Invalid[0])
	}
	return out
}

// warmupOutlasted says that held workers' warm-up requests were still
// running when the window closed: those workers measured nothing, so the
// point offered less than its concurrency (or nothing at all). It is the
// suite's timing against this server, not the server's figure nor a
// failure: the point is inconclusive and the reason names the setting.
func warmupOutlasted(held int, cfg Config, longest time.Duration, sent int) string {
	what := "less than its concurrency"
	if sent == 0 {
		what = "no request"
	}
	return fmt.Sprintf("%d of %d workers' warm-up requests were still running when the window closed (the longest took %s; warm-up %s, window %s): the point measured %s; lengthen sweep.duration past the server's answer time, or shorten sweep.warmup",
		held, cfg.Concurrency, longest.Round(100*time.Millisecond), cfg.Warmup, cfg.Duration, what)
}
