package runner

import (
	"slices"
	"strconv"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
)

// retryPolicy turns a suite's retry policy into the load generator's; nil
// when the suite sets none.
func retryPolicy(s *suite.Suite) *loadgen.RetryPolicy {
	r := s.Request.Retry
	if r == nil {
		return nil
	}
	on := slices.Clone(r.On)
	retryable := func(res *client.Result) bool {
		for _, o := range on {
			switch o {
			case "429":
				if res.Err == client.ErrHTTP && res.Status == 429 {
					return true
				}
			case "5xx":
				if res.Err == client.ErrHTTP && res.Status/100 == 5 {
					return true
				}
			case "timeout", "connect", "stream_cut":
				if string(res.Err) == o {
					return true
				}
			default:
				if code, err := strconv.Atoi(o); err == nil && res.Err == client.ErrHTTP && res.Status == code {
					return true
				}
			}
		}
		return false
	}
	respect := r.RespectRetryAfter == nil || *r.RespectRetryAfter
	budget := 0.0 // no cap
	if r.Budget != nil {
		budget = *r.Budget
	}
	return &loadgen.RetryPolicy{
		Retryable: retryable, MaxAttempts: r.MaxAttempts,
		Initial: r.Backoff.Initial.D(), Max: r.Backoff.Max.D(), Multiplier: r.Backoff.Multiplier, Jitter: r.Backoff.Jitter,
		RespectRetryAfter: respect, Budget: budget, Seed: uint64(s.Workload.Seed),
		// The request's timeout bounds its retries' waits too.
		Total: s.Request.Timeout.D(),
	}
}
