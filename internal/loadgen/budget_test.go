package loadgen

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
)

// N4: a trace of huge prompts cannot make the client build and hold
// bodies without bound. With 8 MiB bodies, a 32 MiB budget and a server
// that takes a second per answer at 50 req/s, the bodies held (built and
// not yet answered) stay within the budget and one body, and the trial
// is judged invalid: the client fell behind, not the server.
func TestBodiesHeldAreBounded(t *testing.T) {
	old := MaxBodyBytes
	MaxBodyBytes = 32 << 20
	t.Cleanup(func() { MaxBodyBytes = old })
	const size = 8 << 20
	synctest.Test(t, func(t *testing.T) {
		var held, peak atomic.Int64
		src := func() (Item, error) {
			n := held.Add(size)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			return Item{Body: make([]byte, size), WantOutput: 2}, nil
		}
		srv := &releasing{fakeServer: fakeServer{latency: time.Second}, held: &held, size: size}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 50, Arrivals: arrivals(t, "constant", 50), Duration: 2 * time.Second,
			Clock: clock.Timers,
		}, src)
		if err != nil {
			t.Fatal(err)
		}
		// Bodies are counted from their build to their answer here, and
		// by the generator from build until send returns: the same span.
		if p := peak.Load(); p > MaxBodyBytes+size {
			t.Errorf("held %d MiB of bodies at the peak, over the %d MiB budget and one body", p>>20, MaxBodyBytes>>20)
		}
		if len(out.Validity.Invalid) == 0 {
			t.Errorf("a client held back by its body budget was judged valid: schedule %+v", out.Schedule)
		}
	})
}

// releasing is a fakeServer that counts a body released when answered.
type releasing struct {
	fakeServer
	held *atomic.Int64
	size int64
}

func (r *releasing) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	r.fakeServer.Do(ctx, body, id, res)
	r.held.Add(-r.size)
}

// A trace of prompts that take longer to build than the schedule allows
// (the 4M-token prompts, 1.3 s each) does not stretch the point:
// a 3 s point stops waiting for bodies SendOverrun after its window, ends
// within 10 s, and counts what was due and not sent as the client's
// shortfall (invalid), not as the server's figures.
func TestSlowBuiltPromptsEndThePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := func() (Item, error) {
			time.Sleep(1300 * time.Millisecond) // building a huge prompt
			return Item{Body: []byte("{}"), WantOutput: 2}, nil
		}
		srv := &fakeServer{latency: 200 * time.Millisecond}
		t0 := time.Now()
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 100, Arrivals: arrivals(t, "constant", 100), Duration: 3 * time.Second,
			Clock: clock.Timers,
		}, src)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(t0); took > 10*time.Second {
			t.Errorf("the point took %v", took)
		}
		// The builder finishes the body it was building, then sees the
		// point over and stops.
		time.Sleep(2 * time.Second)
		why := strings.Join(out.Validity.Invalid, "; ")
		if out.Incomplete || !strings.Contains(why, "requests due in the window were not sent: their bodies were not built 1s after it closed") {
			t.Errorf("incomplete %v, invalid %q, schedule %+v", out.Incomplete, why, out.Schedule)
		}
		if s := out.Schedule; s.ScheduledRate < 95 || s.SendRate > 10 {
			t.Errorf("schedule %+v: want about 100 req/s scheduled and few sent", s)
		}
		// Building a request takes longer than the schedule gives it: a
		// rerun would build the same prompts, so the point is not
		// measured again.
		if !strings.Contains(out.Final, "a request took 1.3s to build on average where the schedule gives 10ms") {
			t.Errorf("final %q: want the reason a rerun would fail alike", out.Final)
		}
	})
}
