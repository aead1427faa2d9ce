package workload

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Timeline returns the intended send offsets, from the start of a point, of
// open-loop requests at rate per second until end (exclusive), at most limit
// of them (0: no limit). Precomputing the schedule keeps the dispatcher's
// hot loop to "sleep until, then send", and makes the schedule itself
// reproducible and inspectable.
func Timeline(kind string, rate float64, end time.Duration, limit int, src rand.Source) ([]time.Duration, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("rate must be positive, got %v", rate)
	}
	// next returns the i-th arrival in seconds given the previous one.
	var next func(i int, prev float64) float64
	switch kind {
	case "constant":
		// i/rate, not a running sum, so rounding cannot add an arrival.
		next = func(i int, _ float64) float64 { return float64(i) / rate }
	case "poisson":
		r := rand.New(src)
		next = func(_ int, prev float64) float64 { return prev + r.ExpFloat64()/rate }
	default:
		return nil, fmt.Errorf("unknown arrival process %q", kind)
	}
	capHint := int(rate*end.Seconds()) + 16
	if limit > 0 {
		capHint = min(capHint, limit)
	}
	out := make([]time.Duration, 0, capHint)
	// The first request goes at 0 so that a point starts loading at once;
	// later ones follow the process. Times stay in float seconds so the
	// rounding of each gap to nanoseconds does not add up.
	t := 0.0
	for i := 1; ; i++ {
		at := time.Duration(t * float64(time.Second))
		if (end > 0 && at >= end) || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		out = append(out, at)
		t = next(i, t)
	}
}
