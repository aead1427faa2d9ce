package loadgen

import (
	"context"
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
