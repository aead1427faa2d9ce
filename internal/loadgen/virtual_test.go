package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
	"github.com/benchci/benchci/internal/workload"
)

// stepServer is a VirtualServer of exact arithmetic: every step takes
// 10 ms and gives each admitted request one token; at most slots requests
// run (0: any), the rest wait in order. A body is {"n": output tokens};
// {"n": 0} is refused.
type stepServer struct {
	slots   int
	next    int
	running []*stepReq
	waiting []*stepReq
	// paths, when set, is each submitted request's way to the engine, in
	// submission order: it reaches waiting that long after its send, and
	// an idle engine's step is a wait for the first to arrive.
	paths  []time.Duration
	onWay  []*stepReq
	waited bool
}

type stepReq struct {
	id, n, produced int
	canceled        bool
	arrives         time.Time
}

const stepCost = 10 * time.Millisecond

func (s *stepServer) Submit(it *Item, at time.Time) (int, int, error) {
	var b struct{ N int }
	if err := json.Unmarshal(it.Body, &b); err != nil || b.N < 1 {
		return 0, 0, errors.New("max_tokens must be at least 1")
	}
	s.next++
	r := &stepReq{id: s.next, n: b.N}
	if s.paths != nil {
		r.arrives = at.Add(s.paths[s.next-1])
		s.onWay = append(s.onWay, r)
	} else {
		s.waiting = append(s.waiting, r)
	}
	return s.next, 7, nil
}

func (s *stepServer) Cancel(id int) {
	for _, r := range append(slices.Clone(s.running), s.waiting...) {
		if r.id == id {
			r.canceled = true
		}
	}
}

func (s *stepServer) drop() {
	live := func(r *stepReq) bool { return r.canceled }
	s.running = slices.DeleteFunc(s.running, live)
	s.waiting = slices.DeleteFunc(s.waiting, live)
}

func (s *stepServer) Busy() bool { return len(s.running)+len(s.waiting)+len(s.onWay) > 0 }

func (s *stepServer) Waiting() bool { return s.waited }

func (s *stepServer) Start(now time.Time) (time.Duration, bool) {
	s.onWay = slices.DeleteFunc(s.onWay, func(r *stepReq) bool {
		if !r.arrives.After(now) {
			s.waiting = append(s.waiting, r)
			return true
		}
		return false
	})
	s.drop()
	for len(s.waiting) > 0 && (s.slots == 0 || len(s.running) < s.slots) {
		s.running, s.waiting = append(s.running, s.waiting[0]), s.waiting[1:]
	}
	if len(s.running) == 0 && len(s.onWay) > 0 {
		first := slices.MinFunc(s.onWay, func(a, b *stepReq) int { return a.arrives.Compare(b.arrives) })
		s.waited = true
		return first.arrives.Sub(now), true
	}
	return stepCost, len(s.running) > 0
}

func (s *stepServer) End(report func(id, produced int, finished bool)) {
	if s.waited {
		s.waited = false
		return
	}
	kept := s.running[:0]
	for _, r := range s.running {
		if r.canceled {
			continue
		}
		r.produced++
		done := r.produced >= r.n
		report(r.id, r.produced, done)
		if !done {
			kept = append(kept, r)
		}
	}
	s.running = kept
}

// seen is a sample as recorded, in offsets from the point's start.
type seen struct {
	id                   string
	scheduled, sent, end time.Duration
	ttft                 time.Duration
	tokens               int
	err                  client.ErrorKind
	warmup               bool
}

func cycle(bodies ...Item) Source {
	i := 0
	return func() (Item, error) {
		it := bodies[i%len(bodies)]
		i++
		return it, nil
	}
}

func body(n int) []byte { b, _ := json.Marshal(map[string]int{"n": n}); return b }

