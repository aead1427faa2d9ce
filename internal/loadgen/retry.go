package loadgen

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchci/benchci/internal/client"
)

// RetryPolicy retries failed requests as a client would. The request
// counts once, by its last attempt; its user-perceived latencies run from
// its first.
type RetryPolicy struct {
	// Retryable says whether a failed attempt may be sent again.
	Retryable func(*client.Result) bool
	// MaxAttempts counts the first attempt too.
	MaxAttempts int
	// Waits: Initial, x Multiplier per retry, at most Max, each drawn
	// within ±Jitter (a fraction) of its value.
	Initial, Max       time.Duration
	Multiplier, Jitter float64
	// RespectRetryAfter waits a refusal's Retry-After when it is longer.
	RespectRetryAfter bool
	// Budget caps retries at this share of the requests sent so far in
	// the point; 0: no cap.
	Budget float64
	// Seed seeds the jitter.
	Seed uint64
	// Total bounds a request from its first attempt's send: a wait that
	// would end past it gives up instead (0: unbounded but by the run).
	// Waits are the server's to ask for, and a server that asks for an
	// hour on every attempt would otherwise hold the run for many.
	Total time.Duration
}

// retrier applies a policy over one point.
type retrier struct {
	p               *RetryPolicy
	mu              sync.Mutex
	rng             *rand.Rand
	requests, tries atomic.Int64
}

func newRetrier(p *RetryPolicy) *retrier {
	if p == nil {
		return nil
	}
	return &retrier{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0x7e7))}
}

// wait is how long to wait before the attempt after attempt n (1: the
// first) failed with res: the backoff, or the server's Retry-After when
// the policy respects it and it is longer.
func (r *retrier) wait(n int, res *client.Result) time.Duration {
	d := float64(r.p.Initial)
	for range n - 1 {
		d *= r.p.Multiplier
	}
	d = min(d, float64(r.p.Max))
	if j := r.p.Jitter; j > 0 {
		r.mu.Lock()
		u := r.rng.Float64()
		r.mu.Unlock()
		d *= 1 + j*(2*u-1)
	}
	w := time.Duration(d)
	if r.p.RespectRetryAfter && res.RetryAfter > w {
		w = res.RetryAfter
	}
	return w
}

// allow takes a retry from the budget, if there is one left.
func (r *retrier) allow() bool {
	if r.p.Budget <= 0 {
		r.tries.Add(1)
		return true
	}
	for {
		t := r.tries.Load()
		if float64(t+1) > r.p.Budget*float64(r.requests.Load()) {
			return false
		}
		if r.tries.CompareAndSwap(t, t+1) {
			return true
		}
	}
}
