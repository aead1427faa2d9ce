package suite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// validateRequest checks the request's timeouts and retry policy.
func validateRequest(s *Suite) []*FieldError {
	var p fieldErrors
	if s.Request.Timeout <= 0 {
		p.add("request.timeout", "must be positive")
	}
	if s.Request.Timeout > MaxWait {
		p.add("request.timeout", "%v is more than the %v any wait may be", s.Request.Timeout.D(), MaxWait.D())
	}
	if to := s.Request.Timeouts; to != nil {
		if to.Connect < 0 || to.FirstToken < 0 || to.Idle < 0 {
			p.add("request.timeouts", "must not be negative")
		}
		for _, t := range []struct {
			name string
			d    Duration
		}{{"connect", to.Connect}, {"first_token", to.FirstToken}, {"idle", to.Idle}} {
			if t.d > s.Request.Timeout {
				p.add(JoinPath("request.timeouts", t.name), "%v is longer than the whole request's timeout (%v): it would never fire", t.d.D(), s.Request.Timeout.D())
			}
		}
	}
	if r := s.Request.Retry; r != nil {
		p = append(p, validateRetry(r)...)
	}
	return p
}

// validateRetry checks a retry policy and fills in its defaults.
func validateRetry(r *Retry) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("request.retry", field), Msg: fmt.Sprintf(format, args...)})
	}
	if len(r.On) == 0 {
		bad("on", "required: what to retry, e.g. ['429', '5xx', 'timeout']")
	}
	for i, on := range r.On {
		code, err := strconv.Atoi(on)
		switch {
		case slices.Contains(RetryOn, on):
		case err == nil && code >= 500 && code <= 599:
		case err == nil && code >= 400 && code <= 499:
			bad(fmt.Sprintf("on[%d]", i), "%d is never retried: a 4xx other than 429 says the request itself is wrong, and sending it again cannot help", code)
		default:
			bad(fmt.Sprintf("on[%d]", i), "unknown outcome %q (known: %s, or a 5xx status)", on, strings.Join(RetryOn, ", "))
		}
	}
	if r.MaxAttempts == 0 {
		r.MaxAttempts = 3
	}
	if r.MaxAttempts < 2 || r.MaxAttempts > 20 {
		bad("max_attempts", "must be 2 to 20 (it counts the first attempt), got %d", r.MaxAttempts)
	}
	b := &r.Backoff
	if b.Initial == 0 {
		b.Initial = Duration(100 * time.Millisecond)
	}
	if b.Max == 0 {
		b.Max = max(Duration(10*time.Second), b.Initial)
	}
	if b.Multiplier == 0 {
		b.Multiplier = 2
	}
	switch {
	case b.Initial < 0 || b.Max < 0:
		bad("backoff", "waits must not be negative")
	case b.Max < b.Initial:
		bad("backoff.max", "must be at least initial (%v), got %v", b.Initial, b.Max)
	}
	if b.Multiplier < 1 {
		bad("backoff.multiplier", "must be at least 1, got %v", b.Multiplier)
	}
	if b.Jitter < 0 || b.Jitter > 1 {
		bad("backoff.jitter", "must be a fraction between 0 and 1, got %v", b.Jitter)
	}
	if r.RespectRetryAfter == nil {
		yes := true
		r.RespectRetryAfter = &yes
	}
	if b := r.Budget; b != nil && (*b <= 0 || *b > 1) {
		bad("budget", "must be a share of the requests above 0 and at most 1 (100%%), got %v; leave it out for no cap", *b)
	}
	return errs
}
