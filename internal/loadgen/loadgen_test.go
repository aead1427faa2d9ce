package loadgen

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
	"github.com/benchci/benchci/internal/workload"
)

// fakeServer answers every request after a fixed latency with a few chunks,
// and tracks how many are in flight.
type fakeServer struct {
	latency  time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64
	calls    atomic.Int64
}

func (f *fakeServer) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	res.Reset()
	f.calls.Add(1)
	n := f.inFlight.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	defer f.inFlight.Add(-1)
	res.Sent = time.Now()
	select {
	case <-time.After(f.latency):
	case <-ctx.Done():
		res.Err = client.ErrCanceled
		res.End = time.Since(res.Sent)
		return
	}
	res.FirstToken = f.latency / 2
	res.FirstAnswer = res.FirstToken
	res.ChunkAt = append(res.ChunkAt, f.latency/2, f.latency)
	res.ChunkTokens = append(res.ChunkTokens, 1, 1)
	res.OutputTokens, res.TokenSource = 2, client.TokensFromUsage
	res.End = time.Since(res.Sent)
}

func arrivals(t *testing.T, kind string, rate float64) workload.Arrivals {
	t.Helper()
	a, err := workload.NewArrivals(suite.Arrival{Kind: suite.ArrivalKind(kind)}, rate, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func items() Source {
	return func() (Item, error) { return Item{Body: []byte("{}"), WantOutput: 2}, nil }
}

// Inside a synctest bubble time only moves when every goroutine waits, so
// a point runs in virtual time: the figures are exact, whatever the load
// on the machine running the test.
func TestOpenLoopHoldsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 20 * time.Millisecond}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 200, Arrivals: arrivals(t, "constant", 200), Warmup: 250 * time.Millisecond, Duration: 2 * time.Second,
			Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		s := out.Schedule
		if s.ScheduledRate != 200 || s.SendRate != 200 || s.ClientSaturated {
			t.Errorf("schedule %+v: want 200 req/s scheduled and sent", s)
		}
		// Warm-up is 0.25 s of 200/s = 50 requests; the window holds 400.
		if out.Requests.Warmup != 50 || out.Requests.Sent != 400 {
			t.Errorf("warm-up %d, measured %d; want 50 and 400", out.Requests.Warmup, out.Requests.Sent)
		}
		if got := srv.calls.Load(); got != 450 {
			t.Errorf("%d calls, want 450", got)
		}
		if out.Incomplete {
			t.Error("marked incomplete")
		}
		if lag := out.Latency[metric.Lag]; lag.Count != 400 || lag.Max != 0.001 {
			t.Errorf("send lag %+v: want one sample per measured request, none late (1 µs, the histogram's floor)", lag)
		}
		if e2e := out.Latency[metric.E2E]; e2e.Min < 19.9 || e2e.Max > 20.1 {
			t.Errorf("e2e %+v: want the server's 20 ms exactly", e2e)
		}
	})
}

func TestOpenLoopMaxConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 50 * time.Millisecond}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 400, Arrivals: arrivals(t, "poisson", 400), MaxConcurrency: 4, Duration: time.Second, Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		if p := srv.peak.Load(); p != 4 {
			t.Errorf("peak in flight %d, want the cap, 4", p)
		}
		// At most 4 x 20/s = 80 req/s get through: the schedule slips, which
		// the result says by its cap waits and send rate. It is the server,
		// at the suite's cap, that could not take the rate, not the client:
		// the sends' lag counts from when they got their place, and the
		// point is not flagged as client-saturated.
		sc := out.Schedule
		if sc.ClientSaturated || sc.CapWaits == 0 || sc.SendRate > 100 {
			t.Errorf("schedule %+v: want cap waits and a send rate near 80, not a saturated client", sc)
		}
		if lag := out.Latency[metric.Lag]; lag.P99 > 1 {
			t.Errorf("send lag %+v: the waits for the suite's cap were counted as the client's lateness", lag)
		}
		// Waiting for a slot is queueing the user sees: schedule-based
		// latency exceeds send-based latency, which stays the server's 50 ms.
		if l := out.Latency; l[metric.E2E].Max > 50.1 || l[metric.E2ESched].P50 < 100 {
			t.Errorf("e2e %+v, e2e_sched %+v: coordinated omission hidden", l[metric.E2E], l[metric.E2ESched])
		}
	})
}

// A cap that came from this machine's descriptor limit, not the suite,
// flags the point as the client's whenever a send waited for it.
func TestDescriptorCapFlagsThePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 50 * time.Millisecond}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), MaxConcurrency: 4, DescriptorLimit: 260, Duration: time.Second, Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Schedule; !s.ClientSaturated || s.CapWaits == 0 || !strings.Contains(s.Reason, "descriptor limit (260) capped requests in flight at 4") {
			t.Errorf("schedule %+v: a send held by the descriptor cap was not blamed on it", s)
		}
	})
}

