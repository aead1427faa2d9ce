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

// Clock tells the time and sleeps until a deadline, yielding through the
// last spin of the wait where the implementation can.
type Clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, at time.Time, spin time.Duration) bool
}

// Precise is the real clock with SleepUntil's precise wake-up.
var Precise Clock = precise{}

type precise struct{}

func (precise) Now() time.Time { return time.Now() }
func (precise) SleepUntil(ctx context.Context, at time.Time, spin time.Duration) bool {
	return SleepUntil(ctx, at, spin)
}

// Timers sleeps on timers alone and ignores spin. It is for tests that run
// inside a testing/synctest bubble, where time only moves while every
// goroutine is blocked, so a yield loop would never see its deadline.
var Timers Clock = timers{}

type timers struct{}

func (timers) Now() time.Time { return time.Now() }
func (timers) SleepUntil(ctx context.Context, at time.Time, _ time.Duration) bool {
	return SleepUntil(ctx, at, 0)
}

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
