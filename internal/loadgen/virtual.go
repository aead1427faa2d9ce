package loadgen

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/stall"
	"github.com/benchci/benchci/internal/workload"
)

// VirtualServer is a server whose time is simulated (sim.Replay, through
// the runner): requests are handed to it at a virtual time, and it is
// stepped by the caller, each step taking the time its cost says.
type VirtualServer interface {
	// Submit admits a request (its Body, or its Text) arriving at at; an
	// error is the server's refusal of it (a 400). prompt is its prompt's
	// tokens. The ids of admitted requests are consecutive: each is one
	// more than the last.
	Submit(it *Item, at time.Time) (id, prompt int, err error)
	// Cancel drops a request, as a client closing its stream does.
	Cancel(id int)
	// Busy reports whether requests are on their way in, wait or run.
	Busy() bool
	// Start begins the next step at now and returns its cost; false:
	// nothing can run.
	Start(now time.Time) (time.Duration, bool)
	// Waiting reports whether the step begun is only a wait for a request
	// still on the server's request path: it reports nothing, and the
	// loop ends it early when anything happens (a later request may
	// arrive sooner), to start again.
	Waiting() bool
	// End ends the step, reporting each request that produced tokens.
	End(report func(id, produced int, finished bool))
}

// Virtual is what RunVirtual needs beyond the point's Config.
type Virtual struct {
	Server VirtualServer
	// Start is the virtual time the point's timeline starts at.
	Start time.Time
	// Timeout bounds a request from send to its end, FirstTokenTimeout
	// from send to its first token, IdleTimeout a gap between its chunks
	// (0: unbounded), as the client's do (client.Options).
	Timeout, FirstTokenTimeout, IdleTimeout time.Duration
}

// RunVirtual runs one point in virtual time: the same requests from src,
// on the same timeline (the arrival schedule, closed-loop workers,
// sessions' think times, the cap on requests in flight, the warm-up and
// the window, abandonment), but handed to a simulated server whose steps
// advance a simulated clock instead of being slept. Each request becomes
// a recorder.Sample stamped in that clock, so the recorder, the validity
// judgement and everything after it make the point as they make a
// measured one. It runs on the caller's goroutine, opens nothing and
// sleeps nowhere; the same inputs give the same point every time.
//
// The client is perfect here: every request goes when it is due and every
// token is read when the engine emits it, so there is no send lag, no
// coalesced chunk and no stall; what a real client adds (HTTP, SSE
// parsing, a busy machine) is absent from its figures.
//
// Features whose effect it does not model are refused: retries (no server
// here fails transiently), shards, aligned starts, and structured answers
// (no text is produced to check).
func RunVirtual(ctx context.Context, v Virtual, cfg Config, src Source) (*Outcome, error) {
	switch {
	case cfg.Retry != nil:
		return nil, errors.New("loadgen: a virtual-time point cannot retry: the simulated server never fails transiently")
	case cfg.Shard.Count > 1:
		return nil, errors.New("loadgen: a virtual-time point cannot be sharded")
	case !cfg.StartAt.IsZero():
		return nil, errors.New("loadgen: a virtual-time point has no wall-clock start to align to")
	case cfg.Check != nil:
		return nil, errors.New("loadgen: a virtual-time point produces no answer text to check against a schema")
	case v.Server == nil:
		return nil, errors.New("loadgen: a virtual-time point needs a simulated server")
	}
	if cfg.Progress == nil {
		cfg.Progress = &Progress{}
	}
	src, quit := prefetch(src)
	defer quit()
	r := &vrun{ctx: ctx, cfg: cfg, v: v, srv: v.Server, src: src, now: v.Start}
	switch cfg.Mode {
	case OpenLoop:
		return r.open(v.Start)
	case ClosedLoop:
		return r.closed(v.Start)
	}
	return nil, fmt.Errorf("loadgen: unknown mode %q", cfg.Mode)
}

