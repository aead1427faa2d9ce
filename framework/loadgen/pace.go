package loadgen

import (
	"context"
	"time"

	"github.com/benchci/benchci/framework/internal/clock"
)

// spinBelowRate: at or below this rate the pacer spins through the last
// clock.DefaultSpin before each send, for microsecond-exact sends. Above it
// the spinning would take too much of a core from the client itself; kernel
// sleeps alone are ~150 µs late, the timeline is absolute so lateness never
// accumulates into the rate, and the lag is measured and reported.
const spinBelowRate = 1000

// waitUntil blocks until at or ctx ends; it reports false when ctx ended.
// The caller holds its goroutine on its OS thread.
func waitUntil(ctx context.Context, at time.Time, spin bool) bool {
	s := time.Duration(0)
	if spin {
		s = clock.DefaultSpin
	}
	return clock.SleepUntil(ctx, at, s)
}
