// Package clock sleeps precisely. Go's timers wake up to ~1 ms late when the
// process is otherwise idle (the netpoller waits in whole milliseconds),
// which would add a millisecond of error to every paced send and every
// simulated engine step. Here the thread sleeps in the kernel with
// nanosecond resolution until shortly before the deadline, then spins.
//
// Callers hold their goroutine on its OS thread (runtime.LockOSThread) so a
// kernel sleep blocks only that thread.
package clock

import (
	"context"
	"time"
)

// DefaultSpin is how long before a deadline SleepUntil stops sleeping and
// spins: a little more than the kernel's wake-up latency (the 50 µs timer
// slack plus scheduling), measured here at p99 < 400 µs.
const DefaultSpin = 300 * time.Microsecond

// maxNap bounds one kernel sleep, so a canceled ctx is noticed promptly.
const maxNap = 20 * time.Millisecond

// SleepUntil blocks until at, or until ctx ends (reporting false). It spins
// through the last spin of the wait; spin 0 trusts the kernel alone (~150 µs
// late at p50) and costs no CPU.
func SleepUntil(ctx context.Context, at time.Time, spin time.Duration) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		w := time.Until(at) - spin
		if w <= 0 {
			break
		}
		nap(min(w, maxNap))
	}
	for time.Now().Before(at) {
	}
	return true
}

// Sleep sleeps for d precisely.
func Sleep(d time.Duration) {
	SleepUntil(context.Background(), time.Now().Add(d), DefaultSpin)
}