// All at once: every request is sent at the start, up to the cap in
// flight, and the point lasts until the last one ends.
func TestAllAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct{ cap, peak int64 }{{0, 40}, {8, 8}} {
			srv := &fakeServer{latency: 100 * time.Millisecond}
			start := time.Now()
			out, err := Run(context.Background(), srv, Config{Mode: OpenLoop, AllAtOnce: true, Requests: 40, MaxConcurrency: int(tc.cap), Clock: clock.Timers}, items())
			if err != nil {
				t.Fatal(err)
			}
			// 40 requests of 100 ms, at most cap at a time: 5 rounds of 8.
			want := 100 * time.Millisecond
			if tc.cap > 0 {
				want *= time.Duration(40 / tc.cap)
			}
			if srv.peak.Load() != tc.peak || out.Requests.Sent != 40 || time.Since(start) != want {
				t.Errorf("cap %d: peak %d, %d sent, took %v; want peak %d, 40, %v", tc.cap, srv.peak.Load(), out.Requests.Sent, time.Since(start), tc.peak, want)
			}
			if out.Schedule.ClientSaturated {
				t.Errorf("cap %d: flagged %q; waiting for a slot is the test", tc.cap, out.Schedule.Reason)
			}
		}
	})
}

func TestClosedLoopConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 10 * time.Millisecond}
		out, err := Run(context.Background(), srv, Config{Mode: ClosedLoop, Concurrency: 8, Duration: 500 * time.Millisecond, Clock: clock.Timers}, items())
		if err != nil {
			t.Fatal(err)
		}
		if p := srv.peak.Load(); p != 8 {
			t.Errorf("peak in flight %d, want exactly 8", p)
		}
		// 8 workers, each a request every 10 ms, over 0.5 s: 400 requests
		// sent; the last 8 end at the window's end, which is not inside it.
		if out.Requests.Sent != 400 || out.Throughput.Requests != 392/0.5 {
			t.Errorf("%d requests, %.1f req/s; want 400 and 784", out.Requests.Sent, out.Throughput.Requests)
		}
	})
}

func TestRequestBound(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{latency: time.Millisecond}
	for _, cfg := range []Config{
		{Mode: OpenLoop, Rate: 1000, Arrivals: arrivals(t, "poisson", 1000), Requests: 30, Warmup: 10 * time.Millisecond},
		{Mode: ClosedLoop, Concurrency: 3, Requests: 30, Warmup: 10 * time.Millisecond},
	} {
		out, err := Run(context.Background(), srv, cfg, items())
		if err != nil {
			t.Fatal(err)
		}
		if out.Requests.Sent != 30 {
			t.Errorf("%s: %d measured requests, want 30", cfg.Mode, out.Requests.Sent)
		}
		if out.Window.Seconds <= 0 {
			t.Errorf("%s: window %v", cfg.Mode, out.Window.Seconds)
		}
	}
}

func TestCancelMarksIncomplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 5 * time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(275*time.Millisecond, cancel) // between two sends: no tie in virtual time
		start := time.Now()
		out, err := Run(ctx, srv, Config{Mode: OpenLoop, Rate: 20, Arrivals: arrivals(t, "constant", 20), Duration: time.Minute, Clock: clock.Timers}, items())
		if err != nil {
			t.Fatal(err)
		}
		// In virtual time the stop is exact: requests in flight are cut at
		// once, not left to finish their 5 s.
		if took := time.Since(start); took != 275*time.Millisecond {
			t.Errorf("took %v to stop, want 275ms", took)
		}
		if !out.Incomplete || out.Requests.Canceled != 6 || out.Requests.Failed != 0 {
			t.Errorf("incomplete %v, requests %+v; want 6 canceled (sent at 0, 50, ..., 250 ms)", out.Incomplete, out.Requests)
		}
	})
}

// TestHugePlanFlatMemory starts a point of six million planned arrivals
// and stops it after a few thousand sends. The arrival times are drawn as
// they are sent, never kept: a timeline built up front held 8 bytes per
// arrival (at rate 1e9 for a day the run was killed at 6-8 GB before its
// first send). Not parallel, so the allocation count is this test's own.
func TestHugePlanFlatMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 1e5
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond+5*time.Microsecond, cancel) // 2001 sends at 10 µs steps, no tie
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := Run(ctx, &fakeServer{}, Config{Mode: OpenLoop, Rate: rate, Arrivals: arrivals(t, "constant", rate), Duration: time.Minute, Clock: clock.Timers}, items())
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if !out.Incomplete || out.Requests.Sent+out.Requests.Canceled != 2001 {
			t.Fatalf("incomplete %v, requests %+v; want 2001 sent before the stop", out.Incomplete, out.Requests)
		}
		t.Logf("allocated %.1f MB", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
		// The timeline alone was 6e6 x 8 B = 48 MB, twice that with the
		// slice's growth; what is left is the histograms and the requests.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
			t.Errorf("a point of 6e6 planned arrivals allocated %d MB for 2001 sends; want it independent of the plan (< 24 MB)", alloc>>20)
		}
	})
}

// limitedServer fails every other request as this machine's own limit.
type limitedServer struct {
	fakeServer
	n atomic.Int64
}