// The virtual timeline is loadgen's: closed-loop workers send as their
// last answer ends, the open loop's cap holds sends until a place frees
// (and the send lag counts from there), sessions send their next turn a
// think time after the reply, users abandon by tokens and by time, the
// client's timeout fails a stream, and a refusal is an error. Every time
// is exact: no clock but the simulated one.
func TestRunVirtualTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cases := []struct {
		name  string
		cfg   Config
		v     Virtual
		slots int
		paths []time.Duration
		src   Source
		want  []seen
	}{{
		name: "closed loop: workers send as their answer ends",
		cfg:  Config{Mode: ClosedLoop, Concurrency: 2, Requests: 4},
		src:  cycle(Item{Body: body(3)}),
		want: []seen{
			{id: "benchci-1", end: ms(30), ttft: ms(10), tokens: 3},
			{id: "benchci-2", end: ms(30), ttft: ms(10), tokens: 3},
			{id: "benchci-3", scheduled: ms(30), sent: ms(30), end: ms(60), ttft: ms(10), tokens: 3},
			{id: "benchci-4", scheduled: ms(30), sent: ms(30), end: ms(60), ttft: ms(10), tokens: 3},
		},
	}, {
		name:  "open loop at once under max_concurrency 1: each send waits for the last answer",
		cfg:   Config{Mode: OpenLoop, AllAtOnce: true, Requests: 3, MaxConcurrency: 1},
		slots: 4,
		src:   cycle(Item{Body: body(2)}),
		want: []seen{
			{id: "benchci-1", end: ms(20), ttft: ms(10), tokens: 2},
			{id: "benchci-2", sent: ms(20), end: ms(40), ttft: ms(10), tokens: 2},
			{id: "benchci-3", sent: ms(40), end: ms(60), ttft: ms(10), tokens: 2},
		},
	}, {
		name: "a session's next turn goes a think time after the reply",
		cfg:  Config{Mode: OpenLoop, AllAtOnce: true, Requests: 1},
		src:  cycle(Item{Body: body(2), FollowUps: []Item{{Body: body(1)}}, Think: ms(100)}),
		want: []seen{
			{id: "benchci-1", end: ms(20), ttft: ms(10), tokens: 2},
			{id: "benchci-1.t2", scheduled: ms(120), sent: ms(120), end: ms(130), ttft: ms(10), tokens: 1},
		},
	}, {
		name: "abandoned after tokens, and after a time; a timeout; a refusal",
		cfg:  Config{Mode: OpenLoop, AllAtOnce: true, Requests: 4},
		v:    Virtual{Timeout: ms(45)},
		src: cycle(Item{Body: body(5), AbandonAfter: 2}, Item{Body: body(5), AbandonAt: ms(25)},
			Item{Body: body(9)}, Item{Body: body(0)}),
		want: []seen{
			{id: "benchci-4", err: client.ErrHTTP},
			{id: "benchci-1", end: ms(20), ttft: ms(10), tokens: 2, err: client.ErrAbandoned},
			{id: "benchci-2", end: ms(25), ttft: ms(10), tokens: 2, err: client.ErrAbandoned},
			{id: "benchci-3", end: ms(45), ttft: ms(10), tokens: 4, err: client.ErrTimeout},
		},
	}, {
		name:  "a request path: the engine waits for the first to arrive, sent second with a shorter way",
		cfg:   Config{Mode: OpenLoop, Rate: 1000, Arrivals: arrivals(t, "constant", 1000), Requests: 2},
		paths: []time.Duration{ms(7), ms(2)},
		src:   cycle(Item{Body: body(1)}),
		// The second reaches the engine at 3 ms: the wait begun for the
		// first (until 7 ms) ends at its send. The first arrives during
		// the second's step and runs in the next.
		want: []seen{
			{id: "benchci-2", scheduled: ms(1), sent: ms(1), end: ms(13), ttft: ms(12), tokens: 1},
			{id: "benchci-1", end: ms(23), ttft: ms(23), tokens: 1},
		},
	}, {
		name:  "a queue on the server: the third waits a slot, its TTFT grows",
		cfg:   Config{Mode: OpenLoop, AllAtOnce: true, Requests: 3},
		slots: 2,
		src:   cycle(Item{Body: body(2)}),
		want: []seen{
			{id: "benchci-1", end: ms(20), ttft: ms(10), tokens: 2},
			{id: "benchci-2", end: ms(20), ttft: ms(10), tokens: 2},
			{id: "benchci-3", end: ms(40), ttft: ms(30), tokens: 2},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []seen
			c.cfg.OnSample = func(s recorder.Sample) {
				r := s.Result
				got = append(got, seen{id: r.ID, scheduled: s.Scheduled.Sub(t0), sent: r.Sent.Sub(t0), end: r.Sent.Add(r.End).Sub(t0),
					ttft: r.FirstToken, tokens: r.OutputTokens, err: r.Err, warmup: s.Warmup})
			}
			v := c.v
			v.Server, v.Start = &stepServer{slots: c.slots, paths: c.paths}, t0
			out, err := RunVirtual(context.Background(), v, c.cfg, c.src)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].err == client.ErrHTTP {
					got[i].end, got[i].sent, got[i].scheduled = 0, 0, 0
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("samples\n got %+v\nwant %+v", got, c.want)
			}
			if !out.Schedule.Virtual || len(out.Validity.Invalid) > 0 || out.Schedule.ClientSaturated {
				t.Errorf("schedule %+v validity %+v: want virtual, valid, client not saturated", out.Schedule, out.Validity)
			}
		})
	}
}