// prefetch draws the source's items on a goroutine of their own, in
// order, ahead of the replay: building a request's body costs about as
// much as replaying it, and the replay runs on one goroutine. quit stops
// the drawing; items drawn and not taken are dropped (the source is the
// point's own, from its start, so nothing after it sees them).
func prefetch(src Source) (next Source, quit func()) {
	const batch = 64
	type drawn struct {
		items []Item
		err   error
	}
	ch := make(chan drawn, 8)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			d := drawn{items: make([]Item, 0, batch)}
			for len(d.items) < batch && d.err == nil {
				it, err := src()
				if err != nil {
					d.err = err
					break
				}
				d.items = append(d.items, it)
			}
			select {
			case ch <- d:
			case <-stop:
				return
			}
			if d.err != nil {
				return
			}
		}
	}()
	var cur drawn
	next = func() (Item, error) {
		for len(cur.items) == 0 {
			if cur.err != nil {
				return Item{}, cur.err
			}
			cur = <-ch
		}
		it := cur.items[0]
		cur.items[0] = Item{}
		cur.items = cur.items[1:]
		return it, nil
	}
	return next, func() { close(stop); <-done }
}

// Event kinds of the virtual timeline, other than arrivals and steps.
const (
	evSend         = iota // a session's next turn is due (its think time ended)
	evWorker              // a closed-loop worker sends its next request
	evAbandon             // a user gives up waiting (Item.AbandonAt)
	evTick                // the saturation watch's tick
	evTimeout             // a request's timeout (Virtual.Timeout): not in the heap, see live
	evFirstTimeout        // its first-token timeout: likewise
)

// work reports whether events of the kind are work left to do, rather
// than deadlines (which pass unnoticed once their request ended) or ticks.
func work(kind int) bool { return kind == evSend || kind == evWorker }

type vevent struct {
	at   time.Time
	n    uint64 // order of pushing: ties go first-pushed first, the same every run
	kind int
	s    *vsession
	r    *vreq
}

type vqueue []vevent

