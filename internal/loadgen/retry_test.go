package loadgen

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
)

// refusingServer refuses a request's first `refuse` attempts after 5 ms
// with status (and Retry-After), then answers it in 20 ms.
type refusingServer struct {
	refuse     int
	status     int
	retryAfter time.Duration
}

func (f refusingServer) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	res.Reset()
	res.Sent = time.Now()
	attempt := 1
	if i := strings.LastIndex(id, "-"); i > len("benchci") {
		attempt = int(id[i+1] - '0')
	}
	if attempt <= f.refuse {
		time.Sleep(5 * time.Millisecond)
		res.Err, res.Status, res.RetryAfter = client.ErrHTTP, f.status, f.retryAfter
		res.End = time.Since(res.Sent)
		return
	}
	time.Sleep(20 * time.Millisecond)
	res.FirstToken = 10 * time.Millisecond
	res.ChunkAt = append(res.ChunkAt, 10*time.Millisecond, 20*time.Millisecond)
	res.ChunkTokens = append(res.ChunkTokens, 1, 1)
	res.OutputTokens, res.TokenSource = 2, client.TokensFromUsage
	res.End = time.Since(res.Sent)
}

func on(status int) func(*client.Result) bool {
	return func(r *client.Result) bool { return r.Err == client.ErrHTTP && r.Status == status }
}

// near allows the histograms' 3 significant digits.
func near(got, want float64) bool { return math.Abs(got-want) <= want/1000 }

// TestRetries runs points in virtual time, so every figure is exact: a
// request refused once with Retry-After 1 s is answered after 5 ms + 1 s
// + 20 ms from its first send (the Retry-After honoured to the
// histogram's precision), its per-attempt E2E is the answer's 20 ms, and every
// request took two attempts; without respect for Retry-After the wait is
// the 100 ms backoff; and a budget of 10% caps retries of a server that
// refuses everything, every request then giving up.
func TestRetries(t *testing.T) {
	run := func(t *testing.T, srv Doer, p *RetryPolicy) *Outcome {
		out, err := Run(context.Background(), srv, Config{
			Mode: OpenLoop, Rate: 20, Arrivals: arrivals(t, "constant", 20), Duration: 5 * time.Second,
			Clock: clock.Timers, Retry: p,
		}, items())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("Retry-After", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			out := run(t, refusingServer{refuse: 1, status: 429, retryAfter: time.Second},
				&RetryPolicy{Retryable: on(429), MaxAttempts: 3, Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, RespectRetryAfter: true})
			user, e2e := out.Latency[metric.E2EUser], out.Latency[metric.E2E]
			if !near(user.Min, 1025) || !near(user.Max, 1025) || !near(e2e.Max, 20) {
				t.Errorf("user E2E %+v, per-attempt E2E %+v: want 1025 ms and 20 ms", user, e2e)
			}
			r := out.Requests
			if r.Sent != 100 || r.Completed != 100 || r.Attempts != 200 || r.GaveUp != 0 {
				t.Errorf("requests %+v: want 100 answered in 200 attempts", r)
			}
		})
	})
	// A Retry-After wait is the server's, not the client's falling behind:
	// the send lag runs to the first attempt's send, the wait counts in
	// the user's E2E, and a request waiting out a Retry-After gives up its
	// place under the cap on requests in flight. At 20 req/s, each request
	// refused once for 1 s would otherwise hold one of 8 places for 1.025 s,
	// and the sends scheduled meanwhile would wait for them (a send lag of
	// seconds, flagged as the client's descriptor limit).
	t.Run("Retry-After is not send lag", func(t *testing.T) {
		for _, capped := range []int{0, 8} {
			synctest.Test(t, func(t *testing.T) {
				out, err := Run(context.Background(), refusingServer{refuse: 1, status: 429, retryAfter: time.Second}, Config{
					Mode: OpenLoop, Rate: 20, Arrivals: arrivals(t, "constant", 20), Duration: 5 * time.Second,
					MaxConcurrency: capped, DescriptorLimit: capped * 10, Clock: clock.Timers,
					Retry: &RetryPolicy{Retryable: on(429), MaxAttempts: 3, Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, RespectRetryAfter: true},
				}, items())
				if err != nil {
					t.Fatal(err)
				}
				if lag, user := out.Latency[metric.Lag], out.Latency[metric.E2EUser]; lag.P99 > 1 || user.Count != 100 || !near(user.Min, 1025) {
					t.Errorf("cap %d: send lag %+v, user E2E %+v: want no lag and every request's 1 s wait in its user E2E", capped, lag, user)
				}
				if s := out.Schedule; s.ClientSaturated || s.CapWaits > 0 || len(out.Validity.Invalid) > 0 {
					t.Errorf("cap %d: schedule %+v, validity %v: want the client neither saturated nor held back", capped, s, out.Validity.Invalid)
				}
			})
		}
	})
	t.Run("backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			out := run(t, refusingServer{refuse: 2, status: 503, retryAfter: time.Second},
				&RetryPolicy{Retryable: on(503), MaxAttempts: 3, Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2})
			// 5 + 100 + 5 + 200 + 20 ms: two refusals, two backoffs, the answer.
			if user := out.Latency[metric.E2EUser]; !near(user.Min, 330) || !near(user.Max, 330) {
				t.Errorf("user E2E %+v, want 330 ms", user)
			}
		})
	})
	// F14: a server that answers every attempt 429 with a long
	// Retry-After holds no request past its timeout: a wait that would
	// end past it gives up at once, and shorter waits run until the next
	// would.
	t.Run("waits within the request's timeout", func(t *testing.T) {
		for _, tc := range []struct {
			retryAfter time.Duration
			attempts   int
		}{
			{time.Hour, 1},
			// 5 ms, 2 s, 5 ms, 2 s, 5 ms: a third wait would end at 6.015 s.
			{2 * time.Second, 3},
		} {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				out := run(t, refusingServer{refuse: 99, status: 429, retryAfter: tc.retryAfter},
					&RetryPolicy{Retryable: on(429), MaxAttempts: 20, Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, RespectRetryAfter: true, Total: 5 * time.Second})
				r := out.Requests
				if r.GaveUp != r.Sent || r.Attempts != tc.attempts*r.Sent || r.Completed != 0 {
					t.Errorf("Retry-After %v: requests %+v, want each to give up after %d attempts", tc.retryAfter, r, tc.attempts)
				}
				if took := time.Since(start); took > 5*time.Second+5*time.Second+time.Second {
					t.Errorf("Retry-After %v: the point took %v of virtual time", tc.retryAfter, took)
				}
			})
		}
	})
	t.Run("budget", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			out := run(t, refusingServer{refuse: 99, status: 503},
				&RetryPolicy{Retryable: on(503), MaxAttempts: 5, Initial: 10 * time.Millisecond, Max: time.Second, Multiplier: 2, Budget: 0.1})
			r := out.Requests
			if retries := r.Attempts - r.Sent; retries > r.Sent/10+1 || retries < r.Sent/10-1 || r.GaveUp != r.Sent || r.Completed != 0 {
				t.Errorf("requests %+v: want retries capped at 10%% of %d, every request giving up", r, r.Sent)
			}
		})
	})
}
