package loadgen

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
)

// batchServer finishes every request at the next 100 ms step boundary
// after at least 50 ms, as an engine whose batch ends together: places
// under the cap come free several at once.
type batchServer struct{ t0 time.Time }

func (b *batchServer) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	res.Reset()
	res.Sent = time.Now()
	el := time.Since(b.t0) + 50*time.Millisecond
	step := 100 * time.Millisecond
	end := b.t0.Add((el/step + 1) * step)
	select {
	case <-time.After(time.Until(end)):
	case <-ctx.Done():
		res.Err = client.ErrCanceled
		res.End = time.Since(res.Sent)
		return
	}
	lat := time.Since(res.Sent)
	res.FirstToken = lat / 2
	res.FirstAnswer = res.FirstToken
	res.ChunkAt = append(res.ChunkAt, lat/2, lat)
	res.ChunkTokens = append(res.ChunkTokens, 1, 1)
	res.OutputTokens, res.TokenSource = 2, client.TokensFromUsage
	res.End = time.Since(res.Sent)
}

// Places freed several at a time (a batch that ends together) let a run
// of sends go at once, each due long before: their lag counts from when
// the cap let them go, not from their arrivals, or a server that is the
// bottleneck at the suite's cap reads as a client behind (P99 lag 3.27 s,
// CLIENT-SATURATED and INVALID, before this was fixed).
func TestCapWaitsFreedInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &batchServer{t0: time.Now()}
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 200, Arrivals: arrivals(t, "constant", 200), MaxConcurrency: 4, Duration: 2 * time.Second, Clock: clock.Timers,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		if sc := out.Schedule; sc.ClientSaturated || sc.CapWaits == 0 {
			t.Errorf("schedule %+v: want cap waits, not a saturated client", sc)
		}
		if lag := out.Latency[metric.Lag]; lag.P99 > 1 {
			t.Errorf("send lag %+v: the cap's waits were counted as the client's", lag)
		}
		if len(out.Validity.Invalid) > 0 {
			t.Errorf("invalid: %q", out.Validity.Invalid)
		}
	})
}
