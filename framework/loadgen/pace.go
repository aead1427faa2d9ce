package loadgen

import (
	"context"
	"runtime"
	"time"
)

// spinWindow is how long before a send the pacer stops trusting the timer.
// Go's timers wake up to ~1 ms late when the process is idle (the netpoller
// waits in whole milliseconds), which would show up as send lag at low rates.
const spinWindow = 1200 * time.Microsecond

// spinBelowRate: at or below this rate the pacer spins through the last
// spinWindow before each send. Above it the gaps are too short to spend a
// core on: timers alone keep the long-run rate exact (the timeline is
// absolute, so lateness does not accumulate) and the lag is reported.
const spinBelowRate = 200

// waitUntil blocks until at or ctx ends; it reports false when ctx ended.
func waitUntil(ctx context.Context, t *time.Timer, at time.Time, spin bool) bool {
	wait := time.Until(at)
	if spin {
		wait -= spinWindow
	}
	if wait > 0 {
		t.Reset(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	if spin {
		for time.Now().Before(at) {
			runtime.Gosched()
		}
	}
	return ctx.Err() == nil
}