// What the replay cannot model is refused, not ignored.
func TestRunVirtualRefuses(t *testing.T) {
	v := Virtual{Server: &stepServer{}, Start: time.Unix(0, 0)}
	for name, cfg := range map[string]Config{
		"retry":    {Mode: ClosedLoop, Concurrency: 1, Requests: 1, Retry: &RetryPolicy{MaxAttempts: 2}},
		"sharded":  {Mode: ClosedLoop, Concurrency: 1, Requests: 1, Shard: Shard{Index: 0, Count: 2}},
		"aligned":  {Mode: ClosedLoop, Concurrency: 1, Requests: 1, StartAt: time.Now()},
		"checked":  {Mode: ClosedLoop, Concurrency: 1, Requests: 1, Check: func(*client.Result) bool { return true }},
		"no modes": {Mode: "other"},
	} {
		if _, err := RunVirtual(context.Background(), v, cfg, cycle(Item{Body: body(1)})); err == nil {
			t.Errorf("%s: ran; want a refusal", name)
		}
	}
}

// An open loop on a Poisson schedule is the same twice, to the sample,
// and its window and rates are the schedule's: the replay sends every
// request when it is due.
func TestRunVirtualOpenLoopDeterministic(t *testing.T) {
	run := func() (*Outcome, []seen) {
		var got []seen
		arrivals, err := workload.NewArrivals(suite.Arrival{Kind: suite.ArrivalPoisson}, 50, 3, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Mode: OpenLoop, Rate: 50, Warmup: time.Second, Duration: 4 * time.Second, Arrivals: arrivals,
			OnSample: func(s recorder.Sample) {
				got = append(got, seen{id: s.Result.ID, sent: s.Result.Sent.Sub(time.Unix(0, 0)), end: s.Result.End, ttft: s.Result.FirstToken})
			}}
		out, err := RunVirtual(context.Background(), Virtual{Server: &stepServer{slots: 3}, Start: time.Unix(0, 0)}, cfg, cycle(Item{Body: body(4)}))
		if err != nil {
			t.Fatal(err)
		}
		return out, got
	}
	a, sa := run()
	b, sb := run()
	if !slices.Equal(sa, sb) || a.Measured.Latency["ttft"] != b.Measured.Latency["ttft"] || a.Throughput != b.Throughput {
		t.Fatal("two replays of one point differ")
	}
	if s := a.Schedule; s.SendRate != s.ScheduledRate || s.ScheduledRate < 40 || s.ScheduledRate > 60 {
		t.Errorf("sent %.2f/s of %.2f/s scheduled (rate 50): want all of a Poisson schedule's", s.SendRate, s.ScheduledRate)
	}
	if a.Window.Seconds != 4 {
		t.Errorf("window %.3f s, want the duration's 4", a.Window.Seconds)
	}
}

// A replay's memory is what is in flight, not what was sent: 100,000
// requests of 20 ms each (about 200 in flight), each with a request and a
// first-token timeout of minutes, leave the live heap near where it
// started. Keeping each request until its timeouts passed (two heap
// entries a request, a map of them) held them all: 85 MiB more.
func TestRunVirtualMemoryBounded(t *testing.T) {
	arrivals, err := workload.NewArrivals(suite.Arrival{Kind: suite.ArrivalPoisson}, 10000, 3, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 { metrics.Read(live); return live[0].Value.Uint64() }
	runtime.GC()
	base, peak, n := read(), uint64(0), 0
	cfg := Config{Mode: OpenLoop, Rate: 10000, Duration: 10 * time.Second, Arrivals: arrivals,
		OnSample: func(recorder.Sample) {
			if n++; n%2000 == 0 {
				peak = max(peak, read()) // as of the last collection: they come every few MB here
			}
		}}
	v := Virtual{Server: &stepServer{}, Start: time.Unix(0, 0), Timeout: 5 * time.Minute, FirstTokenTimeout: time.Minute}
	out, err := RunVirtual(context.Background(), v, cfg, cycle(Item{Body: body(2)}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Requests.Sent < 90000 || out.Requests.Failed > 0 {
		t.Fatalf("%d sent, %d failed: want about 100,000 answered", out.Requests.Sent, out.Requests.Failed)
	}
	grew := int64(peak) - int64(base)
	t.Logf("live heap grew by %.1f MiB over %d requests", float64(grew)/(1<<20), n)
	if grew > 32<<20 {
		t.Errorf("the live heap grew by %d MiB over %d requests: want it bounded by those in flight (under 32 MiB)", grew>>20, n)
	}
}
