// Package clock sleeps precisely. Go's timers wake up to ~1 ms late when the
// process is otherwise idle (the netpoller waits in whole milliseconds),
// which would add a millisecond of error to every paced send and every
// simulated engine step. SleepUntil sleeps on a timer until shortly before
// the deadline, then yields the processor in a loop until it is reached.
//
// Yielding (runtime.Gosched) rather than spinning hard, and not sleeping in
// the kernel on a locked thread, matter on small machines: a goroutine in a
// busy loop is only preempted after 10 ms, and a thread blocked in a system
// call keeps its processor until the runtime's monitor takes it back, which
// can also take up to 10 ms. Either would starve the network goroutines
// whose timing we measure. A yield loop costs only time the processor would
// otherwise spend idle.
package clock

import (
	"context"
	"runtime"
	"time"
)

// DefaultSpin is how long before a deadline SleepUntil stops trusting the
// timer: a little more than Go's timer lateness (≤ ~1.1 ms measured).
const DefaultSpin = 1200 * time.Microsecond

// SleepUntil blocks until at, or until ctx ends (reporting false). It yields
// through the last spin of the wait; spin 0 trusts the timer alone.
func SleepUntil(ctx context.Context, at time.Time, spin time.Duration) bool {
	if w := time.Until(at) - spin; w > 0 {
		t := time.NewTimer(w)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	for time.Now().Before(at) {
		if ctx.Err() != nil {
			return false
		}
		runtime.Gosched()
	}
	return ctx.Err() == nil
}

// Sleep sleeps for d precisely.
func Sleep(d time.Duration) {
	SleepUntil(context.Background(), time.Now().Add(d), DefaultSpin)
}