func (l *limitedServer) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	if l.n.Add(1)%2 == 0 {
		res.Reset()
		res.Sent = time.Now()
		res.Err, res.Detail = client.ErrClientLimit, "socket: too many open files"
		return
	}
	l.fakeServer.Do(ctx, body, id, res)
}

// Requests this machine could not send flag the point as the client's
// doing, and stay out of its error rate.
func TestClientLimitFlagsThePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, cfg := range []Config{
			{Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), Duration: time.Second, Clock: clock.Timers},
			{Mode: ClosedLoop, Concurrency: 2, Duration: time.Second, Clock: clock.Timers},
		} {
			out, err := Run(context.Background(), &limitedServer{fakeServer: fakeServer{latency: 10 * time.Millisecond}}, cfg, items())
			if err != nil {
				t.Fatal(err)
			}
			if out.Requests.ClientLimited == 0 || out.Requests.ErrorRate != 0 {
				t.Errorf("%s: requests %+v; want client-limited ones apart, error rate 0", cfg.Mode, out.Requests)
			}
			if !out.Schedule.ClientSaturated || !strings.Contains(out.Schedule.Reason, "this machine's own limits") {
				t.Errorf("%s: schedule %+v; want the point flagged as the client's", cfg.Mode, out.Schedule)
			}
		}
	})
}

func TestSourceErrorStopsRun(t *testing.T) {
	t.Parallel()
	n := 0
	src := func() (Item, error) {
		n++
		if n > 3 {
			return Item{}, context.DeadlineExceeded
		}
		return Item{Body: []byte("{}")}, nil
	}
	if _, err := Run(context.Background(), &fakeServer{}, Config{Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), Duration: time.Second}, src); err == nil {
		t.Error("a failing request source did not fail the point")
	}
}

// TestSlices checks a point's figures over time in virtual time: 1 s
// slices of constant arrivals at 100/s to a server answering in 300 ms
// (two chunks of one token, at 150 and 300 ms) hold 100 sends each, 30 in
// flight at each slice end once the first answers came, 100 completions
// and 200 tokens/s in steady state, and the server's TTFT.
func TestSlices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 300 * time.Millisecond}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), Warmup: time.Second, Duration: 3 * time.Second,
			Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		sl := out.Slices
		if sl == nil || sl.WidthS != 1 || sl.WindowStartS != 1 || len(sl.Slices) != 5 {
			t.Fatalf("slices %+v", sl)
		}
		for i, s := range sl.Slices[:4] {
			if s.Sent != 100 || s.InFlight != 30 || s.TTFTP50Ms != 150 || s.TTFTP99Ms != 150 {
				t.Errorf("slice %d: %+v", i, s)
			}
			if i > 0 && (s.Completed != 100 || s.OutputTokPS != 200) {
				t.Errorf("slice %d in steady state: %+v", i, s)
			}
		}
		// The last 30 finish in the drain after the last send.
		if last := sl.Slices[4]; last.Sent != 0 || last.Finished != 30 || last.InFlight != 0 {
			t.Errorf("drain slice %+v", last)
		}
	})
}

// TestRampSlices: a linear ramp from 20 to 100 req/s over a 4 s warm-up
// sends, slice by slice, the rate the ramp intends there (its mean over
// the slice) within 5%, then the point's rate.
func TestRampSlices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &fakeServer{latency: 10 * time.Millisecond}
		a := workload.Ramped(arrivals(t, "constant", 100), 100, suite.Ramp{Kind: suite.RampLinear, From: 20, Over: suite.Duration(4 * time.Second)})
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 100, Arrivals: a, Warmup: 4 * time.Second, Duration: 2 * time.Second, Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range out.Slices.Slices[:6] {
			want := 100.0
			if i < 4 {
				// The linear rate 20 + 20 t averaged over [i, i+1].
				want = 20 + 20*(float64(i)+0.5)
			}
			if d := float64(s.Sent)/want - 1; d > 0.05 || d < -0.05 {
				t.Errorf("slice %d sent %d, want %.0f within 5%%", i, s.Sent, want)
			}
		}
	})
}

// OnWindow is told the measured window's start before the first request
// goes, so that a reading of the server's counters can be set for it.
func TestOnWindowBeforeTheWarmup(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), Duration: 200 * time.Millisecond},
		{Mode: ClosedLoop, Concurrency: 2, Duration: 200 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeServer{latency: 10 * time.Millisecond}
			var told []time.Time
			var callsThen int64
			cfg.Warmup, cfg.Clock = 100*time.Millisecond, clock.Timers
			cfg.OnWindow = func(start time.Time) {
				told = append(told, start)
				callsThen = srv.calls.Load()
			}
			t0 := time.Now()
			out, err := Run(context.Background(), srv, cfg, items())
			if err != nil {
				t.Fatal(err)
			}
			if len(told) != 1 || !told[0].Equal(out.Window.Start) || !told[0].Equal(t0.Add(cfg.Warmup)) || callsThen != 0 {
				t.Errorf("%s: told %v (after %d requests), window from %v; want once, the window's start %v, before any request",
					cfg.Mode, told, callsThen, out.Window.Start, t0.Add(cfg.Warmup))
			}
		})
	}
}
