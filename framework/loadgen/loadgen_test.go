package loadgen

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/client"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/workload"
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

func arrivals(t *testing.T, kind string, rate float64) workload.Process {
	t.Helper()
	p, err := workload.NewProcess(suite.Arrival{Kind: suite.ArrivalKind(kind)}, rate, rand.NewPCG(1, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func items() Source {
	return func() (Item, error) { return Item{Body: []byte("{}"), WantOutput: 2}, nil }
}

func TestOpenLoopHoldsRate(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{latency: 20 * time.Millisecond}
	out, err := Run(context.Background(), srv, Config{
		Mode: "rate", Rate: 200, Arrivals: arrivals(t, "constant", 200), Warmup: 250 * time.Millisecond, Duration: 2 * time.Second,
	}, items())
	if err != nil {
		t.Fatal(err)
	}
	s := out.Schedule
	if math.Abs(s.ScheduledRate-200) > 1 {
		t.Errorf("scheduled rate %.2f, want 200", s.ScheduledRate)
	}
	// Loose on purpose: this is a unit test on a shared machine, not the
	// benchmark (BenchmarkOpenLoopRate in package selftest measures that).
	if s.SendRate < 0.95*s.ScheduledRate {
		t.Errorf("schedule %+v: the client fell behind a 200 req/s constant schedule", s)
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
	if lag := out.Latency[metric.Lag]; lag.Count != 400 || lag.Min < 0 {
		t.Errorf("send lag %+v: want one non-negative sample per measured request", lag)
	}
}

func TestOpenLoopMaxConcurrency(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{latency: 50 * time.Millisecond}
	out, err := Run(context.Background(), srv, Config{
		Mode: "rate", Rate: 400, Arrivals: arrivals(t, "poisson", 400), MaxConcurrency: 4, Duration: time.Second,
	}, items())
	if err != nil {
		t.Fatal(err)
	}
	if p := srv.peak.Load(); p > 4 {
		t.Errorf("peak in flight %d, cap 4", p)
	}
	// At most 4 x 20/s = 80 req/s get through: the schedule slips, which the
	// result must say, and blame on the cap.
	if !out.Schedule.ClientSaturated || out.Schedule.CapWaits == 0 {
		t.Errorf("schedule %+v: a capped run that fell behind was not flagged", out.Schedule)
	}
	// Waiting for a slot is queueing the user sees: schedule-based latency
	// exceeds send-based latency.
	if l := out.Latency; l[metric.E2ESched].P50 <= l[metric.E2E].P50+10 {
		t.Errorf("e2e_sched p50 %.1f ms vs e2e %.1f ms: coordinated omission hidden", l[metric.E2ESched].P50, l[metric.E2E].P50)
	}
}

func TestClosedLoopConcurrency(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{latency: 10 * time.Millisecond}
	out, err := Run(context.Background(), srv, Config{Mode: "concurrency", Concurrency: 8, Duration: 500 * time.Millisecond}, items())
	if err != nil {
		t.Fatal(err)
	}
	if p := srv.peak.Load(); p != 8 {
		t.Errorf("peak in flight %d, want exactly 8", p)
	}
	// 8 workers x ~100 req/s each.
	if r := out.Throughput.Requests; r < 500 || r > 820 {
		t.Errorf("throughput %.0f req/s, want about 800", r)
	}
}

func TestRequestBound(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{latency: time.Millisecond}
	for _, cfg := range []Config{
		{Mode: "rate", Rate: 1000, Arrivals: arrivals(t, "poisson", 1000), Requests: 30, Warmup: 10 * time.Millisecond},
		{Mode: "concurrency", Concurrency: 3, Requests: 30, Warmup: 10 * time.Millisecond},
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
	t.Parallel()
	srv := &fakeServer{latency: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	out, err := Run(ctx, srv, Config{Mode: "rate", Rate: 20, Arrivals: arrivals(t, "constant", 20), Duration: time.Minute}, items())
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %v to stop", time.Since(start))
	}
	if !out.Incomplete || out.Requests.Canceled == 0 || out.Requests.Failed != 0 {
		t.Errorf("incomplete %v, requests %+v", out.Incomplete, out.Requests)
	}
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
	if _, err := Run(context.Background(), &fakeServer{}, Config{Mode: "rate", Rate: 100, Arrivals: arrivals(t, "constant", 100), Duration: time.Second}, src); err == nil {
		t.Error("a failing request source did not fail the point")
	}
}