func (q vqueue) Len() int { return len(q) }
func (q vqueue) Less(i, j int) bool {
	if c := q[i].at.Compare(q[j].at); c != 0 {
		return c < 0
	}
	return q[i].n < q[j].n
}
func (q vqueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *vqueue) Push(x any)   { *q = append(*q, x.(vevent)) }
func (q *vqueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// vsession is one item and its follow-up turns, sent one after another.
type vsession struct {
	first  Item
	turn   int // the turn being sent: 0 the first, i the FollowUps[i-1]
	warmup bool
	worker bool // a closed-loop worker's: it sends again when this ends
	hold   bool // holds a place under the cap on requests in flight
}

// requestID is the id of the turn being sent, as the client names it.
func (s *vsession) requestID() string {
	id := "benchci-" + strconv.Itoa(s.first.Seq+1)
	if s.turn > 0 {
		id += ".t" + strconv.Itoa(s.turn+1)
	}
	return id
}

// result returns the turn's result, made on first use.
func (q *vreq) result() *client.Result {
	if q.res == nil {
		q.res = &client.Result{ID: q.s.requestID(), Sent: q.sent, PromptTokens: q.prompt}
	}
	return q.res
}

// sample is the turn's sample, for the recorder.
func (q *vreq) sample() recorder.Sample {
	it := q.s.item()
	return recorder.Sample{Result: q.result(), Scheduled: q.scheduled, Ready: q.ready, Warmup: q.s.warmup,
		WantInput: it.WantInput, WantOutput: it.WantOutput, Model: it.Model, Inputs: it.Inputs, Images: it.Images}
}

func (s *vsession) item() *Item {
	if s.turn == 0 {
		return &s.first
	}
	return &s.first.FollowUps[s.turn-1]
}

// vreq is one turn in flight. A saturated server queues many: what is
// the same for every turn of its session, or can wait for its first
// token, is not kept here (see result and sample).
type vreq struct {
	s                      *vsession
	id                     int // the server's
	abandonAfter           int // Item.AbandonAfter
	prompt                 int // its prompt's tokens, as the server counted them
	sent, scheduled, ready time.Time
	// res is its result, made when its first tokens or its end come.
	res      *client.Result
	produced int
	done     bool
	// nTimeout and nFirst order its deadlines among events of the same
	// instant, as if they had been pushed when it was sent.
	nTimeout, nFirst uint64
}

type vrun struct {
	ctx context.Context
	cfg Config
	v   Virtual
	srv VirtualServer
	src Source
	now time.Time
	q   vqueue
	n   uint64
	// live holds the requests the server admitted, by id from liveBase
	// on, nil once ended: sent in time order, so their deadlines (a
	// duration after the send) come in its order too, and the request
	// timeouts are the first live ones rather than a heap entry each.
	// timeoutAt and firstAt are the ids whose deadlines come next.
	live               []*vreq
	liveBase, liveN    int
	timeoutAt, firstAt int
	rec                *recorder.Recorder
	// pending counts queued events other than ticks: work that is left.
	pending int
	// items counts the items drawn from src (their Seq).
	items int
	// stopped: the point stopped sending (saturated, or the run ended).
	stopped bool
	// watch, when set, is the saturation watch, ticked once a second.
	watch *saturationWatch
	satAt time.Time
	sat   string
	// cap on requests in flight (open loop), and the sessions waiting for
	// a place, in arrival order, with when each was due.
	capacity, holding int
	queued            []queuedSend
	capWaits          int
	// stuck: the server could not start a step, and nothing has happened
	// since that could change it.
	stuck bool
	// winEnd of the measured window, for the send counts (zero: open).
	winEnd      time.Time
	sentIn      int
	stopAt      time.Time // closed loop: workers stop sending here
	winStart    time.Time
	measuredReq int // closed loop: measured requests taken
	srcErr      error
	// arrivalsLeft: the open loop's schedule has arrivals to come.
	arrivalsLeft bool
}

type queuedSend struct {
	s  *vsession
	at time.Time
}

func (r *vrun) push(at time.Time, kind int, s *vsession, q *vreq) {
	r.n++
	if work(kind) {
		r.pending++
	}
	heap.Push(&r.q, vevent{at: at, n: r.n, kind: kind, s: s, r: q})
}

// next draws the next item from the source, numbered in sequence.
func (r *vrun) next() (Item, bool) {
	it, err := r.src()
	if err != nil {
		r.srcErr = err
		r.stopped = true
		return Item{}, false
	}
	it.Seq = r.items
	r.items++
	return it, true
}

// send hands the session's current turn to the server at at.
func (r *vrun) send(s *vsession, scheduled, ready time.Time) {
	it := s.item()
	at := scheduled
	if ready.After(at) {
		at = ready
	}
	q := &vreq{s: s, abandonAfter: it.AbandonAfter, sent: at, scheduled: scheduled, ready: ready}
	r.cfg.Progress.Sent.Add(1)
	r.cfg.Progress.InFlight.Add(1)
	sid, prompt, err := r.srv.Submit(it, at)
	if s.turn == 0 {
		s.first.Body, s.first.Text = nil, nil // the server has read it; a queue of them would be most of the memory
	}
	if err != nil {
		// The server's 400, answered at once (no time passes on a
		// refusal in the simulated clock).
		res := q.result()
		res.Status, res.Err = 400, client.ErrHTTP
		res.Detail = redact.Cut("HTTP 400: "+err.Error(), 300)
		r.finish(q, at)
		return
	}
	q.id, q.prompt = sid, prompt
	r.admitted(q)
	if it.AbandonAt > 0 {
		r.push(at.Add(it.AbandonAt), evAbandon, s, q)
	}
	if r.v.Timeout > 0 {
		r.n++
		q.nTimeout = r.n
	}
	if r.v.FirstTokenTimeout > 0 {
		r.n++
		q.nFirst = r.n
	}
}

// admitted files a request the server admitted under its id.
func (r *vrun) admitted(q *vreq) {
	if len(r.live) == 0 {
		// Nothing live: start afresh at this id (the server's ids go on
		// from point to point).
		r.live = r.live[:0]
		r.liveBase, r.timeoutAt, r.firstAt = q.id, q.id, q.id
	}
	if q.id != r.liveBase+len(r.live) {
		panic(fmt.Sprintf("loadgen: the virtual server admitted id %d after %d", q.id, r.liveBase+len(r.live)-1))
	}
	r.live = append(r.live, q)
	r.liveN++
}

// lookup returns the live request of the id, or nil.
func (r *vrun) lookup(id int) *vreq {
	if i := id - r.liveBase; i >= 0 && i < len(r.live) {
		return r.live[i]
	}
	return nil
}

// ended takes a request out of live, and the ended ones off its front.
func (r *vrun) ended(q *vreq) {
	i := q.id - r.liveBase
	if i < 0 || i >= len(r.live) || r.live[i] != q {
		return // refused: never admitted
	}
	r.live[i] = nil
	r.liveN--
	n := 0
	for n < len(r.live) && r.live[n] == nil {
		n++
	}
	if n == 0 {
		return
	}
	r.liveBase += n
	r.live = r.live[n:]
	if cap(r.live) > 4*len(r.live)+1024 {
		// Give back what a queue that has drained left behind.
		r.live = append([]*vreq(nil), r.live...)
	}
	r.timeoutAt, r.firstAt = max(r.timeoutAt, r.liveBase), max(r.firstAt, r.liveBase)
}

// deadline returns the next request deadline, its kind and request: the
// request timeout of the first live request, or the first-token timeout
// of the first live one whose deadline has not passed.
func (r *vrun) deadline() (vevent, bool) {
	var e vevent
	have := false
	if d := r.v.Timeout; d > 0 {
		for r.timeoutAt < r.liveBase+len(r.live) && r.live[r.timeoutAt-r.liveBase] == nil {
			r.timeoutAt++
		}
		if i := r.timeoutAt - r.liveBase; i < len(r.live) {
			q := r.live[i]
			e, have = vevent{at: q.sent.Add(d), n: q.nTimeout, kind: evTimeout, s: q.s, r: q}, true
		}
	}
	if d := r.v.FirstTokenTimeout; d > 0 {
		for r.firstAt < r.liveBase+len(r.live) && r.live[r.firstAt-r.liveBase] == nil {
			r.firstAt++
		}
		if i := r.firstAt - r.liveBase; i < len(r.live) {
			q := r.live[i]
			f := vevent{at: q.sent.Add(d), n: q.nFirst, kind: evFirstTimeout, s: q.s, r: q}
			if !have || before(f, e) {
				e, have = f, true
			}
		}
	}
	return e, have
}

// before orders events: by time, then by when they were pushed.
func before(a, b vevent) bool {
	if c := a.at.Compare(b.at); c != 0 {
		return c < 0
	}
	return a.n < b.n
}

// peek returns the next event, from the heap or a deadline.
func (r *vrun) peek() (vevent, bool) {
	e, have := r.deadline()
	if len(r.q) > 0 && (!have || before(r.q[0], e)) {
		return r.q[0], true
	}
	return e, have
}

// pop takes the event peek returned.
func (r *vrun) pop(e vevent) {
	switch e.kind {
	case evTimeout:
		r.timeoutAt = e.r.id + 1
	case evFirstTimeout:
		r.firstAt = e.r.id + 1
	default:
		heap.Pop(&r.q)
	}
}

// timedOut fails a request the client gave up on at t, as its timeout does.
func (r *vrun) timedOut(q *vreq, t time.Time, why string) {
	res := q.result()
	res.OutputTokens, res.TokenSource = q.produced, client.TokensFromCounter
	res.Err, res.Detail = client.ErrTimeout, why
	r.srv.Cancel(q.id)
	r.finish(q, t)
}

// tokens takes a step's tokens for a request at t.
func (r *vrun) tokens(id, produced int, finished bool, t time.Time) {
	q := r.lookup(id)
	if q == nil || q.done {
		return
	}
	res := q.result()
	if d := r.v.IdleTimeout; d > 0 && len(res.ChunkAt) > 0 {
		if last := res.Sent.Add(res.ChunkAt[len(res.ChunkAt)-1]); t.Sub(last) > d {
			// The client stopped waiting before these tokens came. It is
			// seen here, when they come, and dated when it happened.
			r.timedOut(q, last.Add(d), fmt.Sprintf("no chunk for %v (idle timeout)", d))
			return
		}
	}
	off := t.Sub(res.Sent)
	n := produced - q.produced
	q.produced = produced
	if len(res.ChunkAt) == 0 {
		if n := min(q.s.item().WantOutput, 1<<10); n > 0 && cap(res.ChunkAt) == 0 {
			// A chunk a token at most: sized once rather than grown by
			// doubling, which was a tenth of a replay's time.
			res.ChunkAt, res.ChunkTokens = make([]time.Duration, 0, n), make([]int32, 0, n)
		}
		res.FirstToken, res.FirstAnswer = off, off
		if r.watch != nil {
			r.watch.firstToken(off)
		}
	}
	res.ChunkAt = append(res.ChunkAt, off)
	res.ChunkTokens = append(res.ChunkTokens, int32(n))
	if a := q.abandonAfter; a > 0 && produced >= a {
		// The user stops reading once that many tokens came, as the
		// client does (even on the last chunk: it never reads [DONE]).
		res.End, res.OutputTokens, res.TokenSource = off, produced, client.TokensFromCounter
		res.Err, res.Detail = client.ErrAbandoned, fmt.Sprintf("abandoned by the workload after %d tokens", produced)
		r.srv.Cancel(id)
		r.finish(q, t)
		return
	}
	if finished {
		res.End, res.OutputTokens, res.TokenSource = off, produced, client.TokensFromUsage
		res.Finish = client.FinishLength // the simulator's unstructured answers end at max_tokens
		r.finish(q, t)
	}
}

// finish records a turn that ended at t and moves its session on.
func (r *vrun) finish(q *vreq, t time.Time) {
	q.done = true
	r.ended(q)
	res := q.result()
	if res.End == 0 && res.Err != "" {
		res.End = t.Sub(res.Sent)
	}
	r.cfg.Progress.InFlight.Add(-1)
	r.cfg.Progress.Done.Add(1)
	if !res.OK() && res.Err != client.ErrCanceled && res.Err != client.ErrAbandoned {
		r.cfg.Progress.Failed.Add(1)
	}
	smp := q.sample()
	r.rec.Add(smp)
	if r.cfg.OnSample != nil {
		r.cfg.OnSample(smp)
	}
	s := q.s
	if res.OK() && s.turn < len(s.first.FollowUps) && !r.stopped {
		think := s.item().Think
		s.turn++
		r.push(t.Add(think), evSend, s, nil)
		return
	}
	if res.Err != "" && res.End == 0 {
		// Refused at once: in the simulated clock no time passed. A
		// closed-loop worker sending again in the same instant would
		// never let the clock move; it waits a loopback round trip.
		t = t.Add(refusalTurnaround)
	}
	r.sessionEnded(s, t)
}

// refusalTurnaround is how long a refused request keeps its closed-loop
// worker: about a 400's round trip on loopback.
const refusalTurnaround = time.Millisecond

// sessionEnded frees what the session held: its place under the cap, or
// its worker.
func (r *vrun) sessionEnded(s *vsession, t time.Time) {
	if s.hold {
		s.hold = false
		r.holding--
		if len(r.queued) > 0 && !r.stopped {
			// The first waiting send takes the place as it is freed.
			w := r.queued[0]
			r.queued = r.queued[1:]
			r.dispatch(w.s, w.at, t)
		}
	}
	if s.worker && !r.stopped {
		r.push(t, evWorker, nil, nil)
	}
}

// dispatch sends an open-loop session due at at, ready at ready (zero:
// when due), counting it in the window's sends.
func (r *vrun) dispatch(s *vsession, at, ready time.Time) {
	if r.capacity > 0 {
		s.hold = true
		r.holding++
	}
	sentAt := later(at, ready)
	if !s.warmup && (r.winEnd.IsZero() || sentAt.Before(r.winEnd)) {
		r.sentIn++
	}
	r.send(s, at, ready)
}

// stop ends the point's sending at t: what is in flight is canceled, as a
// canceled send context does, and waiting sends never go.
func (r *vrun) stop(t time.Time) {
	r.stopped = true
	r.queued = nil
	r.failLive(t, client.ErrCanceled, "the point was stopped")
}

// loop runs the timeline: the next arrival (arrive, when not nil), queued
// events and the server's steps, in time order, until nothing is left.
func (r *vrun) loop(nextArrival func() (time.Time, bool), arrive func(time.Time)) {
	var stepEnd time.Time
	stepping := false
	report := func(id, produced int, finished bool) { r.tokens(id, produced, finished, stepEnd) }
	for iter := 0; ; iter++ {
		if iter%4096 == 0 && r.ctx.Err() != nil && !r.stopped {
			r.stop(r.now)
		}
		ta, haveArrival := time.Time{}, false
		if !r.stopped && nextArrival != nil {
			ta, haveArrival = nextArrival()
		}
		next, haveEvent := r.peek()
		te := next.at
		if stepping {
			if (!haveArrival || !ta.Before(stepEnd)) && (!haveEvent || !te.Before(stepEnd)) {
				// The step's tokens come before what happens at its end:
				// the engine emits, then takes the arrivals, then steps.
				r.now = stepEnd
				stepping = false
				r.srv.End(report)
				continue
			}
		} else if r.srv.Busy() && !r.stuck && (!haveArrival || ta.After(r.now)) && (!haveEvent || te.After(r.now)) {
			cost, ok := r.srv.Start(r.now)
			if ok {
				stepping, stepEnd = true, r.now.Add(cost)
				continue
			}
			r.stuck = true // nothing fits until a request arrives or leaves
		}
		switch {
		case haveArrival && (!haveEvent || !te.Before(ta)):
			r.now = later(r.now, ta)
			r.stuck = false
			arrive(ta)
			stepping = r.endWait(stepping, report)
		case haveEvent:
			e := next
			r.pop(e)
			if work(e.kind) {
				r.pending--
			} else if e.r != nil && e.r.done {
				continue // a deadline of a request that ended: nothing happens
			}
			r.now = later(r.now, e.at)
			r.stuck = false
			r.event(e)
			stepping = r.endWait(stepping, report)
		default:
			// Nothing left to happen: what is still live can never be
			// admitted (a prompt larger than the KV cache). A client
			// would wait for it until its timeout; it is failed here.
			r.unserved()
			return
		}
	}
}

// endWait ends a step that is only a wait for a request on its way in
// (VirtualServer.Waiting): what just happened may bring one sooner, or
// cancel the one waited for. It returns whether a step is still on.
func (r *vrun) endWait(stepping bool, report func(id, produced int, finished bool)) bool {
	if stepping && r.srv.Waiting() {
		r.srv.End(report) // reports nothing
		return false
	}
	return stepping
}

// unserved fails the requests the engine could never admit.
func (r *vrun) unserved() {
	r.failLive(r.now, client.ErrTimeout, "the simulated engine could never schedule it (its KV cache cannot hold the request)")
}

// failLive cancels every request in flight and records it failed at t,
// in submission order (the same every run).
func (r *vrun) failLive(t time.Time, err client.ErrorKind, detail string) {
	live := slices.Clone(r.live)
	for _, q := range live {
		if q == nil || q.done {
			continue
		}
		r.srv.Cancel(q.id)
		res := q.result()
		res.Err, res.Detail = err, detail
		r.finish(q, t)
	}
}

func (r *vrun) event(e vevent) {
	switch e.kind {
	case evSend:
		if !r.stopped {
			r.send(e.s, e.at, time.Time{})
		} else {
			r.sessionEnded(e.s, e.at)
		}
	case evWorker:
		r.worker(e.at)
	case evAbandon:
		q := e.r
		if q.done {
			return
		}
		// The user gave up waiting: a stream cut short by the workload.
		res := q.result()
		res.OutputTokens, res.TokenSource = q.produced, client.TokensFromCounter
		res.Err, res.Detail = client.ErrAbandoned, "abandoned by the workload's user"
		r.srv.Cancel(q.id)
		r.finish(q, e.at)
	case evTimeout:
		if !e.r.done {
			r.timedOut(e.r, e.at, fmt.Sprintf("no end of the stream within %v (request timeout)", r.v.Timeout))
		}
	case evFirstTimeout:
		if !e.r.done && (e.r.res == nil || len(e.r.res.ChunkAt) == 0) {
			r.timedOut(e.r, e.at, fmt.Sprintf("no first token within %v (first-token timeout)", r.v.FirstTokenTimeout))
		}
	case evTick:
		if r.stopped {
			return
		}
		if ok, why := r.watch.tick(r.cfg.Progress); ok {
			r.satAt, r.sat = e.at, why
			r.stop(e.at)
			return
		}
		next := e.at.Add(time.Second)
		if (r.winEnd.IsZero() || !next.After(r.winEnd)) && (r.pending > 0 || r.liveN > 0 || r.arrivalsLeft) {
			r.push(next, evTick, nil, nil)
		}
	}
}

// worker is a closed-loop worker's turn at t: it sends its next request,
// unless the point's duration or request bound is reached.
func (r *vrun) worker(t time.Time) {
	if r.stopped || (!r.stopAt.IsZero() && !t.Before(r.stopAt)) {
		return
	}
	warmup := t.Before(r.winStart)
	if !warmup && r.cfg.Requests > 0 {
		if r.measuredReq++; r.measuredReq > r.cfg.Requests {
			return
		}
	}
	it, ok := r.next()
	if !ok {
		return
	}
	if !warmup {
		r.sentIn++
	}
	s := &vsession{first: it, warmup: warmup, worker: true}
	r.send(s, t, time.Time{})
}

func (r *vrun) open(t0 time.Time) (*Outcome, error) {
	cfg, end, err := openPlan(r.cfg)
	if err != nil {
		return nil, err
	}
	total, measured, _ := count(r.ctx, workload.NewSchedule(cfg.Arrivals(), end, cfg.Warmup, cfg.Requests), Shard{})
	cfg.Progress.Scheduled.Store(int64(total))
	fixed := cfg.Duration > 0 && (cfg.Requests == 0 || measured < cfg.Requests)
	sched := workload.NewSchedule(cfg.Arrivals(), end, cfg.Warmup, cfg.Requests)
	winStart := t0.Add(cfg.Warmup)
	if fixed {
		r.winEnd = winStart.Add(cfg.Duration)
	}
	r.rec = recorder.NewRecorder(winStart, r.winEnd)
	r.rec.Goodput = cfg.Goodput
	r.rec.Slices = recorder.NewSlicer(t0, cfg.Warmup+cfg.Duration, cfg.Warmup)
	r.capacity = cfg.MaxConcurrency
	if cfg.StopSaturated && !cfg.AllAtOnce {
		r.watch = &saturationWatch{}
		r.push(winStart.Add(time.Second), evTick, nil, nil)
	}
	schedIn := 0
	// The schedule is read one arrival ahead.
	var nextOff time.Duration
	have := false
	peek := func() { nextOff, have = sched.Next() }
	peek()
	r.arrivalsLeft = have
	nextArrival := func() (time.Time, bool) { return t0.Add(nextOff), have }
	arrive := func(at time.Time) {
		off := nextOff
		peek()
		r.arrivalsLeft = have
		it, ok := r.next()
		if !ok {
			have, r.arrivalsLeft = false, false
			return
		}
		warmup := off < cfg.Warmup
		if !warmup && (r.winEnd.IsZero() || at.Before(r.winEnd)) {
			schedIn++
		}
		s := &vsession{first: it, warmup: warmup}
		if r.capacity > 0 && (r.holding >= r.capacity || len(r.queued) > 0) {
			r.capWaits++
			r.queued = append(r.queued, queuedSend{s: s, at: at})
			return
		}
		r.dispatch(s, at, time.Time{})
	}
	r.loop(nextArrival, arrive)
	out, err := r.outcome()
	if err != nil {
		return nil, err
	}
	out.Schedule.TargetRate = cfg.Rate
	out.Schedule.CapWaits = r.capWaits
	out.Schedule.Saturation = r.sat
	if secs := out.Window.Seconds; secs > 0 {
		out.Schedule.ScheduledRate = float64(schedIn) / secs
		out.Schedule.SendRate = float64(r.sentIn) / secs
	}
	var gap time.Duration
	if cfg.Rate > 0 && !cfg.AllAtOnce {
		gap = time.Duration(float64(time.Second) / cfg.Rate)
	}
	r.judge(out, gap, r.capWaits > 0)
	return out, nil
}

func (r *vrun) closed(t0 time.Time) (*Outcome, error) {
	cfg := r.cfg
	r.winStart = t0.Add(cfg.Warmup)
	if cfg.Duration > 0 && cfg.Requests == 0 {
		r.winEnd = r.winStart.Add(cfg.Duration)
	}
	if cfg.Duration > 0 {
		r.stopAt = r.winStart.Add(cfg.Duration)
	}
	r.rec = recorder.NewRecorder(r.winStart, r.winEnd)
	r.rec.Goodput = cfg.Goodput
	r.rec.Slices = recorder.NewSlicer(t0, cfg.Warmup+cfg.Duration, cfg.Warmup)
	for range cfg.Concurrency {
		r.push(t0, evWorker, nil, nil)
	}
	r.loop(nil, nil)
	out, err := r.outcome()
	if err != nil {
		return nil, err
	}
	if secs := out.Window.Seconds; secs > 0 {
		out.Schedule.SendRate = float64(r.sentIn) / secs
	}
	r.judge(out, time.Duration(out.Latency[metric.E2E].P50*float64(time.Millisecond)), false)
	return out, nil
}

// outcome summarizes the point.
func (r *vrun) outcome() (*Outcome, error) {
	if !r.satAt.IsZero() {
		r.rec.EndAt(r.satAt)
	}
	if r.srcErr != nil {
		return nil, fmt.Errorf("build requests: %w", r.srcErr)
	}
	p, err := r.rec.Point()
	if err != nil {
		return nil, err
	}
	out := &Outcome{Measured: p, Incomplete: r.ctx.Err() != nil, End: r.now}
	out.Schedule.Virtual = true
	return out, nil
}

// judge runs the measured path's verdicts over the virtual point. Its
// client never lags and its process never stalls (a zero reading), so
// they flag only what the schedule itself shows.
func (r *vrun) judge(out *Outcome, gap time.Duration, suiteCapped bool) {
	lag := out.Latency[metric.Lag].P99
	if r.cfg.AllAtOnce {
		lag = 0
	}
	judge(&out.Schedule, lag, r.cfg.MaxConcurrency, 0)
	out.Validity = judgeValidity(out.Measured, out.Schedule, lag, gap, false, suiteCapped, stall.Reading{})
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
