package clock

import (
	"context"
	"runtime"
	"time"
)

// Sleeper sleeps precisely at little CPU, for a loop that sleeps again and
// again (the simulator's engine steps). Where the kernel has timerfd, it
// waits on one through Go's network poller and on a Go timer at once: an
// idle process's epoll wakes as soon as the fd fires (tens of microseconds
// late) while its Go timers wait in epoll's whole milliseconds; a busy
// process checks its Go timers at every scheduling decision. It then
// yields through only the last sleeperSpin of the wait, instead of
// DefaultSpin. Elsewhere it is Sleep. One goroutine owns a Sleeper; Close
// releases it.
type Sleeper struct {
	fd *timerFD // nil: no timerfd here
}

// sleeperSpin covers a timerfd's lateness through the poller (p99 about
// 50 µs measured on an idle two-core machine).
const sleeperSpin = 80 * time.Microsecond

// NewSleeper returns a Sleeper.
func NewSleeper() *Sleeper {
	fd, err := newTimerFD()
	if err != nil {
		return &Sleeper{}
	}
	return &Sleeper{fd: fd}
}

// Sleep sleeps for d.
func (s *Sleeper) Sleep(d time.Duration) {
	if s.fd == nil {
		Sleep(d)
		return
	}
	at := time.Now().Add(d)
	if w := d - sleeperSpin; w > 0 && s.fd.wait(w) != nil {
		SleepUntil(context.Background(), at, DefaultSpin) // a broken fd: fall back
		return
	}
	for time.Now().Before(at) {
		runtime.Gosched()
	}
}

// Close releases the timer.
func (s *Sleeper) Close() {
	if s.fd != nil {
		s.fd.close()
	}
}
